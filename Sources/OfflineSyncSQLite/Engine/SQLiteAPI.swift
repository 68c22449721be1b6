import CSQLite

/// The SQLite C functions the shared SQL engine calls, as a table of function pointers.
///
/// The engine never calls a `sqlite3_*` symbol directly: it calls through a table, so one engine
/// serves two libraries in one process. ``system`` is filled from the linked system SQLite;
/// `OfflineSyncSQLCipher` fills a table with `dlsym` from a `libsqlcipher.so.0` loaded with
/// `RTLD_DEEPBIND`, whose symbols have the same names and would otherwise collide (docs/ARCHITECTURE.md,
/// "Facts that constrain the backends", 1). Only functions that SQLite 3.15 also has are listed.
package struct SQLiteAPI: Sendable {
    /// A destructor argument of the `sqlite3_bind_*` functions.
    package typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void

    package var open_v2:
        @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) ->
            Int32
    package var close_v2: @convention(c) (OpaquePointer?) -> Int32
    package var errmsg: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    package var errstr: @convention(c) (Int32) -> UnsafePointer<CChar>?
    package var extended_errcode: @convention(c) (OpaquePointer?) -> Int32
    package var extended_result_codes: @convention(c) (OpaquePointer?, Int32) -> Int32
    package var busy_timeout: @convention(c) (OpaquePointer?, Int32) -> Int32
    package var changes: @convention(c) (OpaquePointer?) -> Int32
    package var get_autocommit: @convention(c) (OpaquePointer?) -> Int32
    package var libversion: @convention(c) () -> UnsafePointer<CChar>?
    package var prepare_v2:
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
            UnsafeMutablePointer<UnsafePointer<CChar>?>?
        ) -> Int32
    package var step: @convention(c) (OpaquePointer?) -> Int32
    package var reset: @convention(c) (OpaquePointer?) -> Int32
    package var clear_bindings: @convention(c) (OpaquePointer?) -> Int32
    package var finalize: @convention(c) (OpaquePointer?) -> Int32
    package var bind_null: @convention(c) (OpaquePointer?, Int32) -> Int32
    package var bind_int64: @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
    package var bind_double: @convention(c) (OpaquePointer?, Int32, Double) -> Int32
    package var bind_text: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Destructor?) -> Int32
    package var column_type: @convention(c) (OpaquePointer?, Int32) -> Int32
    package var column_int64: @convention(c) (OpaquePointer?, Int32) -> Int64
    package var column_double: @convention(c) (OpaquePointer?, Int32) -> Double
    package var column_text: @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    package var column_bytes: @convention(c) (OpaquePointer?, Int32) -> Int32
    package var file_control: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Int32

    /// The destructor value that tells SQLite to copy bound text before the bind call returns.
    /// It is the same for every SQLite build, SQLCipher's included.
    package static let transient: Destructor? = offline_sync_sqlite_transient()

    /// The library's version, e.g. `3.40.1`.
    package var version: String {
        libversion().map { String(cString: $0) } ?? "unknown"
    }

    /// Whether `sqlite3_changes` counts the rows of a `DELETE` without a `WHERE` clause on a
    /// `WITHOUT ROWID` table: SQLite 3.40 does; SQLCipher 3.4.1's SQLite 3.15.2 answers 0 (its
    /// truncate optimisation skips the count). Versions before 3.40 are taken not to.
    package var countsTruncatedRows: Bool {
        let parts = version.split(separator: ".").prefix(2).compactMap { Int($0) }
        guard parts.count == 2 else { return false }
        return parts[0] > 3 || (parts[0] == 3 && parts[1] >= 40)
    }

    /// The system SQLite this module links (pkg-config `sqlite3`).
    package static let system = SQLiteAPI(
        open_v2: sqlite3_open_v2, close_v2: sqlite3_close_v2, errmsg: sqlite3_errmsg, errstr: sqlite3_errstr,
        extended_errcode: sqlite3_extended_errcode, extended_result_codes: sqlite3_extended_result_codes,
        busy_timeout: sqlite3_busy_timeout, changes: sqlite3_changes, get_autocommit: sqlite3_get_autocommit,
        libversion: sqlite3_libversion,
        prepare_v2: sqlite3_prepare_v2, step: sqlite3_step, reset: sqlite3_reset,
        clear_bindings: sqlite3_clear_bindings, finalize: sqlite3_finalize,
        bind_null: sqlite3_bind_null, bind_int64: sqlite3_bind_int64, bind_double: sqlite3_bind_double,
        bind_text: sqlite3_bind_text, column_type: sqlite3_column_type,
        column_int64: sqlite3_column_int64, column_double: sqlite3_column_double,
        column_text: sqlite3_column_text, column_bytes: sqlite3_column_bytes, file_control: sqlite3_file_control)
}

extension SQLiteAPI {
    /// Fills the table from a library loaded at run time: `symbol` answers the address of a
    /// `sqlite3_*` function by name (with `dlsym`) or throws naming the missing one.
    package init(resolving symbol: (String) throws -> UnsafeMutableRawPointer) throws {
        func load<Function>(_ name: String) throws -> Function {
            unsafeBitCast(try symbol("sqlite3_" + name), to: Function.self)
        }
        self.init(
            open_v2: try load("open_v2"), close_v2: try load("close_v2"), errmsg: try load("errmsg"),
            errstr: try load("errstr"), extended_errcode: try load("extended_errcode"),
            extended_result_codes: try load("extended_result_codes"), busy_timeout: try load("busy_timeout"),
            changes: try load("changes"), get_autocommit: try load("get_autocommit"),
            libversion: try load("libversion"), prepare_v2: try load("prepare_v2"),
            step: try load("step"), reset: try load("reset"), clear_bindings: try load("clear_bindings"),
            finalize: try load("finalize"), bind_null: try load("bind_null"), bind_int64: try load("bind_int64"),
            bind_double: try load("bind_double"), bind_text: try load("bind_text"),
            column_type: try load("column_type"), column_int64: try load("column_int64"),
            column_double: try load("column_double"), column_text: try load("column_text"),
            column_bytes: try load("column_bytes"), file_control: try load("file_control"))
    }
}
