public import OfflineSync
import Synchronization

/// The server side of the table protocol, written once over any `LocalStore`: what a real
/// Azure Mobile Apps table controller does with inserts, updates, deletes and reads.
///
/// ``InMemoryRemote`` runs it over an `InMemoryStore`; an HTTP server can run it over any
/// backend. It guarantees:
/// - every write sets `updatedAt` to a time strictly later than any earlier write of the whole
///   service (milliseconds; a busy service runs ahead of the clock rather than repeat a value)
///   and a new opaque `version` (base64, like SQL Server's rowversion); inserts set `createdAt`;
/// - that stamp is taken inside the store's write transaction, after the newest `updatedAt` the
///   table holds: with a store that several processes serve at once (a database server whose
///   write transactions hold one lock across processes), stamps stay unique and strictly increasing per
///   table, commit order equals stamp order, so an incremental pull never skips a committed write;
/// - deletes are soft: the row stays with `deleted = true`, a new `updatedAt` and `version`;
///   lookups, updates and deletes treat a soft-deleted row as missing (404), and
///   ``undelete(id:in:ifMatch:owner:)`` brings it back;
/// - an `If-Match` version that differs from the stored one fails with 412 carrying the
///   server's item; inserting an existing id (soft-deleted included) fails with 409 carrying it;
/// - reads return at most ``Options/maximumPageSize`` rows and leave out soft-deleted rows
///   unless asked;
/// - columns the table does not declare are a 400 error, unless ``Options/widensSchema`` is set:
///   then they are added to the table, typed from the first value written;
/// - every synced table of its store carries ``pullIndex``, so a store with secondary indexes
///   answers each page of an incremental pull from where the page starts, not by sorting the table.
///
/// ## No request can break the service
///
/// A write that would change the schema (a new column, a new table) is checked completely first:
/// the table's column count (before the lock writers take, from the item alone, so a body of
/// thousands of new names is refused at once), names (the names any built-in backend reserves,
/// `Identifier.portablyReservedPrefixes`, are refused on every store, so that it can be migrated
/// to any backend), letter-case clashes, and every value of the item against the widened table.
/// Only a write that will succeed changes the schema, so a rejected request leaves
/// the store as it was. Backends widen a schema on `open`, so the change closes and reopens the
/// store; it happens while no other call runs (see below), and when the reopen fails the store is
/// reopened with the schema it had, so the service is never left without an open store.
///
/// ## Concurrency
///
/// Writes are serialised (one at a time, in the order they take the lock), so a
/// read-modify-write such as a PATCH merge or a conflict check is atomic: the `If-Match` check,
/// the existence checks behind 404 and 409, and the stamp are made inside the store's write
/// transaction, which for a store shared by several processes holds the store's own lock. A
/// write that needs a column this process does not know first reopens the store, so columns
/// another process added are seen with their types. Every request first asks the store whether
/// another process declared or widened a table since it opened
/// (`LocalStore.storedSchemaChanged()`) and reopens it when one did, so no answer leaves out
/// a table, or a column of a row, that another server process added. Reads do not wait for
/// writes: they run concurrently with each other and with a write, as far as the backend allows
/// (a backend with concurrent readers, such as a pool of read-only connections, reads in
/// parallel).
/// Only a schema change waits for every call in progress and holds the others back.
///
/// ## Per-user data
///
/// Every call takes an optional ``RowOwner``: the user it acts for and the column holding each
/// row's owner. With one, an insert stamps the owner into that column (whatever the item says),
/// reads are the caller's filter AND `column eq owner` (at the query-model level, so no filter can
/// widen them), and a lookup, update, delete or undelete of a row owned by someone else is a 404,
/// exactly as for a missing row: never a 412 or 409 carrying that row. An update never changes a
/// row's owner, so a row's owner is fixed when it is inserted.
///
/// Failures are thrown as `RemoteError` with the HTTP status a server would answer; a store
/// failure is answered 500 with a message that names no internals (no SQL, no file paths): its
/// detail goes to the `failureLog` handed to ``init(store:options:failureLog:)``.
public final class TableService: Sendable {
    /// How the service behaves.
    public struct Options: Sendable, Hashable {
        /// The most rows one read returns (the server's page size cap). Default 50.
        public var maximumPageSize: Int
        /// Add undeclared columns instead of rejecting them (dynamic schema).
        public var widensSchema: Bool
        /// The most app tables the store may hold for a write to create another (dynamic
        /// schema); a write that would create one more is a 400. Default 256.
        ///
        /// Each table created reopens the store with every table declared, so a client creating
        /// tables without end would slow every later creation and grow the store; the limit
        /// also keeps LMDB (1,023 sub-databases: a table and its pull index take two) from
        /// running out. Tables the store already holds are served whatever their number.
        public var maximumTableCount: Int

