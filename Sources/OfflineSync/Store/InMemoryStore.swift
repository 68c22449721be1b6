import Synchronization

/// The reference store: every table in memory, every query answered by ``QueryEvaluator``.
///
/// It defines the semantics that the conformance suite holds every other backend to, and it is a
/// real store for tests and for apps that need no persistence. Data lives as long as the instance:
/// closing and reopening the same instance keeps it (as a file would), a new instance starts empty.
/// Transactions apply writes in place and keep an undo log, so a throwing transaction is rolled
/// back without copying the tables.
///
/// Paging reads ordered by one column (then `id`), the requests a table service answers during a
/// pull, use a sorted copy of the table kept until the table's next write, so a page costs a
/// binary search and the page's rows instead of a scan of the whole table (see ``read(_:)``).
public final class InMemoryStore: LocalStore {
    private struct State {
        var isOpen = false
        var schema = StoreSchema([])
        var tables: [String: [RowKey: Item]] = [:]
        /// Rows sorted by a column, then id, by table and column; dropped when the table changes.
        var sortedRows: [String: [String: [Item]]] = [:]
    }

    /// A row's id compared by its UTF-8 bytes. `String`'s own `==` uses canonical equivalence, under
    /// which precomposed and decomposed "é" would be one key; ids are byte-wise (see ``Item``).
    private struct RowKey: Hashable {
        let bytes: [UInt8]
        init(_ id: String) { bytes = Array(id.utf8) }
    }

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
                throw OfflineSyncError(.invalidOperation, "the in-memory store is already open; close it before opening it again")
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

    /// Answers a query with ``QueryEvaluator``. A page (`top` set, no total count) ordered by one
    /// ascending column, or by one ascending column and then `id`, walks a sorted copy of the table
    /// from the first row that the filter's `column gt/ge value` condition admits (found by binary
    /// search) and stops when the page is full; every row is still checked by the evaluator's
    /// filter and the order is the evaluator's, so the answer is the same as a full evaluation.
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
            return state.tables[table]?[RowKey(id)]
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

    private static func read(_ query: Query, in state: inout State) throws -> QueryResult {
        let table = try state.schema.requireTable(query.table)
        let evaluator = try QueryEvaluator(query: query, schema: table)
        if let column = pagedOrderColumn(of: query), let top = query.top {
            let rows = sortedRows(of: query.table, by: column, in: &state)
            return QueryResult(items: page(of: rows, by: column, skip: query.skip, top: top, evaluator: evaluator))
        }
        return evaluator.run(over: (state.tables[query.table] ?? [:]).values)
    }

    /// The column of a page ordered by `[column]` or `[column, id]`, ascending, without a total count.
    private static func pagedOrderColumn(of query: Query) -> String? {
        guard query.top != nil, !query.includeTotalCount, let first = query.orderBy.first, !first.descending else { return nil }
        let rest = query.orderBy.dropFirst()
        guard rest.isEmpty || (rest.count == 1 && rest.first?.column == "id" && rest.first?.descending == false) else { return nil }
        return first.column
    }

    /// The table's rows in the order of ``QueryEvaluator`` for `[column]` (nulls first, ties by id
    /// bytes), built once and kept until the table's next write.
    private static func sortedRows(of table: String, by column: String, in state: inout State) -> [Item] {
        if let rows = state.sortedRows[table]?[column] { return rows }
        let keyed = (state.tables[table] ?? [:]).values.map { (key: $0[column], item: $0) }
        let rows = keyed.sorted { lhs, rhs in
            let order = ValueSemantics.compare(lhs.key, rhs.key)
            return order != 0 ? order < 0 : ValueSemantics.compareBytes(lhs.item.id, rhs.item.id) < 0
        }.map(\.item)
        state.sortedRows[table, default: [:]][column] = rows
        return rows
    }

    /// The page of `rows` (sorted by `column`) that the evaluator's query selects.
    private static func page(of rows: [Item], by column: String, skip: Int, top: Int, evaluator: QueryEvaluator) -> [Item] {
        var start = 0
        if let (op, bound) = lowerBound(on: column, in: evaluator.query.filter) {
            var low = 0, high = rows.count
            while low < high {
                let middle = (low + high) / 2
                if QueryEvaluator.compare(rows[middle][column], op, bound) { high = middle } else { low = middle + 1 }
            }
            start = low
        }
        var page: [Item] = []
        var skipped = 0
        for item in rows[start...] where page.count < top && evaluator.matches(item) {
            if skipped < skip { skipped += 1; continue }
            page.append(evaluator.select(item))
        }
        return page
    }

    /// A top-level conjunct `column gt value` or `column ge value` of the filter: it holds on a
    /// suffix of rows sorted by `column` (nulls, first, never satisfy it).
    private static func lowerBound(on column: String, in filter: Expression?) -> (ComparisonOperator, Value)? {
        switch filter {
        case .comparison(.column(let name), let op, .literal(let value))? where name == column && (op == .gt || op == .ge) && !value.isNull:
            return (op, value)
        case .and(let lhs, let rhs)?:
            return lowerBound(on: column, in: lhs) ?? lowerBound(on: column, in: rhs)
        default:
            return nil
        }
    }

    /// A transaction over the store's state, with an undo log of the rows it replaced.
    private final class Transaction: StoreTransaction {
        var state: State
        private var undo: [(table: String, id: String, previous: Item?)] = []

        init(state: State) {
            self.state = state
        }

        func rollBack() {
            state.sortedRows.removeAll()
            for entry in undo.reversed() {
                state.tables[entry.table]?[RowKey(entry.id)] = entry.previous
            }
            undo.removeAll()
        }

        func read(_ query: Query) throws -> QueryResult {
            try InMemoryStore.read(query, in: &state)
        }

        func lookup(table: String, id: String) throws -> Item? {
            _ = try state.schema.requireTable(table)
            return state.tables[table]?[RowKey(id)]
        }

        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            let schema = try state.schema.requireTable(table)
            let normalized = try items.map { try schema.normalize($0, origin: origin) }
            state.sortedRows[table] = nil
            for item in normalized {
                let previous = state.tables[table]?.updateValue(item, forKey: RowKey(item.id))
                undo.append((table, item.id, previous))
            }
        }

        func delete(ids: [String], from table: String) throws {
            _ = try state.schema.requireTable(table)
            state.sortedRows[table] = nil
            for id in ids {
                if let previous = state.tables[table]?.removeValue(forKey: RowKey(id)) {
                    undo.append((table, id, previous))
                }
            }
        }

        func delete(matching query: Query) throws -> Int {
            let ids = try InMemoryStore.read(Query(table: query.table, filter: query.filter, orderBy: query.orderBy,
                                                   skip: query.skip, top: query.top, selection: []), in: &state).items.map(\.id)
            try delete(ids: ids, from: query.table)
            return ids.count
        }
    }
}
