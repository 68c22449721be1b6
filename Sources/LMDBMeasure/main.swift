// Measures LMDBStore against the raw LMDB C API in one process:
//   1. bulk upsert of N five-column items in one `LMDBStore.write` vs `mdb_put` of the same
//      encoded records in one raw transaction (same flags, same map size);
//   2. a filtered query over N items with and without an index on the filtered column.
// Run: swift run -c release LMDBMeasure [items] [--cpu] [--stages] [--bulk-only]
// (--bulk-only measures only the raw put and the upsert without index, e.g. under
// `valgrind --tool=callgrind`, where the two functions' instruction counts give the ratio.)
// (--cpu measures thread CPU time instead of wall-clock time; --stages also times
// normalisation, record encoding, and the two fused as the store does them, per item.)

import CLMDB
import Foundation
import OfflineSync
import OfflineSyncLMDB

let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 100_000
let repetitions = 7
let bulkOnly = CommandLine.arguments.contains("--bulk-only")
let mapSize = 1 << 30
let columns = [
    Column("title", .string), Column("rank", .integer), Column("score", .double),
    Column("due", .date), Column("done", .bool),
]
let plain = TableSchema("bench", columns: columns, synced: false)
let indexed = TableSchema("bench", columns: columns, indexes: [Index("byRank", on: ["rank"])], synced: false)

func benchItem(_ number: Int) -> Item {
    var values: [String: Value] = [:]
    values["title"] = .string("title of item \(number)")
    values["rank"] = .int(Int64(number % 1000))
    values["score"] = .double(Double(number) / 7)
    values["due"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(number)))
    values["done"] = .bool(number % 3 == 0)
    return Item(id: String(format: "item-%08d", number), values: values)
}
let items = (0..<count).map(benchItem)

/// Wall-clock time, or with `--cpu` the CPU time of this thread (robust on a loaded machine,
/// but blind to time spent waiting for the disk).
let clock = CommandLine.arguments.contains("--cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC
let clockName = CommandLine.arguments.contains("--cpu") ? "thread CPU time" : "wall-clock time"

func seconds(_ body: () throws -> Void) rethrows -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(clock, &start)
    try body()
    clock_gettime(clock, &end)
    return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
}

func scratch(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "lmdb-measure-\(getpid())-\(name)"
    try? FileManager.default.removeItem(atPath: path)
    return path
}

func check(_ code: Int32, _ what: String) {
    guard code == 0 else {
        FileHandle.standardError.write(Data("\(what) failed: \(String(cString: mdb_strerror(code)))\n".utf8))
        exit(1)
    }
}