        /// Creates options.
        public init(maximumPageSize: Int = 50, widensSchema: Bool = false, maximumTableCount: Int = 256) {
            self.maximumPageSize = max(1, maximumPageSize)
            self.widensSchema = widensSchema
            self.maximumTableCount = max(0, maximumTableCount)
        }
    }

    /// The most columns (system properties included) a table widened by a write may have; a
    /// write that would add more is a 400, well below the limits of the SQL backends.
    public static let maximumColumnCount = 500

    /// The store holding the service's tables.
    public let store: any LocalStore
    /// The options.
    public let options: Options
    /// The newest `updatedAt` handed out, in milliseconds; its lock is the writers' lock.
    private let lastStamp: Locked<Int64>
    /// Held shared by every store call, exclusively by a schema change.
    private let schemaLock = ReadWriteLock()
    private let failureLog: @Sendable (String) -> Void

    /// The index on (`updatedAt`, `id`) a served table gets: the pages of an incremental pull
    /// are `updatedAt ge T and (updatedAt gt T or id gt X)` ordered by `updatedAt`, `id`.
    public static let pullIndex = TableIndex("syncPullOrder", on: [SystemProperty.updatedAt.rawValue, "id"])

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
    /// without ``pullIndex`` gets it (the store is closed and reopened to declare it). Rows with
    /// no `updatedAt` (loaded by other means than the service) are stamped first, so incremental
    /// pulls return them.
    /// - Parameters:
    ///   - store: the open store whose tables are served.
    ///   - options: page size and schema widening.
    ///   - failureLog: receives the full text of every store failure the service answers with 500
    ///     (whose message itself names no internals); a server logs it.
    public init(
        store: any LocalStore, options: Options = Options(), failureLog: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.store = store
        self.options = options
        self.failureLog = failureLog
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
        self.lastStamp = Locked(newest)
        try stampRowsWithoutUpdatedAt(in: tables)
    }

    /// Gives every row of a served table that has no `updatedAt` (a row the service did not
    /// write: loaded with `offline-sync import`, or by another program) a stamp and a version, as
    /// an insert would (`createdAt` and `deleted` kept when set): an incremental pull pages by
    /// `updatedAt`, so a row without one would never reach a client. Runs when the service starts,
    /// in write transactions of 1,000 rows found through ``pullIndex`` (nulls sort first); a row
    /// another process stamped meanwhile is not found again.
    private func stampRowsWithoutUpdatedAt(in tables: [TableSchema]) throws {
        let updatedAt = SystemProperty.updatedAt.rawValue
        let batch = 1_000
        for table in tables where !table.isSystem && table.synced {
            let unstamped = Query(
                table: table.name, filter: .comparison(.column(updatedAt), .eq, .literal(.null)),
                orderBy: [SortKey(updatedAt), SortKey("id")], top: batch)
            var full = true
            while full {
                full = try serialized { stamp in
                    try store.write { transaction in
                        let rows = try transaction.read(unstamped).items
                        for row in rows {
                            let now = try stamp(transaction, table.name)
                            _ = try store(
                                row, createdAt: row.createdAt ?? now, updatedAt: now, deleted: row.isDeleted,
                                in: table.name, transaction)
                        }
                        return rows.count == batch
                    }
                }
            }
        }
    }

