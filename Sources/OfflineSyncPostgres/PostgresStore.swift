import CLibPQ
public import OfflineSync
import Synchronization

/// A `LocalStore` in a schema of a PostgreSQL (10 or later) database, through libpq.
///
/// ```swift
/// let settings = try PostgresConnectionSettings(
///     StoreConfiguration(parsing: "postgres://app@127.0.0.1:5432/appdb?schema=offline_sync"))
/// let store = PostgresStore(settings: settings)
/// try store.open(schema: StoreSchema([TableSchema("todo", columns: [Column("text", .string)])]))
/// ```
///
/// - Each declared table is an SQL table in the store's PostgreSQL schema (created on first open),
///   laid out so PostgreSQL compares and orders exactly as `QueryEvaluator` does
///   (see `PostgresTableLayout`: strings as `bytea`, ids and JSON as `text COLLATE "C"`, dates as
///   `int8` milliseconds, `float8` doubles). The declared schema is recorded in the table
///   `__offline_sync_schema`, so reopening knows every column's type and widens tables with
///   `ALTER TABLE ADD COLUMN`. A schema change raises the schema's generation (in
///   `__offline_sync_generation`); every read, lookup and write transaction checks it and reloads
///   the schema another store instance or process changed.
/// - Every value is bound (binary format) to a server-side prepared statement, cached per
///   connection. Indexes come from the schema.
/// - One connection per store, confined behind a lock: calls from any thread are serialised.
///   A write transaction also takes a transaction-scoped advisory lock derived from the database
///   and schema, so write transactions on one schema are serialised across every store instance
///   and process that uses it (rule 6 of `LocalStore` holds across processes).
///   A read with a total count reads the page and the count in one `REPEATABLE READ` transaction.
/// - A connection the server dropped is re-established at the next call (outside a transaction).
/// - Failures of the server or of libpq throw ``PostgresError``; contract violations throw
///   `OfflineSyncError`. No password ever appears in an error or in ``info``.
public final class PostgresStore: LocalStore {
    private struct State {
        var connection: PostgresConnection?
        var schema = StoreSchema([])
        var layouts: [String: PostgresTableLayout] = [:]
        var serverVersion: String?
        /// The schema generation ``schema`` was read at (see `PostgresConnection.generationTable`).
        var generation: Int64 = 0

        /// Takes `stored` as the schema, at `generation`.
        mutating func adopt(_ stored: StoreSchema, generation: Int64, in schemaName: String) {
            schema = stored
            layouts = Dictionary(
                uniqueKeysWithValues: stored.tables.map { ($0.name, PostgresTableLayout($0, in: schemaName)) })
            self.generation = generation
        }
    }

    /// Where the store connects and its PostgreSQL schema.
    public let settings: PostgresConnectionSettings
    private let state = Locked(State())
    /// The advisory lock key of this store's schema (see ``PostgresStore``).
    let lockKey: Int64

    /// Creates a closed store; ``open(schema:)`` connects.
    public init(settings: PostgresConnectionSettings) {
        self.settings = settings
        let database = settings.database ?? settings.user ?? ""
        lockKey = Int64(bitPattern: PostgresTableLayout.fnv1a("offline-sync \(database).\(settings.schema)"))
    }

    /// The version of the libpq library, e.g. `150018`.
    public static var libpqVersion: Int { Int(PQlibVersion()) }

    public var info: StoreInfo {
        let serverVersion = state.withLock { $0.serverVersion }
        return StoreInfo(
            backend: "postgres", location: settings.description,
            properties: [
                StoreInfo.Property("PostgreSQL version", serverVersion ?? "not connected"),
                StoreInfo.Property("libpq version", PostgresStore.versionText(PostgresStore.libpqVersion)),
                StoreInfo.Property("schema", settings.schema),
            ])
    }

    public var schema: StoreSchema {
        get throws {
            try state.withLock { state in
                _ = try requireOpen(state)
                return state.schema
            }
        }
    }

