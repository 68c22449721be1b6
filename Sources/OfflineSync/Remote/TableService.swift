import Synchronization

/// The server side of the table protocol, written once over any ``LocalStore``: what a real
/// Azure Mobile Apps table controller does with inserts, updates, deletes and reads.
///
/// ``InMemoryRemote`` runs it over an ``InMemoryStore``; an HTTP server can run it over any
/// backend. It guarantees:
/// - every write sets `updatedAt` to a time strictly later than any earlier write of the whole
///   service (milliseconds; a busy service runs ahead of the clock rather than repeat a value)
///   and a new opaque `version` (base64, like SQL Server's rowversion); inserts set `createdAt`;
/// - deletes are soft: the row stays with `deleted = true`, a new `updatedAt` and `version`;
///   lookups, updates and deletes treat a soft-deleted row as missing (404);
/// - an `If-Match` version that differs from the stored one fails with 412 carrying the
///   server's item; inserting an existing id (soft-deleted included) fails with 409 carrying it;
/// - reads return at most ``Options/maximumPageSize`` rows and leave out soft-deleted rows
///   unless asked;
/// - columns the table does not declare are a 400 error, unless ``Options/widensSchema`` is set:
///   then they are added to the table, typed from the first value written;
/// - every synced table of its store carries ``pullIndex``, so a store with secondary indexes
///   answers each page of an incremental pull from where the page starts, not by sorting the table.
///
/// Calls are serialised (one at a time), so a read never sees half a write. Failures are thrown
/// as ``RemoteError`` with the HTTP status a server would answer.
public final class TableService: Sendable {
    /// How the service behaves.
    public struct Options: Sendable, Hashable {
        /// The most rows one read returns (the server's page size cap). Default 50.
        public var maximumPageSize: Int
        /// Add undeclared columns instead of rejecting them (dynamic schema).
        public var widensSchema: Bool

        /// Creates options.
        public init(maximumPageSize: Int = 50, widensSchema: Bool = false) {
            self.maximumPageSize = max(1, maximumPageSize)
            self.widensSchema = widensSchema
        }
    }

    /// The store holding the service's tables.
    public let store: any LocalStore
    /// The options.
    public let options: Options
    /// The newest `updatedAt` handed out, in milliseconds; guarded together with every call.
    private let lastStamp: Mutex<Int64>

    /// The index on (`updatedAt`, `id`) a served table gets: the pages of an incremental pull
    /// are `updatedAt ge T and (updatedAt gt T or id gt X)` ordered by `updatedAt`, `id`.
    public static let pullIndex = Index("syncPullOrder", on: [SystemProperty.updatedAt.rawValue, "id"])

    /// `table` with ``pullIndex`` added when it is synced and has no index leading with
    /// `updatedAt`, `id` yet; declare a table this way before serving it.
    public static func served(_ table: TableSchema) -> TableSchema {
        guard table.synced, !table.isSystem,
            !table.indexes.contains(where: { $0.columns.starts(with: pullIndex.columns) })
        else { return table }
        var indexed = table
        indexed.indexes.append(pullIndex)
        return indexed
    }

    /// Serves the tables of an open store. Tables must be declared synced (with the system
    /// properties); the clock starts after the newest `updatedAt` already stored. A synced table
    /// without ``pullIndex`` gets it (the store is closed and reopened to declare it).
    public init(store: any LocalStore, options: Options = Options()) throws {
        self.store = store
        self.options = options
        let tables = try store.schema.tables
        let unindexed = tables.filter { Self.served($0) != $0 }
        if !unindexed.isEmpty {
            try store.close()
            try store.open(schema: StoreSchema(unindexed.map(Self.served)))
        }
        var newest = Int64.min
        for table in tables where !table.isSystem && table.synced {
            let latest = try store.read(
                Query(
                    table: table.name, orderBy: [SortKey(SystemProperty.updatedAt.rawValue, descending: true)],
                    top: 1, selection: [SystemProperty.updatedAt.rawValue]))
            if let stamp = latest.items.first?.updatedAt?.millisecondsSince1970 { newest = max(newest, stamp) }
        }
        self.lastStamp = Mutex(newest)
    }

    /// `POST /tables/{table}`: stores a new item (an empty id gets a UUID) and returns it.
    @discardableResult
    public func insert(_ item: Item, into table: String) throws -> Item {
        try serialized { stamp in
            var item = item
            if item.id.isEmpty { item.id = UUIDText.random() }
            try requireSchema(table, for: item)
            return try write { transaction in
                if let existing = try transaction.lookup(table: table, id: item.id) {
                    throw RemoteError(
                        .conflict, status: 409, serverItem: existing,
                        message: "table '\(table)' already has an item with id '\(item.id)'")
                }
                let now = stamp()
                return try store(item, createdAt: now, updatedAt: now, deleted: false, in: table, transaction)
            }
        }
    }

    /// `PATCH /tables/{table}/{id}`: replaces an existing item; with `ifMatch`, only if its
    /// version matches (else 412 with the server's item).
    @discardableResult
    public func update(_ item: Item, in table: String, ifMatch version: String?) throws -> Item {
        try serialized { stamp in
            try requireSchema(table, for: item)
            return try write { transaction in
                let existing = try live(item.id, in: table, transaction)
                try check(version, against: existing, table: table)
                return try store(
                    item, createdAt: existing.createdAt ?? stamp(), updatedAt: stamp(), deleted: false, in: table,
                    transaction)
            }
        }
    }