    /// `POST /tables/{table}`: stores a new item (an empty id gets a UUID) and returns it.
    /// - Parameters:
    ///   - item: the item to store.
    ///   - table: the table to store it in.
    ///   - creatingTable: with ``Options/widensSchema``, declare `table` when the store does not
    ///     have it yet (the Node server's dynamic schema creates tables this way).
    ///   - owner: the user the item belongs to, stamped into its owner column (see "Per-user
    ///     data"); an existing id owned by someone else is a 409 that carries no item.
    @discardableResult
    public func insert(_ item: Item, into table: String, creatingTable: Bool = false, owner: RowOwner? = nil) throws
        -> Item
    {
        try adoptSchemaChangedElsewhere()
        var item = item
        if item.id.isEmpty { item.id = UUIDText.random() }
        if let owner {
            owner.removeOwnerColumn(from: &item)
            item.values[owner.column] = .string(owner.userId)
        }
        try refuseTooManyColumns(table, for: item, creatingTable: creatingTable)
        return try serialized { stamp in
            let change = try currentSchemaChange(table, for: item, creatingTable: creatingTable)
            if change != nil, try hasTable(table),
                let existing = try shared({ try mapped { try store.lookup(table: table, id: item.id) } })
            {
                throw Self.duplicate(existing, table: table, owner: owner)
            }
            try apply(change)
            return try write { transaction in
                if let existing = try transaction.lookup(table: table, id: item.id) {
                    throw Self.duplicate(existing, table: table, owner: owner)
                }
                let now = try stamp(transaction, table)
                return try store(item, createdAt: now, updatedAt: now, deleted: false, in: table, transaction)
            }
        }
    }

    /// `PATCH /tables/{table}/{id}`: replaces an existing item; with `ifMatch`, only if its
    /// version matches (else 412 with the server's item). With `owner`, a row of another user is
    /// a 404 and the owner column keeps its value.
    @discardableResult
    public func update(_ item: Item, in table: String, ifMatch version: String?, owner: RowOwner? = nil) throws -> Item
    {
        try patch(item, in: table, ifMatch: version, merging: false, owner: owner)
    }

    /// `PATCH /tables/{table}/{id}` as the Azure servers apply it: the given columns replace
    /// the stored ones, the others keep their values (a `null` value clears its column). The
    /// merge and the write are one atomic step. Same `If-Match` rule as
    /// ``update(_:in:ifMatch:owner:)``, and the same `owner` rule.
    @discardableResult
    public func merge(_ item: Item, in table: String, ifMatch version: String?, owner: RowOwner? = nil) throws -> Item {
        try patch(item, in: table, ifMatch: version, merging: true, owner: owner)
    }

    /// `DELETE /tables/{table}/{id}`: soft-deletes an existing item (same `If-Match` rule) and
    /// returns the deleted row. With `owner`, a row of another user is a 404.
    @discardableResult
    public func delete(id: String, from table: String, ifMatch version: String?, owner: RowOwner? = nil) throws
        -> Item
    {
        try adoptSchemaChangedElsewhere()
        return try serialized { stamp in
            _ = try shared { try schema(of: table) }
            return try write { transaction in
                let existing = try live(id, in: table, owner: owner, transaction)
                try check(version, against: existing, table: table)
                let now = try stamp(transaction, table)
                return try store(
                    existing, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: true, in: table,
                    transaction)
            }
        }
    }

    /// `POST /tables/{table}/{id}`: restores a soft-deleted item (as the Azure Node server
    /// does) with a new `updatedAt` and `version`, and returns it. An item that is not deleted is
    /// returned as it is; a missing id is a 404; a stale `ifMatch` a 412 with the server's item.
    /// With `owner`, a row of another user is a 404.
    @discardableResult
    public func undelete(id: String, in table: String, ifMatch version: String?, owner: RowOwner? = nil) throws
        -> Item
    {
        try adoptSchemaChangedElsewhere()
        return try serialized { stamp in
            _ = try shared { try schema(of: table) }
            return try write { transaction in
                guard let existing = try transaction.lookup(table: table, id: id), owner?.owns(existing) ?? true else {
                    throw RemoteError(.notFound, status: 404, message: "table '\(table)' has no item with id '\(id)'")
                }
                try check(version, against: existing, table: table)
                guard existing.isDeleted else { return existing }
                let now = try stamp(transaction, table)
                return try store(
                    existing, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: false, in: table,
                    transaction)
            }
        }
    }

