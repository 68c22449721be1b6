package import OfflineSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    package import Darwin
#endif

/// The shared SQL engine's ``OfflineSync/LocalStore`` logic, used by ``SQLiteStore`` and by
/// `SQLCipherStore` with their own C API table and hooks.
///
/// Connections (none of them is used by two threads at once):
/// - **one writer**, confined behind a lock: every write transaction runs while holding it, so
///   writes are serialised (rule 6 of `LocalStore`);
/// - **a small pool of read-only connections** (``SQLStoreOptions/readConnections``, opened on
///   first use): `read` and `lookup` borrow one, so reads run at the same time as each other and
///   as a write (WAL mode: a reader sees the last commit before its read transaction began, never
///   a transaction in progress). A read runs in one read transaction, so all its statements (the
///   page, the count, a scan evaluated in Swift) see one snapshot. An in-memory database
///   (`:memory:` or an empty path), a store opened in exclusive locking mode (the disk-full
///   fallback) and a pool of size 0 read on the writer instead, as does every read after a read
///   connection could not be opened (until the store is reopened);
/// - **a gate** (readers–writer lock) held shared by every call and exclusively by `open`,
///   `close` and ``withConnection(_:)``, so the connections are never closed, rekeyed or widened
///   under a call in progress.
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
        /// `PRAGMA schema_version` right after the schema was installed (see ``storedSchemaChanged()``).
        var schemaCookie: String?
    }

    /// What reads need to know, changed only while the gate is held exclusively (and when a read
    /// connection cannot be opened).
    private struct Catalog {
        var isOpen = false
        var schema = StoreSchema([])
        var layouts: [String: TableLayout] = [:]
        /// Reads borrow a connection of the pool (else they run on the writer).
        var pooledReads = false
        /// See ``State/schemaCookie``.
        var schemaCookie: String?
    }

    /// The database file.
    package let path: String
    /// The storage settings.
    package let options: SQLStoreOptions
    private let backend: Backend
    /// The writer connection and the schema it installed.
    private let state = Locked(State())
    private let catalog = Locked(Catalog())
    private let readers: ReaderPool
    private let gate = ReadWriteLock()

    /// Creates a closed store for the file at `path`.
    package init(path: String, options: SQLStoreOptions, backend: Backend) {
        self.path = path
        self.options = options
        self.backend = backend
        readers = ReaderPool(capacity: SQLTableStore.isInMemory(path) ? 0 : options.readConnections)
    }

    /// `true` for a database that lives in its connection's memory (each connection would get a
    /// database of its own, so such a store has no read connections).
    static func isInMemory(_ path: String) -> Bool {
        path.isEmpty || path == ":memory:" || path.hasPrefix("file::memory:") || path.contains("mode=memory")
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
                StoreInfo.Property("read connections", "\(readers.capacity)"),
            ])
    }

    /// See ``OfflineSync/LocalStore/schema``.
    package var schema: StoreSchema {
        get throws {
            try catalog.withLock { catalog in
                guard catalog.isOpen else { throw notOpenError }
                return catalog.schema
            }
        }
    }

    /// See ``OfflineSync/LocalStore/open(schema:)``.
    package func open(schema: StoreSchema) throws {
        try schema.validate(reservedPrefixes: Self.reservedNamePrefixes)
        for table in schema.tables where table.columns.count + 1 > Self.maximumColumnCount {
            throw OfflineSyncError(
                .invalidSchema,
                "table '\(table.name)' has \(table.columns.count + 1) columns, its id and system columns included; an \(backend.name) table holds at most \(Self.maximumColumnCount) (SQLITE_MAX_COLUMN): declare fewer, or keep related values together in a json column"
            )
        }
        try gate.exclusive {
            let opened = try state.withLock { state in
                guard state.connection == nil else {
                    throw OfflineSyncError(
                        .invalidOperation,
                        "the \(backend.name) store '\(path)' is already open; close it before opening it again")
                }
                do {
                    try open(schema: schema, into: &state, exclusive: false)
                    return Catalog(
                        isOpen: true, schema: state.schema, layouts: state.layouts, pooledReads: readers.capacity > 0,
                        schemaCookie: state.schemaCookie)
                } catch let error as SQLiteError
                    where SQLTableStore.sharedMemoryFailures.contains(error.extendedCode)
                {
                    // The WAL index (`-shm` file) cannot be created, typically because the disk is
                    // full: in exclusive locking mode SQLite keeps the index in memory instead, so
                    // the store still opens and reads (other processes wait until it is closed,
                    // and so would read connections: reads use the writer).
                    try open(schema: schema, into: &state, exclusive: true)
                    return Catalog(
                        isOpen: true, schema: state.schema, layouts: state.layouts, pooledReads: false,
                        schemaCookie: state.schemaCookie)
                }
            }
            readers.closeAll()
            catalog.withLock { $0 = opened }
        }
    }

    /// `SQLITE_IOERR_SHMOPEN`, `SQLITE_IOERR_SHMSIZE`, `SQLITE_IOERR_SHMMAP`: the shared-memory WAL
    /// index could not be created or grown.
    static let sharedMemoryFailures: Set<Int32> = [4618, 4874, 5386]

    /// The most columns, the id included, of one table: `SQLITE_MAX_COLUMN` as SQLite and SQLCipher
    /// are built by default (Debian's libraries included). Checked before SQLite sees the schema, so
    /// that a wider table fails naming the limit instead of quoting its whole `CREATE TABLE`.
    package static let maximumColumnCount = 2000

    /// SQLite reserves names starting with `sqlite_` (in any letter case) for its internal tables.
    package static let reservedNamePrefixes = ["sqlite_"]

    private func open(schema: StoreSchema, into state: inout State, exclusive: Bool) throws {
        try DatabaseFileCheck.check(path: path, backend: backend.name)
        let connection = try Connection(
            api: backend.api, path: path, publishesArguments: options.publicStatementArguments)
        do {
            connection.setBusyTimeout(milliseconds: Int32(clamping: options.busyTimeoutMilliseconds))
            if exclusive { _ = try connection.singleText("PRAGMA locking_mode = EXCLUSIVE") }
            try backend.didOpen(connection)
            try configure(connection)
            let stored = try connection.install(schema)
            try backend.didInstall(connection)
            state.schemaCookie = try SQLTableStore.schemaCookie(on: connection)
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
        // An in-memory database has no WAL (its journal mode stays `memory`) and no other
        // connection to share it with: it reads on its one connection.
        guard mode?.lowercased() == "wal" || (SQLTableStore.isInMemory(path) && mode?.lowercased() == "memory") else {
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

    /// See ``OfflineSync/LocalStore/read(_:)``. The page and the count (and any scan evaluated in
    /// Swift) are read in one read transaction, so all of them see the same rows.
    package func read(_ query: Query) throws -> QueryResult {
        try gate.shared {
            let (layout, pooled) = try catalog.withLock { catalog in
                guard catalog.isOpen else { throw notOpenError }
                return (try SQLTableStore.layout(query.table, in: catalog.schema, catalog.layouts), catalog.pooledReads)
            }
            func onWriter(_ connection: Connection) throws -> QueryResult {
                guard query.includeTotalCount else { return try SQLTableStore.read(query, on: layout, connection) }
                return try SQLTableStore.readInTransaction(query, on: layout, connection)
            }
            if pooled, let result = try onIdleWriterBeforeThePool(onWriter) { return result }
            if pooled, let result = try withReader({ try SQLTableStore.readInTransaction(query, on: layout, $0) }) {
                return result
            }
            return try state.withLock { state in try onWriter(try requireOpen(state)) }
        }
    }

    /// See ``OfflineSync/LocalStore/lookup(table:id:)``.
    package func lookup(table: String, id: String) throws -> Item? {
        try gate.shared {
            let (layout, pooled) = try catalog.withLock { catalog in
                guard catalog.isOpen else { throw notOpenError }
                return (try SQLTableStore.layout(table, in: catalog.schema, catalog.layouts), catalog.pooledReads)
            }
            return try onReadConnection(pooled: pooled) { try SQLTableStore.lookup(id, on: layout, $0) }
        }
    }

    /// `body`'s result on the connection a one-statement read uses: the idle writer while the
    /// pool has no connection yet, then a read connection of the pool, else the writer (waiting
    /// for it). Call it holding the gate shared.
    @inline(__always)
    private func onReadConnection<Result>(pooled: Bool, _ body: (Connection) throws -> Result) throws -> Result {
        if pooled, let result = try onIdleWriterBeforeThePool(body) { return result }
        if pooled, let result = try withReader(body) { return result }
        return try state.withLock { state in try body(try requireOpen(state)) }
    }

    /// SQLite's schema cookie on `connection` (`PRAGMA schema_version`), as text.
    private static func schemaCookie(on connection: Connection) throws -> String? {
        var cookie: String?
        try connection.forEachRow("PRAGMA schema_version") { cookie = $0.text(0) }
        return cookie
    }

    /// See ``OfflineSync/LocalStore/storedSchemaChanged()``: SQLite's schema cookie (`PRAGMA
    /// schema_version`, which every `CREATE` and `ALTER` of any connection or process raises) is
    /// compared with its value when this store installed its schema. Reads it as a read does (on
    /// the idle writer or a read connection), in about 2 µs.
    package func storedSchemaChanged() throws -> Bool {
        try gate.shared {
            let (cookie, pooled) = try catalog.withLock { catalog in
                guard catalog.isOpen else { throw notOpenError }
                return (catalog.schemaCookie, catalog.pooledReads)
            }
            return try onReadConnection(pooled: pooled, SQLTableStore.schemaCookie(on:)) != cookie
        }
    }

    /// `true` while reads borrow connections of the pool (see the type's comment), `false` when
    /// they run on the writer: the store is closed, in memory, in exclusive locking mode, its
    /// pool size is 0, or a read connection could not be opened.
    package var readsUseThePool: Bool {
        catalog.withLock { $0.isOpen && $0.pooledReads && readers.capacity > 0 }
    }

    /// `true` while the pool holds or lends a read connection (none is opened until a read
    /// meets a write transaction; see ``readsUseThePool``).
    package var hasReadConnections: Bool {
        readers.hasConnections
    }

    /// `query` answered in one read transaction on `connection`.
    private static func readInTransaction(_ query: Query, on layout: TableLayout, _ connection: Connection) throws
        -> QueryResult
    {
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

    /// `body`'s result on the writer connection while the pool has no connection yet and the
    /// writer is free right now (no write transaction runs); `nil` otherwise, without waiting.
    /// The reads after an open thus need no second connection until one meets a write: opening
    /// a connection costs as much as opening the store (for SQLCipher with a passphrase, a second
    /// key derivation, a quarter of a second on a phone). Once a read finds the writer busy, the
    /// pool opens its first connection and reads stop using the writer. Call it holding the gate
    /// shared.
    private func onIdleWriterBeforeThePool<Result>(_ body: (Connection) throws -> Result) throws -> Result? {
        guard !readers.hasConnections else { return nil }
        return try state.withLockIfAvailable { state in try body(try requireOpen(state)) }
    }

    /// `body`'s result on a read connection of the pool (waiting while all are in use), or `nil`
    /// when no read connection could be opened: the caller then reads on the writer, and so do
    /// later reads until the store is reopened. Call it while holding the gate shared.
    private func withReader<Result>(_ body: (Connection) throws -> Result) throws -> Result? {
        let connection: Connection
        switch readers.checkOut() {
        case .idle(let idle):
            connection = idle
        case .openNew:
            do {
                connection = try openReader()
            } catch {
                readers.abandon()
                catalog.withLock { $0.pooledReads = false }
                return nil
            }
        }
        do {
            let result = try body(connection)
            readers.checkIn(connection)
            return result
        } catch {
            // A connection left in a transaction (the rollback failed) is not lent again.
            if connection.isInTransaction {
                connection.close()
                readers.abandon()
            } else {
                readers.checkIn(connection)
            }
            throw error
        }
    }

    /// A new read-only connection to the open store's file, set up as the writer is (keyed, for
    /// SQLCipher), with the same busy timeout and page cache size.
    private func openReader() throws -> Connection {
        let connection = try Connection(
            api: backend.api, path: path, publishesArguments: options.publicStatementArguments, readOnly: true)
        do {
            connection.setBusyTimeout(milliseconds: Int32(clamping: options.busyTimeoutMilliseconds))
            try backend.didOpen(connection)
            try connection.execute("PRAGMA cache_size = \(-max(options.cacheSizeKiB, 1))")
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// See ``OfflineSync/LocalStore/write(_:)``: `BEGIN IMMEDIATE` (the write lock is taken up
    /// front, so the transaction cannot fail half-way on a lock upgrade), `COMMIT` when `body`
    /// returns, `ROLLBACK` when it or the commit throws.
    package func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try gate.shared { try writeOnWriter(body) }
    }

    private func writeOnWriter<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
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
        gate.exclusive {
            catalog.withLock { $0 = Catalog() }
            readers.closeAll()
            state.withLock { state in
                // The write-ahead log is named by the path, not by the file: when another file was
                // moved over the path (or the file renamed or deleted), SQLite skips its checkpoint
                // at close and leaves the log, which the next open would apply to whatever file
                // is at the path then, grafting this file's pages onto it. Checkpointing into the
                // file this connection opened, and truncating the log, leaves nothing to graft;
                // the writes stay in that file, wherever it went.
                if let connection = state.connection, connection.fileHasMoved {
                    try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                }
                state.connection?.close()
                state.connection = nil
            }
        }
    }

    /// Runs `body` with the open writer connection while no other call runs (for backend
    /// operations such as rekey and export). The read connections are closed first (a rekey
    /// would leave them with the old key); reads open new ones afterwards.
    package func withConnection<Result: Sendable>(_ body: @Sendable (Connection) throws -> Result) throws -> Result {
        try gate.exclusive {
            readers.closeAll()
            return try state.withLock { state in
                try body(try requireOpen(state))
            }
        }
    }

    private var notOpenError: OfflineSyncError {
        OfflineSyncError(.notOpen, "the \(backend.name) store '\(path)' is not open; call open(schema:) first")
    }

    private func requireOpen(_ state: State) throws -> Connection {
        guard let connection = state.connection else { throw notOpenError }
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