    public func open(schema: StoreSchema) throws {
        try schema.validate()
        try settings.validate()
        try state.withLock { state in
            guard state.connection == nil else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the postgres store \(settings) is already open; close it before opening it again")
            }
            let connection = try PostgresConnection(
                parameters: try settings.connectionParameters(), location: settings.description)
            guard connection.serverParameter("server_encoding") == "UTF8" else {
                let encoding = connection.serverParameter("server_encoding") ?? "unknown"
                connection.close()
                throw OfflineSyncError(
                    .configuration,
                    "the database of \(settings) uses the encoding \(encoding); OfflineSync needs UTF8 (create the database with ENCODING 'UTF8')"
                )
            }
            guard connection.serverVersion >= 100_000 else {
                let version = connection.serverVersion
                connection.close()
                throw OfflineSyncError(
                    .unsupported,
                    "the server of \(settings) runs PostgreSQL \(PostgresStore.versionText(version)); the postgres store needs 10 or later"
                )
            }
            do {
                let stored = try connection.install(schema, in: settings.schema, lockKey: lockKey)
                state.adopt(stored.schema, generation: stored.generation, in: settings.schema)
                state.serverVersion = connection.serverParameter("server_version")
                state.connection = connection
            } catch {
                connection.close()
                throw error
            }
        }
    }

    /// Brings ``schema`` up to date when another process or store instance declared or widened a
    /// table (one indexed read of the schema's generation; the reload only after a change), and
    /// returns `false`: this store is never reopened to see another's change, since its reads,
    /// lookups and writes check the generation themselves.
    public func storedSchemaChanged() throws -> Bool {
        try state.withLock { state in
            let connection = try requireOpen(state)
            try PostgresStore.retryingOnceAfterConnectionLoss(connection) { try refreshSchema(&state, connection) }
            return false
        }
    }

    /// A query with a total count reads the page and the count in one `REPEATABLE READ`
    /// transaction, so both see the same rows.
    public func read(_ query: Query) throws -> QueryResult {
        try state.withLock { state in
            let connection = try requireOpen(state)
            return try PostgresStore.retryingOnceAfterConnectionLoss(connection) {
                guard query.includeTotalCount else {
                    try refreshSchema(&state, connection)
                    let layout = try PostgresStore.layout(query.table, in: state.schema, state.layouts)
                    return try PostgresStore.read(query, on: layout, connection)
                }
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                do {
                    try refreshSchema(&state, connection)
                    let layout = try PostgresStore.layout(query.table, in: state.schema, state.layouts)
                    let result = try PostgresStore.read(query, on: layout, connection)
                    try connection.execute("COMMIT")
                    return result
                } catch {
                    connection.rollBack()
                    throw error
                }
            }
        }
    }

    public func lookup(table: String, id: String) throws -> Item? {
        try state.withLock { state in
            let connection = try requireOpen(state)
            return try PostgresStore.retryingOnceAfterConnectionLoss(connection) {
                try refreshSchema(&state, connection)
                let layout = try PostgresStore.layout(table, in: state.schema, state.layouts)
                return try PostgresStore.lookup(id, on: layout, connection)
            }
        }
    }

    /// Reloads the schema when another store instance or process changed it (widened a table,
    /// added one) since this one read it: the generation is one indexed read, the reload only
    /// happens after a change. So a read never leaves out columns another process added, and a
    /// write transaction (which checks under the writer lock) writes against the current tables.
    private func refreshSchema(_ state: inout State, _ connection: PostgresConnection, generation: Int64? = nil)
        throws
    {
        let generation = try generation ?? connection.generation(in: settings.schema)
        guard generation != state.generation else { return }
        state.adopt(try connection.storedSchema(in: settings.schema), generation: generation, in: settings.schema)
    }

    /// Runs a read (or the start of a transaction); when the connection turns out to be lost (a
    /// server restart, a dropped network, a terminated backend: libpq notices only when a
    /// statement fails), reconnects and runs it once more. Never a write: a write whose connection
    /// died may or may not have committed.
    private static func retryingOnceAfterConnectionLoss<Result>(
        _ connection: PostgresConnection, _ body: () throws -> Result
    ) throws -> Result {
        try connection.reconnectIfBroken()
        do {
            return try body()
        } catch let error as PostgresError where error.isConnectionFailure && connection.isBroken {
            try connection.reconnectIfBroken()
            return try body()
        }
    }

    /// `BEGIN`, the schema's advisory lock and the schema's generation (a schema another process
    /// widened is reloaded first) in one round trip, `COMMIT` when `body` returns,
    /// `ROLLBACK` when it or the commit throws. When a statement failed inside the transaction
    /// (PostgreSQL then refuses everything but a rollback) and `body` caught the error and returned,
    /// the transaction is rolled back and that error is thrown: nothing half-done is committed.
    public func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try state.withLock { state in
            let connection = try requireOpen(state)
            // A lost connection is noticed by the first statement; nothing is written before the
            // lock is held, so beginning again on a new connection is safe.
            // The schema generation is read in the same round trip, under the lock.
            let generation = try PostgresStore.retryingOnceAfterConnectionLoss(connection) {
                try connection.executeReturningValue(
                    "BEGIN; SELECT pg_advisory_xact_lock(\(lockKey)); "
                        + PostgresConnection.generationSQL(in: settings.schema))
            }
            let transaction: Transaction
            do {
                try refreshSchema(&state, connection, generation: generation.flatMap { Int64($0) } ?? 0)
                transaction = Transaction(connection: connection, schema: state.schema, layouts: state.layouts)
            } catch {
                connection.rollBack()
                throw error
            }
            defer { transaction.isActive = false }
            do {
                let result = try body(transaction)
                if let failure = transaction.failure { throw failure }
                let tag = try connection.execute("COMMIT")
                guard tag == "COMMIT" else {
                    throw PostgresError(
                        message: "the server answered \(tag) to COMMIT",
                        context: "committing a write transaction on \(settings); nothing of it was kept")
                }
                return result
            } catch {
                connection.rollBack()
                throw error
            }
        }
    }

    public func close() throws {
        state.withLock { state in
            state.connection?.close()
            state.connection = nil
        }
    }

    private func requireOpen(_ state: State) throws -> PostgresConnection {
        guard let connection = state.connection else {
            throw OfflineSyncError(.notOpen, "the postgres store \(settings) is not open; call open(schema:) first")
        }
        return connection
    }

    static func versionText(_ version: Int) -> String {
        version >= 100_000 ? "\(version / 10_000).\(version % 10_000)" : "\(version / 10_000).\(version / 100 % 100)"
    }

    static func layout(_ table: String, in schema: StoreSchema, _ layouts: [String: PostgresTableLayout]) throws
        -> PostgresTableLayout
    {
        if let layout = layouts[table] { return layout }
        _ = try schema.requireTable(table)
        throw OfflineSyncError(
            .unknownTable, "table '\(table)' is not declared; declare it in the schema before opening the store")
    }

    static func read(_ query: Query, on layout: PostgresTableLayout, _ connection: PostgresConnection) throws
        -> QueryResult
    {
        try query.validate(against: layout.schema)
        let columns = layout.columns(selecting: query.selection)
        let select = PostgresQuery.select(query, on: layout, columns: columns)
        let count = query.includeTotalCount ? PostgresQuery.count(query, on: layout) : nil
        guard let select, count != nil || !query.includeTotalCount else {
            let candidates = PostgresQuery.candidates(query, on: layout)
            var rows: [Item] = []
            try connection.run(candidates.sql, candidates.parameters) {
                rows.append(layout.decode($0, columns: layout.schema.columns))
            }
            return try QueryEvaluator(query: query, schema: layout.schema).run(over: rows)
        }
        var items: [Item] = []
        try connection.run(select.sql, select.parameters) { items.append(layout.decode($0, columns: columns)) }
        var total: Int?
        if let count {
            try connection.run(count.sql, count.parameters) { total = Int($0.int64(0)) }
        }
        return QueryResult(items: items, totalCount: total)
    }

    static func lookup(_ id: String, on layout: PostgresTableLayout, _ connection: PostgresConnection) throws -> Item? {
        // `text` cannot hold U+0000, and no stored id contains it.
        guard !id.utf8.contains(0) else { return nil }
        var item: Item?
        try connection.run(layout.lookupSQL, [PostgresParameter(.string(id), as: .text)]) {
            item = layout.decode($0, columns: layout.schema.columns)
        }
        return item
    }
}