    /// `GET /tables/{table}`: one page, at most ``Options/maximumPageSize`` rows. With `owner`,
    /// only that user's rows: the query's filter is ANDed with `column eq owner`.
    public func readPage(_ query: Query, includeDeleted: Bool, owner: RowOwner? = nil) throws -> QueryResult {
        try adoptSchemaChangedElsewhere()
        return try shared {
            _ = try schema(of: query.table)
            var query = query
            query.top = min(query.top ?? options.maximumPageSize, options.maximumPageSize)
            if let owner {
                let mine = owner.predicate
                query.filter = query.filter.map { .and(mine, $0) } ?? mine
            }
            if !includeDeleted {
                let live = FilterExpression.comparison(
                    .column(SystemProperty.deleted.rawValue), .ne, .literal(.bool(true)))
                query.filter = query.filter.map { .and($0, live) } ?? live
            }
            return try mapped { try store.read(query) }
        }
    }

    /// `GET /tables/{table}/{id}`: the item, or `nil` when missing or soft-deleted (or, with
    /// `owner`, another user's).
    /// - Parameters:
    ///   - id: the item's id.
    ///   - table: the table to look in.
    ///   - includeDeleted: return a soft-deleted item too.
    ///   - owner: the user the call acts for (see "Per-user data").
    public func lookup(id: String, in table: String, includeDeleted: Bool = false, owner: RowOwner? = nil) throws
        -> Item?
    {
        try adoptSchemaChangedElsewhere()
        return try shared {
            _ = try schema(of: table)
            return try mapped { try store.lookup(table: table, id: id) }.flatMap {
                ($0.isDeleted && !includeDeleted) || !(owner?.owns($0) ?? true) ? nil : $0
            }
        }
    }

    /// `true` when the service serves `table` (a user table of its store).
    public func hasTable(_ table: String) throws -> Bool {
        func served() throws -> Bool {
            try shared { try mapped({ try store.schema }).table(named: table).map { !$0.isSystem } ?? false }
        }
        // Tables are never dropped: only a table this process does not know yet needs the check
        // of what other processes declared.
        if try served() { return true }
        try adoptSchemaChangedElsewhere()
        return try served()
    }

    // MARK: - Implementation

    /// Runs a write holding the process's writer lock. `stamp` gives the write's `updatedAt`; call
    /// it inside the store's write transaction, which holds the store's writer lock (across
    /// processes for a store shared by several, such as a database server): it reads the newest `updatedAt`
    /// stored in the table through the pull index, so the stamp is later than every write committed
    /// before, whichever process made it, and the next writer cannot stamp before this one commits
    /// (see docs/ARCHITECTURE.md, "Serving from several processes over one database").
    /// A store confined to its instance (``LocalStore/isConfinedToInstance``) has no other writer:
    /// the process's clock is enough and the probe is skipped.
    func serialized<Result>(
        _ body: (_ stamp: (any StoreTransaction, String) throws -> Timestamp) throws -> Result
    ) throws -> Result {
        try serialized(probing: { stamp in
            try withoutActuallyEscaping(stamp) { stamp in
                try body { transaction, table in try stamp(transaction, table, true) }
            }
        })
    }

    /// ``serialized(_:)`` whose `stamp` probes the table's newest `updatedAt` only when its third
    /// argument is `true`. Within one write transaction only the first stamp of a table needs the
    /// probe: the transaction holds the store's writer lock, so what was added since are its own
    /// writes, stamped no later than the last stamp given. Pass `false` only then.
    func serialized<Result>(
        probing body: (_ stamp: (any StoreTransaction, String, _ probe: Bool) throws -> Timestamp) throws -> Result
    ) throws -> Result {
        let confined = store.isConfinedToInstance
        return try lastStamp.withLock { last in
            try body { transaction, table, probe in
                let stored = confined || !probe ? Int64.min : try Self.newestStamp(of: table, transaction)
                last = max(Timestamp.now().millisecondsSince1970, last &+ 1, stored &+ 1)
                return Timestamp(millisecondsSince1970: last)
            }
        }
    }

