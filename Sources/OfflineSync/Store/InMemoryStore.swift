import Synchronization

/// The reference store: every table in memory, every query answered by ``QueryEvaluator``.
///
/// It defines the semantics that the conformance suite holds every other backend to, and it is a
/// real store for tests and for apps that need no persistence. Data lives as long as the instance:
/// closing and reopening the same instance keeps it (as a file would), a new instance starts empty.
/// Transactions apply writes in place and keep an undo log, so a throwing transaction is rolled
/// back without copying the tables.
public final class InMemoryStore: LocalStore {
    private struct State {
        var isOpen = false
        var schema = StoreSchema([])
        var tables: [String: [IdKey: Item]] = [:]
        /// Rows of a table sorted by an ordering that a ``RangeScan`` used, kept until the
        /// table's next write (at most ``maximumOrderings`` per table).
        var orderings: [String: [[SortKey]: [Item]]] = [:]

        /// Drops the sorted copies of a table after a write to it.
        mutating func changed(_ table: String) {
            if orderings[table] != nil { orderings[table] = nil }
        }
    }

    /// How many orderings of one table are kept sorted at once; a new one beyond it drops the others.
    private static let maximumOrderings = 4

    private let state = Mutex(State())

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
            defer { state = transaction.state }
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
    /// evaluated over the rows with those ids only; a page bounded on its first ordering key runs as
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
                state.tables[entry.table]?[IdKey(entry.id)] = entry.previous
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
                let previous = state.tables[table]?.updateValue(item, forKey: IdKey(item.id))
                undo.append((table, item.id, previous))
            }
        }

        func delete(ids: [String], from table: String) throws {
            _ = try state.schema.requireTable(table)
            state.changed(table)
            for id in ids {
                if let previous = state.tables[table]?.removeValue(forKey: IdKey(id)) {
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
