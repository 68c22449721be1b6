#ifndef OFFLINE_SYNC_CSQLITE_SHIM_H
#define OFFLINE_SYNC_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import as a macro.
/// The value is the same for every SQLite build (SQLCipher's included), so the engine passes it
/// to whichever library's bind functions it calls.
static inline sqlite3_destructor_type offline_sync_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