    /// The newest `updatedAt` of `table` (soft-deleted rows included) in milliseconds, `Int64.min`
    /// when it has none: one probe of the end of ``pullIndex``.
    private static func newestStamp(of table: String, _ transaction: any StoreTransaction) throws -> Int64 {
        let newest = try transaction.read(
            Query(
                table: table, orderBy: [SortKey(SystemProperty.updatedAt.rawValue, descending: true)], top: 1,
                selection: [SystemProperty.updatedAt.rawValue]))
        return newest.items.first?.updatedAt?.millisecondsSince1970 ?? Int64.min
    }

    func shared<Result>(_ body: () throws -> Result) throws -> Result {
        try schemaLock.shared(body)
    }

    /// Checks that the store answers, for a server's health check: what every request starts with
    /// (whether another process changed the stored schema, which reads the file on SQLite and
    /// LMDB and queries PostgreSQL; a store changed elsewhere is reopened), then the schema.
    /// Throws what the store throws.
    public func checkHealth() throws {
        try adoptSchemaChangedElsewhere()
        _ = try shared { try mapped { try store.schema } }
    }

    /// Reopens the store when another process or store instance serving it declared or widened
    /// a table since this one opened it (`LocalStore.storedSchemaChanged()`), so that no
    /// answer leaves out a table or column that another server process added: called at the
    /// start of every request. Skipped for a store confined to its instance.
    func adoptSchemaChangedElsewhere() throws {
        guard !store.isConfinedToInstance else { return }
        guard try shared({ try mapped { try store.storedSchemaChanged() } }) else { return }
        try schemaLock.exclusive {
            // Another request may have reopened it while this one waited.
            guard try mapped({ try store.storedSchemaChanged() }) else { return }
            try mapped { try store.close() }
            try reopenAsBefore()
        }
    }

    private func patch(_ item: Item, in table: String, ifMatch version: String?, merging: Bool, owner: RowOwner?)
        throws -> Item
    {
        try adoptSchemaChangedElsewhere()
        var item = item
        if let owner { owner.removeOwnerColumn(from: &item) }
        // The merged item has every column of `item`, so a count over the limit now is one then.
        try refuseTooManyColumns(table, for: item, creatingTable: false)
        return try serialized { stamp in
            guard let current = try shared({ try mapped { try store.lookup(table: table, id: item.id) } }),
                !current.isDeleted, owner?.owns(current) ?? true
            else {
                _ = try shared { try schema(of: table) }
                throw RemoteError(.notFound, status: 404, message: "table '\(table)' has no item with id '\(item.id)'")
            }
            try check(version, against: current, table: table)
            try apply(
                try currentSchemaChange(
                    table, for: merging ? Self.merged(item, into: current) : item, creatingTable: false))
            return try write { transaction in
                let existing = try live(item.id, in: table, owner: owner, transaction)
                try check(version, against: existing, table: table)
                var replacement = merging ? Self.merged(item, into: existing) : item
                if let owner { replacement.values[owner.column] = existing.values[owner.column] }
                let now = try stamp(transaction, table)
                return try store(
                    replacement, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: false,
                    in: table, transaction)
            }
        }
    }

    /// `item`'s values laid over `existing`'s (system properties come from the write itself),
    /// on `existing`'s layout with the columns it lacks appended at once: linear in the columns
    /// of both, where appending them one by one would copy the layout for each.
    static func merged(_ item: Item, into existing: Item) -> Item {
        var merged = existing
        merged.id = item.id
        var addedNames: [String] = []
        var addedValues: [Value?] = []
        item.forEachValue { column, value in
            guard column != "id" else { return }
            if merged.layout.position(of: column) != nil {
                merged[column] = value
            } else {
                addedNames.append(column)
                addedValues.append(value)
            }
        }
        guard !addedNames.isEmpty else { return merged }
        return Item(
            id: merged.id, layout: RowLayout(uniqueNames: merged.layout.names + addedNames),
            values: merged.slots + addedValues)
    }

