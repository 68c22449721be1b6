import OfflineSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shared SQL engine's ``OfflineSync/LocalStore`` logic, used by ``SQLiteStore`` and by
/// `SQLCipherStore` with their own C API table and hooks.
///
/// One connection per store, confined behind a `Mutex`: every call (reads included) runs while
/// holding it, so the non-thread-safe connection and its statement cache are never used by two
/// threads at once, and write transactions are serialised (rule 6 of `LocalStore`).
package final class SQLTableStore: Sendable {
    /// What differs between the backends that share the engine.
    package struct Backend: Sendable {
        /// The scheme name shown in ``OfflineSync/StoreInfo`` (`sqlite`, `sqlcipher`).
        package var name: String
        /// The C API to call.
        package var api: SQLiteAPI
        /// Runs right after the connection opens, before anything reads the file (SQLCipher keys
        /// the connection and checks the key here).
        package var didOpen: @Sendable (Connection) throws -> Void
        /// Runs after the schema is installed (SQLCipher checks the file header here).
        package var didInstall: @Sendable (Connection) throws -> Void
        /// Extra facts for ``OfflineSync/StoreInfo``.
        package var properties: @Sendable () -> [StoreInfo.Property]

        /// Creates a backend description.
        package init(
            name: String, api: SQLiteAPI,
            didOpen: @escaping @Sendable (Connection) throws -> Void = { _ in },
            didInstall: @escaping @Sendable (Connection) throws -> Void = { _ in },
            properties: @escaping @Sendable () -> [StoreInfo.Property] = { [] }
        ) {
            self.name = name
            self.api = api
            self.didOpen = didOpen
            self.didInstall = didInstall
            self.properties = properties
        }
    }

    private struct State {
        var connection: Connection?
        var schema = StoreSchema([])
        var layouts: [String: TableLayout] = [:]
    }

    /// The database file.
    package let path: String
    /// The storage settings.
    package let options: SQLStoreOptions
    private let backend: Backend
    private let state = Mutex(State())

    /// Creates a closed store for the file at `path`.
    package init(path: String, options: SQLStoreOptions, backend: Backend) {
        self.path = path
        self.options = options
        self.backend = backend
    }

    /// The version of the SQLite library the store calls.
    package var sqliteVersion: String { backend.api.version }

    /// Backend name, path, library version and settings.
    package var info: StoreInfo {
        StoreInfo(
            backend: backend.name, location: path,
            properties: [
                StoreInfo.Property("SQLite version", sqliteVersion)
            ] + backend.properties() + [
                StoreInfo.Property("journal mode", "wal"),
                StoreInfo.Property("synchronous", options.durability.rawValue),
                StoreInfo.Property("cache size", "\(options.cacheSizeKiB) KiB"),
                StoreInfo.Property("busy timeout", "\(options.busyTimeoutMilliseconds) ms"),
            ])
    }

    /// See ``OfflineSync/LocalStore/schema``.
    package var schema: StoreSchema {
        get throws {
            try state.withLock { state in
                _ = try requireOpen(state)
                return state.schema
            }
        }
    }

    /// See ``OfflineSync/LocalStore/open(schema:)``.
    package func open(schema: StoreSchema) throws {
        try schema.validate()
        try state.withLock { state in
            guard state.connection == nil else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the \(backend.name) store '\(path)' is already open; close it before opening it again")
            }
            do {
                try open(schema: schema, into: &state, exclusive: false)
            } catch let error as SQLiteError where SQLTableStore.sharedMemoryFailures.contains(error.extendedCode) {
                // The WAL index (`-shm` file) cannot be created, typically because the disk is
                // full: in exclusive locking mode SQLite keeps the index in memory instead, so
                // the store still opens and reads (other processes wait until it is closed).
                try open(schema: schema, into: &state, exclusive: true)
            }
        }
    }

    /// `SQLITE_IOERR_SHMOPEN`, `SQLITE_IOERR_SHMSIZE`, `SQLITE_IOERR_SHMMAP`: the shared-memory WAL
    /// index could not be created or grown.
    static let sharedMemoryFailures: Set<Int32> = [4618, 4874, 5386]

    private func open(schema: StoreSchema, into state: inout State, exclusive: Bool) throws {
        let connection = try Connection(
            api: backend.api, path: path, publishesArguments: options.publicStatementArguments)
        do {
            connection.setBusyTimeout(milliseconds: Int32(clamping: options.busyTimeoutMilliseconds))
            if exclusive { _ = try connection.singleText("PRAGMA locking_mode = EXCLUSIVE") }
            try backend.didOpen(connection)
            try configure(connection)
            let stored = try connection.install(schema)
            try backend.didInstall(connection)
            state.schema = stored
            state.layouts = Dictionary(uniqueKeysWithValues: stored.tables.map { ($0.name, TableLayout($0)) })
            state.connection = connection
        } catch {
            connection.close()
            throw error
        }
    }

    private func configure(_ connection: Connection) throws {
        let mode = try whileBusy { try connection.singleText("PRAGMA journal_mode = WAL") }
        guard mode?.lowercased() == "wal" else {
            throw OfflineSyncError(
                .storage,
                "the \(backend.name) store '\(path)' could not switch to WAL mode (journal mode is '\(mode ?? "none")'); use a file on a local file system"
            )
        }
        try connection.execute("PRAGMA synchronous = \(options.durability == .full ? "FULL" : "NORMAL")")
        try connection.execute("PRAGMA cache_size = \(-max(options.cacheSizeKiB, 1))")
        if let pages = options.maximumPageCount {
            _ = try connection.singleText("PRAGMA max_page_count = \(max(pages, 1))")
        }
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY`, for up to the busy timeout.
    ///
    /// Switching a new database to WAL while another process does the same can fail with
    /// `SQLITE_BUSY` at once, without SQLite calling the busy handler (the lock is requested in
    /// a way that must not wait); this waits as the busy timeout promises instead.
    private func whileBusy<Result>(_ body: () throws -> Result) throws -> Result {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(options.busyTimeoutMilliseconds))
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.code == .busy && ContinuousClock.now < deadline {
                usleep(10_000)
            }
        }
    }

    /// See ``OfflineSync/LocalStore/read(_:)``. A query with a total count reads the page and the
    /// count in one read transaction, so both see the same rows.
    package func read(_ query: Query) throws -> QueryResult {
        try state.withLock { state in
            let connection = try requireOpen(state)
            let layout = try SQLTableStore.layout(query.table, in: state.schema, state.layouts)
            guard query.includeTotalCount else {
                return try SQLTableStore.read(query, on: layout, connection)
            }
            try connection.execute("BEGIN")
            do {
                let result = try SQLTableStore.read(query, on: layout, connection)
                try connection.execute("COMMIT")
                return result
            } catch {
                connection.rollBack()
                throw error
            }
        }
    }

    /// See ``OfflineSync/LocalStore/lookup(table:id:)``.
    package func lookup(table: String, id: String) throws -> Item? {
        try state.withLock { state in
            let connection = try requireOpen(state)
            let layout = try SQLTableStore.layout(table, in: state.schema, state.layouts)
            return try SQLTableStore.lookup(id, on: layout, connection)
        }
    }

    /// See ``OfflineSync/LocalStore/write(_:)``: `BEGIN IMMEDIATE` (the write lock is taken up
    /// front, so the transaction cannot fail half-way on a lock upgrade), `COMMIT` when `body`
    /// returns, `ROLLBACK` when it or the commit throws.
    package func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try state.withLock { state in
            let connection = try requireOpen(state)
            try connection.execute("BEGIN IMMEDIATE")
            let transaction = Transaction(connection: connection, schema: state.schema, layouts: state.layouts)
            defer { transaction.isActive = false }
            do {
                let result = try body(transaction)
                try connection.execute("COMMIT")
                return result
            } catch {
                connection.rollBack()
                throw error
            }
        }
    }

    /// See ``OfflineSync/LocalStore/close()``.
    package func close() {
        state.withLock { state in
            state.connection?.close()
            state.connection = nil
        }
    }

    /// Runs `body` with the open connection (for backend operations such as rekey and export).
    package func withConnection<Result: Sendable>(_ body: @Sendable (Connection) throws -> Result) throws -> Result {
        try state.withLock { state in
            try body(try requireOpen(state))
        }
    }

    private func requireOpen(_ state: State) throws -> Connection {
        guard let connection = state.connection else {
            throw OfflineSyncError(
                .notOpen, "the \(backend.name) store '\(path)' is not open; call open(schema:) first")
        }
        return connection
    }

    static func layout(_ table: String, in schema: StoreSchema, _ layouts: [String: TableLayout]) throws -> TableLayout
    {
        if let layout = layouts[table] { return layout }
        _ = try schema.requireTable(table)
        throw OfflineSyncError(
            .unknownTable, "table '\(table)' is not declared; declare it in the schema before opening the store")
    }

    /// The answer to a query: in SQL when it translates exactly and SQLite
    /// accepts the statement, otherwise by ``OfflineSync/QueryEvaluator`` over the rows SQL can
    /// narrow down (see ``SQLQuery``).
    static func read(_ query: Query, on layout: TableLayout, _ connection: Connection) throws -> QueryResult {
        try query.validate(against: layout.schema)
        let columns = layout.columns(selecting: query.selection)
        if let select = SQLQuery.select(query, on: layout, columns: columns.columns),
            let answer = try unlessTooComplex({ try read(select, query, on: layout, columns: columns, connection) }),
            let answer
        {
            return answer
        }
        // Only the matching rows are kept while scanning, so a large table costs no more memory
        // than the answer.
        let evaluator = try QueryEvaluator(query: query, schema: layout.schema)
        let candidates = SQLQuery.candidates(query, on: layout)
        var matches: [Item] = []
        func keepMatch(_ statement: Statement) {
            let item = layout.decode(statement, columns: layout.allColumns)
            if evaluator.matches(item) { matches.append(item) }
        }
        if try unlessTooComplex({ try connection.forEachRow(candidates.sql, candidates.arguments, keepMatch) }) == nil {
            matches = []
            try connection.forEachRow(layout.scanSQL, [], keepMatch)
        }
        return evaluator.run(over: matches)
    }

    /// The page (and count) of a query in SQL; `nil` when the count has no exact translation.
    private static func read(
        _ select: SQLQuery, _ query: Query, on layout: TableLayout, columns: ResultColumns, _ connection: Connection
    ) throws -> QueryResult? {
        var total: Int?
        if query.includeTotalCount {
            guard let count = SQLQuery.count(query, on: layout) else { return nil }
            try connection.forEachRow(count.sql, count.arguments) { total = Int($0.int64(0)) }
        }
        var items: [Item] = []
        try connection.forEachRow(select.sql, select.arguments) { items.append(layout.decode($0, columns: columns)) }
        return QueryResult(items: items, totalCount: total)
    }

    /// `body`'s result, or `nil` when SQLite refused a statement as too complex to prepare
    /// (``SQLiteError/isStatementTooComplex``), so that the caller can answer in Swift.
    static func unlessTooComplex<Result>(_ body: () throws -> Result) throws -> Result? {
        do {
            return try body()
        } catch let error as SQLiteError where error.isStatementTooComplex {
            return nil
        }
    }

    static func lookup(_ id: String, on layout: TableLayout, _ connection: Connection) throws -> Item? {
        var item: Item?
        try connection.forEachRow(layout.lookupSQL, [.string(id)]) {
            item = layout.decode($0, columns: layout.allColumns)
        }
        return item
    }
}
