import Synchronization

/// The reference store: every table in memory, every query answered by ``QueryEvaluator``.
///
/// It defines the semantics that the conformance suite holds every other backend to, and it is a
/// real store for tests and for apps that need no persistence. Data lives as long as the instance:
/// closing and reopening the same instance keeps it (as a file would), a new instance starts empty.
/// Transactions apply writes in place and keep an undo log, so a throwing transaction is rolled
/// back without copying the tables. Declared indexes are kept as sorted arrays (see
/// `InMemoryIndex`), brought up to date after a bulk write or at the next read that uses them.
public final class InMemoryStore: LocalStore {
    private struct State {
        var isOpen = false
        var schema = StoreSchema([])
        var tables: [String: [IdKey: Item]] = [:]
        /// Rows of a table sorted by an ordering that a ``RangeScan`` used, kept until the
        /// table's next write (at most ``maximumOrderings`` per table).
        var orderings: [String: [[SortKey]: [Item]]] = [:]
        /// The declared indexes of each table that has some, by index name.
        var indexes: [String: [String: InMemoryIndex]] = [:]
        /// The rows of an indexed table changed since its indexes were last brought up to date,
        /// each with the row as the indexes hold it (`nil`: none).
        var pendingIndexChanges: [String: [IdKey: Item?]] = [:]

        /// Drops the sorted copies of a table after a write to it.
        mutating func changed(_ table: String) {
            if orderings[table] != nil { orderings[table] = nil }
        }

        /// Notes that row `key` of `table`, which was `previous`, is about to change or changed.
        mutating func noteIndexChange(_ table: String, _ key: IdKey, previous: Item?) {
            guard indexes[table] != nil else { return }
            if pendingIndexChanges[table, default: [:]][key] == nil {
                pendingIndexChanges[table, default: [:]][key] = .some(previous)
            }
        }

        /// Applies the pending changes of `table` to its indexes; with `onlyIfMany`, only when
        /// they are too many to apply cheaply at the next read (after a bulk write).
        mutating func refreshIndexes(_ table: String, onlyIfMany: Bool = false) {
            guard let changes = pendingIndexChanges[table], !changes.isEmpty, var tableIndexes = indexes[table]
            else { return }
            let rows = tables[table] ?? [:]
            if onlyIfMany && changes.count <= max(16, rows.count / 64) { return }
            indexes[table] = nil
            // Over a copy of the names: iterating `keys` would hold the dictionary, so mutating an
            // index in the loop would copy the dictionary and then every entry of the index.
            for name in Array(tableIndexes.keys) {
                tableIndexes[name]?.apply(changes) { rows[$0] }
            }
            indexes[table] = tableIndexes
            pendingIndexChanges[table] = nil
        }

        /// Builds the indexes of `schema`'s tables from their rows.
        mutating func buildIndexes() {
            indexes = [:]
            pendingIndexChanges = [:]
            for table in schema.tables where !table.indexes.isEmpty {
                let rows = (tables[table.name] ?? [:]).values
                indexes[table.name] = Dictionary(
                    table.indexes.map { ($0.name, InMemoryIndex($0, rows: rows)) },
                    uniquingKeysWith: { first, _ in first })
            }
        }
    }

    /// How many orderings of one table are kept sorted at once; a new one beyond it drops the others.
    private static let maximumOrderings = 4

    private let state = Locked(State())

    /// Creates an empty store; call ``open(schema:)`` before use.
    public init() {}

    public var info: StoreInfo { StoreInfo(backend: "memory") }

    public var schema: StoreSchema {
        get throws {
            try state.withLock { state in
                try InMemoryStore.requireOpen(state)
                return state.schema
            }
        }
    }

    public func open(schema: StoreSchema) throws {
        try schema.validate()
        try state.withLock { state in
            guard !state.isOpen else {
                throw OfflineSyncError(
                    .invalidOperation, "the in-memory store is already open; close it before opening it again")
            }
            let merged = try state.schema.merged(with: schema)
            try merged.validate()
            state.schema = merged
            for table in merged.tables where state.tables[table.name] == nil {
                state.tables[table.name] = [:]
            }
            state.buildIndexes()
            state.isOpen = true
        }
    }

    /// `true`: the rows live in this instance only.
    public var isConfinedToInstance: Bool { true }

    public func read(_ query: Query) throws -> QueryResult {
        try state.withLock { state in
            try InMemoryStore.requireOpen(state)
            return try InMemoryStore.read(query, in: &state)
        }
    }

    public func lookup(table: String, id: String) throws -> Item? {
        try state.withLock { state in
            try InMemoryStore.requireOpen(state)
            _ = try state.schema.requireTable(table)
            return state.tables[table]?[IdKey(id)]
        }
    }