    private func schema(of table: String) throws -> TableSchema {
        guard let schema = try mapped({ try store.schema }).table(named: table), !schema.isSystem else {
            throw RemoteError(.notFound, status: 404, message: "the server has no table '\(table)'")
        }
        return schema
    }

    /// The table declaration a write of `item` needs, when it differs from the stored one:
    /// checked completely (names, letter case, column count, every value of `item` against it),
    /// so that applying it cannot fail for a reason of the request's. `nil` when the table
    /// already declares every column of the item. Undeclared columns are a 400 unless
    /// ``Options/widensSchema`` is set; an unknown table is a 404 unless `creatingTable` is too.
    private func schemaChange(_ table: String, for item: Item, creatingTable: Bool) throws -> TableSchema? {
        let existing: TableSchema? = try shared {
            let stored = try mapped { try store.schema }
            guard let declared = stored.table(named: table) else {
                guard creatingTable, options.widensSchema else { return try schema(of: table) }
                try input {
                    try Identifier.validateUserTable(table, reservedPrefixes: Identifier.portablyReservedPrefixes)
                }
                if stored.tables.contains(where: { Identifier.folded($0.name) == Identifier.folded(table) }) {
                    throw RemoteError(
                        .server, status: 400,
                        message: "table '\(table)' differs only in letter case from a table the server has")
                }
                let tableCount = stored.tables.count { !$0.isSystem }
                guard tableCount < options.maximumTableCount else {
                    throw RemoteError(
                        .server, status: 400,
                        message:
                            "table '\(table)' was not created: the server has \(tableCount) tables and creates none beyond \(options.maximumTableCount)"
                    )
                }
                return nil
            }
            guard !declared.isSystem else {
                throw RemoteError(.notFound, status: 404, message: "the server has no table '\(table)'")
            }
            return declared
        }
        let added = Self.undeclaredColumns(of: item, in: existing)
        if let first = added.first, !options.widensSchema {
            throw RemoteError(
                .server, status: 400, message: "table '\(table)' has no column '\(first.name)' (item '\(item.id)')")
        }
        guard existing == nil || !added.isEmpty else { return nil }
        try Self.checkColumnCount(table, declared: existing, adding: added)
        try input {
            for column in added {
                try Identifier.validate(
                    column.name, kind: "column", reservedPrefixes: Identifier.portablyReservedPrefixes)
            }
        }
        let addition = TableService.served(
            TableSchema(table, columns: added.sorted { $0.name < $1.name }, indexes: [], synced: true))
        return try input {
            let widened = try existing.map { try $0.merged(with: addition) } ?? addition
            try widened.validate(reservedPrefixes: store.reservedNamePrefixes)
            _ = try widened.normalize(item, origin: .local)
            return widened
        }
    }

    /// The columns a write of `item` adds to `declared` (`nil`: a table the write creates): each
    /// value the table has no column for, typed from the value; `null` values add none.
    private static func undeclaredColumns(of item: Item, in declared: TableSchema?) -> [Column] {
        var added: [Column] = []
        item.forEachValue { name, value in
            if name != "id", declared?.column(named: name) == nil, let type = value.type {
                added.append(Column(name, type))
            }
        }
        return added
    }

    /// Throws the 400 for a write that would widen `table` beyond ``maximumColumnCount``: its
    /// `declared` columns (for a table the write creates, the system properties) plus `added`.
    /// Counted before the columns are merged into the schema, so a body of thousands of new
    /// names costs one pass over them.
    private static func checkColumnCount(_ table: String, declared: TableSchema?, adding added: [Column]) throws {
        let count =
            added.count
            + (declared?.columns.count
                ?? SystemProperty.allCases.count { property in !added.contains { $0.name == property.rawValue } })
        guard count > maximumColumnCount else { return }
        throw RemoteError(
            .server, status: 400,
            message: "table '\(table)' would have \(count) columns; the server allows at most \(maximumColumnCount)")
    }

