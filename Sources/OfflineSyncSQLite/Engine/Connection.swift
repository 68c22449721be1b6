import CSQLite
package import OfflineSync

/// One open SQLite database connection and its statement cache.
///
/// A connection is not thread-safe: ``SQLTableStore`` confines its writer behind a mutex and lends
/// each read-only connection to one read at a time, so one thread at a time uses a connection. Cached statements are keyed by their SQL text (which never contains values) and
/// finalised when the connection closes.
package final class Connection {
    /// The C API this connection calls.
    package let api: SQLiteAPI
    /// The database file.
    package let path: String
    package let handle: OpaquePointer
    private let publishesArguments: Bool
    private var statements: [String: Statement] = [:]
    private var isClosed = false

    /// Opens (creating if needed) the database file at `path` for reading and writing, or, with
    /// `readOnly`, opens the existing file for reading only.
    package init(api: SQLiteAPI, path: String, publishesArguments: Bool, readOnly: Bool = false) throws {
        self.api = api
        self.path = path
        self.publishesArguments = publishesArguments
        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let code = api.open_v2(path, &handle, access | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message =
                handle.flatMap { api.errmsg($0) }.map { String(cString: $0) }
                ?? api.errstr(code).map { String(cString: $0) } ?? "unknown error"
            if let handle { _ = api.close_v2(handle) }
            throw SQLiteError(
                code: SQLiteError.Code(rawValue: code & 0xff), extendedCode: code,
                sqliteMessage: message, context: "opening the database '\(path)'")
        }
        self.handle = handle
        _ = api.extended_result_codes(handle, 1)
    }

    deinit {
        close()
    }

    /// Finalises every cached statement and closes the database. Closing twice does nothing.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        _ = api.close_v2(handle)
    }

    /// Sets how long a statement waits for another connection's lock before failing with
    /// ``SQLiteError/Code/busy``.
    package func setBusyTimeout(milliseconds: Int32) {
        _ = api.busy_timeout(handle, milliseconds)
    }

    /// The most statements kept prepared; queries with many shapes (filters, `in` lists of
    /// varying length) would otherwise grow the cache without bound.
    static let cacheCapacity = 256

    /// The statement for `sql`, prepared once and then reused from the cache. When the cache is
    /// full it is emptied (a statement still in use lives on until its user releases it).
    package func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        if statements.count >= Connection.cacheCapacity { statements.removeAll() }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// A new statement that is not cached (for SQL that runs once).
    package func prepare(_ sql: String) throws -> Statement {
        var handle: OpaquePointer?
        let code = api.prepare_v2(self.handle, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw error(code: code, context: "preparing a statement on '\(path)'", sql: sql)
        }
        return Statement(handle: handle, sql: sql, connection: self)
    }

    /// Runs one statement to completion with cached preparation.
    package func execute(_ sql: String, _ arguments: [Value] = []) throws {
        try statement(sql).run(arguments)
    }

    /// Runs a statement and calls `row` for each result row.
    package func forEachRow(
        _ sql: String, _ arguments: [Value] = [], cached: Bool = true,
        _ row: (Statement) throws -> Void
    ) throws {
        let statement = cached ? try self.statement(sql) : try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step(arguments: arguments) {
            try row(statement)
        }
    }

    /// The first column of the first row as text, or `nil` when there is no row or it is NULL.
    package func singleText(_ sql: String, _ arguments: [Value] = []) throws -> String? {
        var result: String?
        try forEachRow(sql, arguments, cached: false) { statement in
            if result == nil, !statement.isNull(0) { result = statement.text(0) }
        }
        return result
    }

    /// The first `count` bytes of the main database file as they are on disk (encrypted, for
    /// SQLCipher), or `nil` when the file is shorter or cannot be read.
    ///
    /// They are read through SQLite's own file handle: opening the file a second time and closing
    /// it would release every POSIX lock this process holds on it, SQLite's included, and in WAL
    /// mode another process could then take this connection for gone and delete the WAL under it.
    package func fileHeader(count: Int) -> [UInt8]? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        let found = withUnsafeMutablePointer(to: &file) {
            api.file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, UnsafeMutableRawPointer($0))
        }
        guard found == SQLITE_OK, let file, let read = file.pointee.pMethods?.pointee.xRead else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let code = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), 0) }
        return code == SQLITE_OK ? bytes : nil
    }

    /// `true` when the database file this connection opened is no longer at its path: another
    /// process renamed or deleted it, or moved another file over it (`SQLITE_FCNTL_HAS_MOVED`).
    package var fileHasMoved: Bool {
        var moved: Int32 = 0
        let code = api.file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        return code == SQLITE_OK && moved != 0
    }

    /// `true` while a transaction is open (SQLite ends one by itself after some errors).
    package var isInTransaction: Bool { api.get_autocommit(handle) == 0 }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(api.changes(handle)) }

    /// Rolls back the open transaction, if any, ignoring "no transaction is active" (SQLite rolls
    /// back by itself after some errors, such as `SQLITE_FULL`).
    package func rollBack() {
        _ = try? execute("ROLLBACK")
    }

    /// An error for the result `code` of the last call on this connection.
    package func error(code: Int32, context: String, sql: String? = nil, arguments: [Value] = []) -> SQLiteError {
        let extended = api.extended_errcode(handle)
        let message = api.errmsg(handle).map { String(cString: $0) } ?? "unknown error"
        return SQLiteError(
            code: SQLiteError.Code(rawValue: code & 0xff),
            extendedCode: (extended & 0xff) == (code & 0xff) ? extended : code,
            sqliteMessage: message, context: context, sql: sql,
            arguments: publishesArguments && sql != nil ? arguments.map(\.description) : nil)
    }
}