    public func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try state.withLock { state in
            try InMemoryStore.requireOpen(state)
            // Move the state into the transaction so its writes mutate uniquely referenced storage
            // instead of copying every table on the first write; it moves back when the body ends.
            let transaction = Transaction(state: state)
            state = State()
            defer {
                state = transaction.state
                // The transaction lets go of the state, so that bringing the indexes up to date
                // below mutates uniquely referenced arrays instead of copying every index.
                transaction.state = State()
                // A bulk write brings the indexes up to date now, so that no read pays for it.
                for table in Array(state.pendingIndexChanges.keys) { state.refreshIndexes(table, onlyIfMany: true) }
            }
            do {
                return try body(transaction)
            } catch {
                transaction.rollBack()
                throw error
            }
        }
    }

    public func close() throws {
        state.withLock { $0.isOpen = false }
    }

    private static func requireOpen(_ state: State) throws {
        guard state.isOpen else {
            throw OfflineSyncError(.notOpen, "the in-memory store is not open; call open(schema:) first")
        }
    }

    /// Answers a query with ``QueryEvaluator``. A filter that pins the id (`id eq`, `id in`) is
    /// evaluated over the rows with those ids only; a filter with an `eq`, `in`, range or
    /// `startswith` conjunct on the first column of a declared index, or a page ordered by an
    /// index's columns, reads the rows an ``InMemoryIndexScan`` finds in that index (stopping at
    /// the page's end when the index's order is the query's); a page bounded on its first ordering key runs as
    /// a ``RangeScan`` over the table sorted in that order, sorted once and kept until the table
    /// changes, so paging through a large table costs a binary search per page, not a full scan
    /// (an unbounded page uses such a sorted copy too, when one is already kept).
    private static func read(_ query: Query, in state: inout State) throws -> QueryResult {
        let table = try state.schema.requireTable(query.table)
        let evaluator = try QueryEvaluator(query: query, schema: table)
        let rows = (state.tables[query.table] ?? [:]).values
        if let ids = RangeScan.pinnedIds(query.filter) {
            return evaluator.run(over: ids.compactMap { state.tables[query.table]?[IdKey($0)] })
        }
        if !table.indexes.isEmpty, let scan = InMemoryIndexScan(query, schema: table) {
            state.refreshIndexes(query.table)
            if let index = state.indexes[query.table]?[scan.indexName] {
                return scan.run(evaluator, over: index)
            }
        }
        guard let scan = RangeScan(query, schema: table) else {
            // An unbounded page in an order already sorted (e.g. a pull's first page) reads from
            // the first sorted row instead of filtering and sorting the whole table.
            if let sorted = state.orderings[query.table]?[query.orderBy], let scan = RangeScan(fromFirstRowOf: query) {
                return scan.run(evaluator, over: sorted)
            }
            return evaluator.run(over: rows)
        }
        if let sorted = state.orderings[query.table]?[query.orderBy] { return scan.run(evaluator, over: sorted) }
        let sorted = evaluator.ordered(rows)
        if state.orderings[query.table, default: [:]].count >= maximumOrderings { state.orderings[query.table] = [:] }
        state.orderings[query.table, default: [:]][query.orderBy] = sorted
        return scan.run(evaluator, over: sorted)
    }

    /// A transaction over the store's state, with an undo log of the rows it replaced.
    private final class Transaction: StoreTransaction {
        var state: State
        private var undo: [(table: String, id: String, previous: Item?)] = []

        init(state: State) {
            self.state = state
        }

        func rollBack() {
            for entry in undo.reversed() {
                let key = IdKey(entry.id)
                state.noteIndexChange(entry.table, key, previous: state.tables[entry.table]?[key])
                state.tables[entry.table]?[key] = entry.previous
                state.changed(entry.table)
            }
            undo.removeAll()
        }

        func read(_ query: Query) throws -> QueryResult {
            try InMemoryStore.read(query, in: &state)
        }

        func lookup(table: String, id: String) throws -> Item? {
            _ = try state.schema.requireTable(table)
            return state.tables[table]?[IdKey(id)]
        }

        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            let schema = try state.schema.requireTable(table)
            let normalized = try items.map { try schema.normalize($0, origin: origin) }
            state.changed(table)
            for item in normalized {
                let key = IdKey(item.id)
                let previous = state.tables[table]?.updateValue(item, forKey: key)
                state.noteIndexChange(table, key, previous: previous)
                undo.append((table, item.id, previous))
            }
        }

        func delete(ids: [String], from table: String) throws {
            _ = try state.schema.requireTable(table)
            state.changed(table)
            for id in ids {
                let key = IdKey(id)
                if let previous = state.tables[table]?.removeValue(forKey: key) {
                    state.noteIndexChange(table, key, previous: previous)
                    undo.append((table, id, previous))
                }
            }
        }

        func delete(matching query: Query) throws -> Int {
            let ids = try InMemoryStore.read(
                Query(
                    table: query.table, filter: query.filter, orderBy: query.orderBy,
                    skip: query.skip, top: query.top, selection: []), in: &state
            ).items.map(\.id)
            try delete(ids: ids, from: query.table)
            return ids.count
        }
    }
}
