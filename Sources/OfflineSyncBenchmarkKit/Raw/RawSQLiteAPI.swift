import CSQLiteBaseline
#if canImport(Glibc)
import Glibc
#endif

/// The `sqlite3_*` functions the raw SQL baselines call, as a table of C function pointers.
///
/// ``system`` points at the linked libsqlite3; ``loadSQLCipher(path:)`` fills the same table from
/// `libsqlcipher.so.0` loaded at run time with `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)`, so
/// SQLCipher is never linked at build time (linking both libraries silently disables encryption).
/// Both baselines then run exactly the same code, like the shared SQL engine does.
public struct RawSQLiteAPI: @unchecked Sendable {
    // @unchecked: the table holds only C function pointers and a dlopen handle that is never closed,
    // all immutable after creation and valid for the whole process.
    typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    typealias Close = @convention(c) (OpaquePointer?) -> Int32
    typealias Exec = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, (@convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32)?, UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    typealias Prepare = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    typealias StatementCall = @convention(c) (OpaquePointer?) -> Int32
    typealias BindText = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> Int32
    typealias BindInt64 = @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
    typealias BindDouble = @convention(c) (OpaquePointer?, Int32, Double) -> Int32
    typealias ColumnText = @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    typealias ColumnInt64 = @convention(c) (OpaquePointer?, Int32) -> Int64
    typealias ColumnDouble = @convention(c) (OpaquePointer?, Int32) -> Double
    typealias ColumnInt32 = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias ErrorMessage = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias LibraryVersion = @convention(c) () -> UnsafePointer<CChar>?
    typealias FreeMemory = @convention(c) (UnsafeMutableRawPointer?) -> Void

    let open: Open
    let close: Close
    let exec: Exec
    let prepare: Prepare
    let step: StatementCall
    let reset: StatementCall
    let finalize: StatementCall
    let bindText: BindText
    let bindInt64: BindInt64
    let bindDouble: BindDouble
    let columnText: ColumnText
    let columnBytes: ColumnInt32
    let columnInt64: ColumnInt64
    let columnDouble: ColumnDouble
    let errorMessage: ErrorMessage
    let libraryVersion: LibraryVersion
    let free: FreeMemory

    /// The name shown in reports: `sqlite` or `sqlcipher`.
    public let name: String

    /// The system SQLite linked into the process.
    public static let system = RawSQLiteAPI(
        open: sqlite3_open_v2, close: sqlite3_close_v2, exec: sqlite3_exec, prepare: sqlite3_prepare_v2,
        step: sqlite3_step, reset: sqlite3_reset, finalize: sqlite3_finalize,
        bindText: sqlite3_bind_text, bindInt64: sqlite3_bind_int64, bindDouble: sqlite3_bind_double,
        columnText: sqlite3_column_text, columnBytes: sqlite3_column_bytes,
        columnInt64: sqlite3_column_int64, columnDouble: sqlite3_column_double,
        errorMessage: sqlite3_errmsg, libraryVersion: sqlite3_libversion, free: sqlite3_free, name: "sqlite")

    /// The default location of Debian's SQLCipher library.
    public static let defaultSQLCipherPath = "libsqlcipher.so.0"

    /// Loads SQLCipher from `path` with `RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND` and fills the table
    /// with `dlsym`. Throws naming the path and the missing symbol when it cannot.
    public static func loadSQLCipher(path: String = defaultSQLCipherPath) throws -> RawSQLiteAPI {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw RawBaselineError("cannot load SQLCipher from '\(path)' (\(reason)); install libsqlcipher0")
        }
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let address = dlsym(handle, name) else {
                throw RawBaselineError("SQLCipher library '\(path)' has no symbol '\(name)'")
            }
            return unsafeBitCast(address, to: type)
        }
        return RawSQLiteAPI(
            open: try symbol("sqlite3_open_v2", as: Open.self),
            close: try symbol("sqlite3_close_v2", as: Close.self),
            exec: try symbol("sqlite3_exec", as: Exec.self),
            prepare: try symbol("sqlite3_prepare_v2", as: Prepare.self),
            step: try symbol("sqlite3_step", as: StatementCall.self),
            reset: try symbol("sqlite3_reset", as: StatementCall.self),
            finalize: try symbol("sqlite3_finalize", as: StatementCall.self),
            bindText: try symbol("sqlite3_bind_text", as: BindText.self),
            bindInt64: try symbol("sqlite3_bind_int64", as: BindInt64.self),
            bindDouble: try symbol("sqlite3_bind_double", as: BindDouble.self),
            columnText: try symbol("sqlite3_column_text", as: ColumnText.self),
            columnBytes: try symbol("sqlite3_column_bytes", as: ColumnInt32.self),
            columnInt64: try symbol("sqlite3_column_int64", as: ColumnInt64.self),
            columnDouble: try symbol("sqlite3_column_double", as: ColumnDouble.self),
            errorMessage: try symbol("sqlite3_errmsg", as: ErrorMessage.self),
            libraryVersion: try symbol("sqlite3_libversion", as: LibraryVersion.self),
            free: try symbol("sqlite3_free", as: FreeMemory.self),
            name: "sqlcipher")
    }

    /// The library's version string, e.g. `3.40.1` (SQLCipher 3.4.1 answers `3.15.2`).
    public var version: String {
        libraryVersion().map { String(cString: $0) } ?? "unknown"
    }
}

/// A failure of a raw baseline (a C call that returned an error), with the call and message.
public struct RawBaselineError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