    /// With ``Options/widensSchema``, refuses a write that would widen `table` beyond
    /// ``maximumColumnCount`` before it takes the writers' lock, against the schema as this
    /// process knows it: columns are never dropped, so a count over the limit stays over it
    /// once the write holds the lock. Writes the service answers otherwise (a table that is
    /// not served, or not created by this write) are left to the write itself.
    private func refuseTooManyColumns(_ table: String, for item: Item, creatingTable: Bool) throws {
        guard options.widensSchema else { return }
        let declared = try shared { try mapped({ try store.schema }).table(named: table) }
        if let declared, declared.isSystem { return }
        guard declared != nil || creatingTable else { return }
        try Self.checkColumnCount(table, declared: declared, adding: Self.undeclaredColumns(of: item, in: declared))
    }

    /// ``schemaChange(_:for:creatingTable:)`` against the schema as the store holds it now. The
    /// store's schema is a copy taken when it opened; another process serving the same store may
    /// have widened the table since. So when the copy says a change is needed, the store is
    /// reopened (which reads the stored schema) and the change computed again: columns another
    /// process added are then known with their types, and a value of another type is the 400 it
    /// would have been in that process, not a failed `ALTER TABLE`.
    private func currentSchemaChange(_ table: String, for item: Item, creatingTable: Bool) throws -> TableSchema? {
        guard try schemaChange(table, for: item, creatingTable: creatingTable) != nil else { return nil }
        try schemaLock.exclusive {
            try mapped { try store.close() }
            try reopenAsBefore()
        }
        return try schemaChange(table, for: item, creatingTable: creatingTable)
    }

    /// Declares a table change checked by ``schemaChange(_:for:creatingTable:)``: the store is
    /// closed and reopened while no other call runs; when the reopen fails, the store is reopened
    /// as it was and the failure answered 500.
    private func apply(_ change: TableSchema?) throws {
        guard let change else { return }
        try schemaLock.exclusive {
            try mapped { try store.close() }
            do {
                try store.open(schema: StoreSchema([change]))
            } catch {
                failureLog("widening table '\(change.name)' failed: \(error)")
                try reopenAsBefore()
                if let full = error as? any StoreFullError, full.isStoreFull {
                    throw RemoteError(
                        .server, status: 507,
                        message: "the server's store has no room to add the columns of table '\(change.name)'")
                }
                throw RemoteError(
                    .server, status: 500,
                    message: "the server could not add the columns of table '\(change.name)'; see the server log")
            }
        }
    }