    /// `DELETE /tables/{table}/{id}`: soft-deletes an existing item (same `If-Match` rule) and
    /// returns the deleted row.
    @discardableResult
    public func delete(id: String, from table: String, ifMatch version: String?) throws -> Item {
        try serialized { stamp in
            _ = try schema(of: table)
            return try write { transaction in
                let existing = try live(id, in: table, transaction)
                try check(version, against: existing, table: table)
                return try store(
                    existing, createdAt: existing.createdAt ?? stamp(), updatedAt: stamp(), deleted: true, in: table,
                    transaction)
            }
        }
    }

    /// `GET /tables/{table}`: one page, at most ``Options/maximumPageSize`` rows.
    public func readPage(_ query: Query, includeDeleted: Bool) throws -> QueryResult {
        try serialized { _ in
            _ = try schema(of: query.table)
            var query = query
            query.top = min(query.top ?? options.maximumPageSize, options.maximumPageSize)
            if !includeDeleted {
                let live = Expression.comparison(.column(SystemProperty.deleted.rawValue), .ne, .literal(.bool(true)))
                query.filter = query.filter.map { .and($0, live) } ?? live
            }
            return try mapped { try store.read(query) }
        }
    }

    /// `GET /tables/{table}/{id}`: the item, or `nil` when missing or soft-deleted.
    public func lookup(id: String, in table: String) throws -> Item? {
        try serialized { _ in
            _ = try schema(of: table)
            return try mapped { try store.lookup(table: table, id: id) }.flatMap { $0.isDeleted ? nil : $0 }
        }
    }

    // MARK: - Implementation

    private func serialized<Result>(_ body: (_ stamp: () -> Timestamp) throws -> Result) throws -> Result {
        try lastStamp.withLock { last in
            try body {
                last = max(Timestamp.now().millisecondsSince1970, last &+ 1)
                return Timestamp(millisecondsSince1970: last)
            }
        }
    }

    private func schema(of table: String) throws -> TableSchema {
        guard let schema = try mapped({ try store.schema }).table(named: table), !schema.isSystem else {
            throw RemoteError(.notFound, status: 404, message: "the server has no table '\(table)'")
        }
        return schema
    }

    /// Checks the table exists and, when the item names undeclared columns, widens the table
    /// (``Options/widensSchema``) or answers 400.
    private func requireSchema(_ table: String, for item: Item) throws {
        let schema = try schema(of: table)
        var added: [Column] = []
        for (name, value) in item.values where name != "id" && schema.column(named: name) == nil {
            guard let type = value.type else { continue }
            guard options.widensSchema else {
                throw RemoteError(
                    .server, status: 400, message: "table '\(table)' has no column '\(name)' (item '\(item.id)')")
            }
            added.append(Column(name, type))
        }
        guard !added.isEmpty else { return }
        let widened = TableSchema(
            table, columns: schema.columns + added.sorted { $0.name < $1.name }, indexes: schema.indexes,
            synced: schema.synced)
        try mapped {
            try store.close()
            try store.open(schema: StoreSchema([widened]))
        }
    }

    private func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try mapped { try store.write(body) }
    }

    private func live(_ id: String, in table: String, _ transaction: any StoreTransaction) throws -> Item {
        guard let existing = try transaction.lookup(table: table, id: id), !existing.isDeleted else {
            throw RemoteError(.notFound, status: 404, message: "table '\(table)' has no item with id '\(id)'")
        }
        return existing
    }

    private func check(_ version: String?, against existing: Item, table: String) throws {
        if let version, version != existing.version {
            throw RemoteError(
                .conflict, status: 412, serverItem: existing,
                message:
                    "item '\(existing.id)' of '\(table)' is at version \(existing.version ?? "none"), not \(version)")
        }
    }

    private func store(
        _ item: Item, createdAt: Timestamp, updatedAt: Timestamp, deleted: Bool, in table: String,
        _ transaction: any StoreTransaction
    ) throws -> Item {
        var stored = item
        stored.values.reserveCapacity(item.values.count + 4)
        stored[SystemProperty.createdAt.rawValue] = .date(createdAt)
        stored[SystemProperty.updatedAt.rawValue] = .date(updatedAt)
        stored[SystemProperty.version.rawValue] = .string(TableService.version(updatedAt))
        stored[SystemProperty.deleted.rawValue] = .bool(deleted)
        try transaction.upsert([stored], into: table, origin: .local)
        return try transaction.lookup(table: table, id: stored.id) ?? stored
    }

    /// Store errors become HTTP answers: bad input 400, anything else 500.
    private func mapped<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as RemoteError {
            throw error
        } catch let error as OfflineSyncError {
            let input: Set<OfflineSyncError.Code> = [
                .invalidValue, .unknownColumn, .invalidQuery, .invalidName, .syntax,
            ]
            throw RemoteError(.server, status: input.contains(error.code) ? 400 : 500, message: error.message)
        } catch {
            throw RemoteError(.server, status: 500, message: "\(error)")
        }
    }

    /// The opaque version of a write: the 8 bytes of its unique `updatedAt`, in base64.
    static func version(_ stamp: Timestamp) -> String {
        let value = UInt64(bitPattern: stamp.millisecondsSince1970)
        var bytes = [UInt8](repeating: 0, count: 9)
        for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(index))) }
        var text: [UInt8] = []
        text.reserveCapacity(12)
        for group in stride(from: 0, to: 9, by: 3) {
            let chunk = UInt32(bytes[group]) << 16 | UInt32(bytes[group + 1]) << 8 | UInt32(bytes[group + 2])
            for shift: UInt32 in [18, 12, 6, 0] { text.append(base64Alphabet[Int((chunk >> shift) & 63)]) }
        }
        text[11] = UInt8(ascii: "=")
        return String(decoding: text, as: UTF8.self)
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
}