/// The raw baseline: the records LMDBStore would write, put with `mdb_put` in one transaction.
func rawPut(_ records: [(key: [UInt8], value: [UInt8])], at path: String) -> Double {
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    var env: OpaquePointer?
    check(mdb_env_create(&env), "mdb_env_create")
    check(mdb_env_set_maxdbs(env, 1024), "mdb_env_set_maxdbs")
    check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
    check(mdb_env_open(env, path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
    defer { mdb_env_close(env) }
    return seconds {
        var txn: OpaquePointer?
        check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        var dbi: MDB_dbi = 0
        check(mdb_dbi_open(txn, "items:bench", UInt32(MDB_CREATE), &dbi), "mdb_dbi_open")
        for record in records {
            record.key.withUnsafeBytes { key in
                record.value.withUnsafeBytes { value in
                    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
                    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
                    check(mdb_put(txn, dbi, &k, &v, 0), "mdb_put")
                }
            }
        }
        check(mdb_txn_commit(txn), "mdb_txn_commit")
    }
}

func storeUpsert(_ schema: TableSchema, at path: String) throws -> Double {
    let store = try LMDBStore(path: path, options: .init(initialMapSize: mapSize))
    try store.open(schema: StoreSchema([schema]))
    defer { try? store.close() }
    return try seconds { try store.write { try $0.upsert(items, into: "bench", origin: .local) } }
}

let ordinals = RecordCodec.ColumnOrdinals(plain.columns.map(\.name))
let records = items.map { item -> (key: [UInt8], value: [UInt8]) in
    var buffer: [UInt8] = []
    RecordCodec.encode(item, columns: ordinals, into: &buffer)
    return (Array(item.id.utf8), buffer)
}

if CommandLine.arguments.contains("--stages") {
    var normalized: [Item] = []
    let n = try seconds { normalized = try items.map { try plain.normalize($0, origin: .local) } }
    var writer = RecordWriter()
    let e = seconds { for item in normalized { RecordCodec.encode(item, columns: ordinals, into: &writer) } }
    let f = try seconds {
        for item in items {
            writer.begin()
            try plain.forEachStoredValue(of: item, origin: .local) { writer.append(ordinal: $0, $1) }
        }
    }
    print(
        "normalize \(n / Double(count) * 1e9) ns/item, encode \(e / Double(count) * 1e9) ns/item, "
            + "checked encode in one walk (the store's path) \(f / Double(count) * 1e9) ns/item")
}
var raw: [Double] = []
var store: [Double] = []
var storeIndexed: [Double] = []
for round in 0..<repetitions {
    raw.append(rawPut(records, at: scratch("raw-\(round)")))
    store.append(try storeUpsert(plain, at: scratch("store-\(round)")))
    if !bulkOnly { storeIndexed.append(try storeUpsert(indexed, at: scratch("indexed-\(round)"))) }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func rates(_ times: [Double]) -> (median: Double, best: Double) {
    (Double(count) / median(times), Double(count) / (times.min() ?? .infinity))
}
let rawRates = rates(raw)
print(
    "bulk upsert of \(count) five-column items, one transaction each, \(repetitions) interleaved rounds, \(clockName) (rows/s):"
)
print("                                      median       best   ratio to raw (median, best)")
for (name, times) in [
    ("raw mdb_put of encoded records", raw), ("LMDBStore.write { upsert }", store),
    ("same, with one index on rank", storeIndexed),
] where !times.isEmpty {
    let measured = rates(times)
    print(
        "  " + name.padding(toLength: 32, withPad: " ", startingAt: 0)
            + String(
                format: "%10.0f %10.0f   %.2fx, %.2fx", measured.median, measured.best,
                measured.median / rawRates.median, measured.best / rawRates.best))
}

func queryCost(_ schema: TableSchema, label: String) throws {
    let path = scratch("query-\(label)")
    let store = try LMDBStore(path: path, options: .init(initialMapSize: mapSize))
    try store.open(schema: StoreSchema([schema]))
    defer {
        try? store.close()
        try? FileManager.default.removeItem(atPath: path)
    }
    try store.write { try $0.upsert(items, into: "bench", origin: .local) }
    let queries: [(String, Query)] = [
        ("rank eq 42 (0.1%)", Query(table: "bench", filter: .comparison(.column("rank"), .eq, .literal(42)))),
        ("rank lt 10 (1%)", Query(table: "bench", filter: .comparison(.column("rank"), .lt, .literal(10)))),
        (
            "rank ge 42, top 10 by rank",
            Query(
                table: "bench", filter: .comparison(.column("rank"), .ge, .literal(42)), orderBy: [SortKey("rank")],
                top: 10)
        ),
    ]
    for (name, query) in queries {
        var rows = 0
        var times: [Double] = []
        for _ in 0..<repetitions {
            times.append(try seconds { rows = try store.read(query).items.count })
        }
        let padded = (name + " [" + label + "]").padding(toLength: 40, withPad: " ", startingAt: 0)
        print("  " + padded + String(format: "%10.3f ms  (%d rows)", median(times) * 1000, rows))
    }
}
if !bulkOnly {
    print("filtered query over \(count) items, median of \(repetitions), \(clockName):")
    try queryCost(indexed, label: "index")
    try queryCost(plain, label: "scan")
}
for round in 0..<repetitions {
    for name in ["raw", "store", "indexed"] { try? FileManager.default.removeItem(atPath: scratch("\(name)-\(round)")) }
}