    /// Reopens the store with the schema it has; tries a few times, since the service must not
    /// be left without an open store.
    private func reopenAsBefore() throws {
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                try store.open(schema: StoreSchema([]))
                return
            } catch {
                lastError = error
            }
        }
        failureLog("reopening the store failed: \(lastError.map { "\($0)" } ?? "unknown error")")
        throw RemoteError(.server, status: 500, message: "the server's store could not be reopened; see the server log")
    }

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try shared { try mapped { try store.write(body) } }
    }

    func live(_ id: String, in table: String, owner: RowOwner?, _ transaction: any StoreTransaction) throws
        -> Item
    {
        guard let existing = try transaction.lookup(table: table, id: id), !existing.isDeleted,
            owner?.owns(existing) ?? true
        else {
            throw RemoteError(.notFound, status: 404, message: "table '\(table)' has no item with id '\(id)'")
        }
        return existing
    }

    /// A 409 for an insert of an existing id; it carries the stored item only when the caller
    /// may see it (not another user's).
    static func duplicate(_ existing: Item, table: String, owner: RowOwner?) -> RemoteError {
        guard owner?.owns(existing) ?? true else {
            return RemoteError(
                .conflict, status: 409, message: "table '\(table)' already has an item with id '\(existing.id)'")
        }
        return RemoteError(
            .conflict, status: 409, serverItem: existing,
            message: "table '\(table)' already has an item with id '\(existing.id)'")
    }

    func check(_ version: String?, against existing: Item, table: String) throws {
        if let version, version != existing.version {
            throw RemoteError(
                .conflict, status: 412, serverItem: existing,
                message:
                    "item '\(existing.id)' of '\(table)' is at version \(existing.version ?? "none"), not \(version)")
        }
    }

    func store(
        _ item: Item, createdAt: Timestamp, updatedAt: Timestamp, deleted: Bool, in table: String,
        _ transaction: any StoreTransaction
    ) throws -> Item {
        var stored = item
        stored[SystemProperty.createdAt.rawValue] = .date(createdAt)
        stored[SystemProperty.updatedAt.rawValue] = .date(updatedAt)
        stored[SystemProperty.version.rawValue] = .string(TableService.version(updatedAt))
        stored[SystemProperty.deleted.rawValue] = .bool(deleted)
        try transaction.upsert([stored], into: table, origin: .local)
        return try transaction.lookup(table: table, id: stored.id) ?? stored
    }

    /// Runs a check of the request's input: its failures are 400s.
    private func input<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as RemoteError {
            throw error
        } catch let error as OfflineSyncError {
            throw RemoteError(.server, status: 400, message: error.message)
        }
    }

    /// Store errors become HTTP answers: bad input 400 with the store's message, a full store
    /// (``StoreFullError``) 507, a store that cannot be reached for now
    /// (``StoreUnavailableError``) 503, anything else 500 with a message that names no internals
    /// (the detail goes to the failure log).
    func mapped<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as RemoteError {
            throw error
        } catch let error as OfflineSyncError {
            let input: Set<OfflineSyncError.Code> = [
                .invalidValue, .unknownColumn, .invalidQuery, .invalidName, .syntax,
            ]
            if input.contains(error.code) { throw RemoteError(.server, status: 400, message: error.message) }
            if error.code == .unknownTable { throw RemoteError(.notFound, status: 404, message: error.message) }
            failureLog("store failure (\(error.code)): \(error.message)")
            throw RemoteError(
                .server, status: 500, message: "the server's store failed (\(error.code)); see the server log")
        } catch let error as any StoreFullError where error.isStoreFull {
            // The write changed nothing; the client may retry once the server has room again.
            failureLog("store full: \(error)")
            throw RemoteError(
                .server, status: 507,
                message:
                    "the server's store is full, so the write was not made; its administrator must free space or raise the store's size limit. Retry later"
            )
        } catch let error as any StoreUnavailableError where error.isStoreUnavailable {
            failureLog("store unavailable: \(error)")
            throw RemoteError(
                .server, status: 503,
                message: "the server's store cannot be reached for the moment, so nothing was done; retry shortly")
        } catch {
            failureLog("store failure: \(error)")
            throw RemoteError(.server, status: 500, message: "the server's store failed; see the server log")
        }
    }

    /// The opaque version of a write: the 8 bytes of its unique `updatedAt`, in base64 (12
    /// characters).
    package static func version(_ stamp: Timestamp) -> String {
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

/// The user a ``TableService`` call acts for, and the column that records each row's owner
/// (per-user data: see ``TableService``).
public struct RowOwner: Sendable, Hashable {
    /// The column holding each row's owner, `userId` by default.
    public var column: String
    /// The user's id, as the token's subject (`sub`) names it.
    public var userId: String

    /// Creates an owner.
    public init(userId: String, column: String = "userId") {
        self.column = column
        self.userId = userId
    }

    /// `true` when `item` belongs to this user (a row with no owner belongs to nobody).
    public func owns(_ item: Item) -> Bool {
        item.values[column] == .string(userId)
    }

    /// Drops what a client sent for the owner column (in any letter case): the server decides it.
    func removeOwnerColumn(from item: inout Item) {
        let folded = Identifier.folded(column)
        // By column, not through `values`: reading or setting that view rebuilds a dictionary of
        // every column per call.
        var owned: [String] = []
        item.forEachValue { name, _ in if Identifier.folded(name) == folded { owned.append(name) } }
        for name in owned { item.removeValue(forColumn: name) }
    }

    /// `column eq 'userId'`, the predicate every read of this user is ANDed with.
    public var predicate: FilterExpression {
        .comparison(.column(column), .eq, .literal(.string(userId)))
    }
}
