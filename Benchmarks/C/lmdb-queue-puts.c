/*
 * The LMDB floor of a batched enqueue, in C: 10,000 inserts in one write transaction, each
 * writing what the raw baseline writes (an item and an 8-byte queue key) or what the LMDB store
 * writes (an item, its operation row under "=items|<id>" and the sequence-index key), with
 * ordinary puts or appended. Prints the median and fastest CPU time of 15 rounds per way.
 *
 *   cc -O2 Benchmarks/C/lmdb-queue-puts.c -o /tmp/lmdb-queue-puts -llmdb && /tmp/lmdb-queue-puts
 *
 * BENCHMARKS.md, "The operation queue", has the figures and what the store took from them.
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { INSERTS = 10000, ROUNDS = 15, WAYS = 4 };

static const char *names[WAYS] = {
    "raw baseline: item + queue key (mdb_put, queue key MDB_APPEND)",
    "store: item + operation row + sequence key (mdb_put, MDB_NOOVERWRITE)",
    "store: the same three, mdb_put with MDB_APPEND",
    "store: the same three, mdb_cursor_put with MDB_APPEND, one cursor per sub-database",
};

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what, int code) {
    fprintf(stderr, "%s: %s\n", what, mdb_strerror(code));
    exit(1);
}

static void put(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, MDB_val *key, MDB_val *value, unsigned flags) {
    int code = cursor ? mdb_cursor_put(cursor, key, value, flags) : mdb_put(txn, dbi, key, value, flags);
    if (code) fail("put", code);
}

/* One round of one way in a fresh environment; returns CPU seconds of the transaction. */
static double run(int way, const char *directory) {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi items, operations, sequence;
    int code;
    mkdir(directory, 0755);
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 8);
    mdb_env_set_mapsize(env, 1UL << 32);
    if ((code = mdb_env_open(env, directory, MDB_NOTLS | MDB_NOSYNC, 0644))) fail("mdb_env_open", code);
    mdb_txn_begin(env, NULL, 0, &txn);
    mdb_dbi_open(txn, "items", MDB_CREATE, &items);
    mdb_dbi_open(txn, "operations", MDB_CREATE, &operations);
    mdb_dbi_open(txn, "sequence", MDB_CREATE, &sequence);
    mdb_txn_commit(txn);

    char record[90];
    memset(record, 7, sizeof record);
    double start = cpu_seconds();
    mdb_txn_begin(env, NULL, 0, &txn);
    MDB_cursor *cursors[3] = {NULL, NULL, NULL};
    if (way == 3) {
        mdb_cursor_open(txn, items, &cursors[0]);
        mdb_cursor_open(txn, operations, &cursors[1]);
        mdb_cursor_open(txn, sequence, &cursors[2]);
    }
    unsigned flags = way == 1 ? MDB_NOOVERWRITE : (way >= 2 ? MDB_APPEND : 0);
    for (int i = 0; i < INSERTS; i++) {
        char id[32], operation[48], index[64];
        int idLength = snprintf(id, sizeof id, "item-%06d", i);
        unsigned long long number = __builtin_bswap64((unsigned long long)i + 1);
        MDB_val key = {idLength, id}, value = {sizeof record, record};
        put(txn, items, cursors[0], &key, &value, flags);
        if (way == 0) {
            MDB_val queueKey = {8, &number}, queueValue = {idLength, id};
            put(txn, operations, NULL, &queueKey, &queueValue, MDB_APPEND);
            continue;
        }
        int operationLength = snprintf(operation, sizeof operation, "=items|%s", id);
        MDB_val operationKey = {operationLength, operation}, operationValue = {80, record};
        put(txn, operations, cursors[1], &operationKey, &operationValue, flags);
        memcpy(index, &number, 8);
        memcpy(index + 8, operation, operationLength);
        MDB_val indexKey = {8 + operationLength, index}, empty = {0, NULL};
        put(txn, sequence, cursors[2], &indexKey, &empty, flags);
    }
    if ((code = mdb_txn_commit(txn))) fail("mdb_txn_commit", code);
    double seconds = cpu_seconds() - start;
    mdb_env_close(env);
    return seconds;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    char base[] = "/tmp/lmdb-queue-puts-XXXXXX";
    if (!mkdtemp(base)) return 1;
    double seconds[WAYS][ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int way = 0; way < WAYS; way++) {
            char directory[128], command[160];
            snprintf(directory, sizeof directory, "%s/%d-%d", base, way, round);
            seconds[way][round] = run(way, directory);
            snprintf(command, sizeof command, "rm -rf '%s'", directory);
            if (system(command) != 0) return 1;
        }
    }
    for (int way = 0; way < WAYS; way++) {
        qsort(seconds[way], ROUNDS, sizeof(double), ascending);
        printf("%-86s median %5.2f ms, fastest %5.2f ms\n", names[way], seconds[way][ROUNDS / 2] * 1e3,
            seconds[way][0] * 1e3);
    }
    rmdir(base);
    return 0;
}
