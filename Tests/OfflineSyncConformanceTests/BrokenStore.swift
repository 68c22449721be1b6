import OfflineSync
import Synchronization

/// A test double that wraps ``InMemoryStore`` and breaks exactly one rule of the store contract,
/// to prove that the conformance suite catches that kind of bug.
final class BrokenStore: LocalStore {
    /// The one rule a ``BrokenStore`` breaks.
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Reads and deletes by query ignore `top`.
        case ignoresTop
        /// Orderings put nulls last in both directions (the contract puts them first ascending).
        case ordersNullsLast
        /// Filters compare strings without regard to letter case.
        case comparesStringsCaseInsensitively
        /// Upserts store `-0.0` as `0.0`.
        case dropsNegativeZeroSign
        /// Every operation of a transaction commits on its own, so a throw keeps what came before.
        case commitsPartialTransactions
        /// Closing forgets every table, so a reopened store starts empty.
        case losesSchemaOnReopen

        var description: String { rawValue }
    }

    let fault: Fault
    private let inner = Mutex(InMemoryStore())

    init(_ fault: Fault) {
        self.fault = fault
    }

    private var store: InMemoryStore { inner.withLock { $0 } }

    var info: StoreInfo { StoreInfo(backend: "broken-\(fault)") }

    var schema: StoreSchema { get throws { try store.schema } }

    func open(schema: StoreSchema) throws {
        try store.open(schema: schema)
    }

    func read(_ query: Query) throws -> QueryResult {
        let schema = try store.schema
        return try distortedRead(query, schema: schema, read: store.read)
    }

    func lookup(table: String, id: String) throws -> Item? {
        try store.lookup(table: table, id: id)
    }

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        let store = self.store
        let schema = try store.schema
        if fault == .commitsPartialTransactions {
            return try body(Transaction(store: self, schema: schema, target: .autocommit(store)))
        }
        return try store.write { inner in
            try body(Transaction(store: self, schema: schema, target: .transaction(inner)))
        }
    }

    func close() throws {
        try inner.withLock { store in
            try store.close()
            if fault == .losesSchemaOnReopen { store = InMemoryStore() }
        }
    }

    /// Answers `query` through `read`, bending the rule this store breaks.
    fileprivate func distortedRead(_ query: Query, schema: StoreSchema, read: (Query) throws -> QueryResult) throws
        -> QueryResult
    {
        switch fault {
        case .ignoresTop:
            var widened = query
            widened.top = nil
            return try read(widened)
        case .ordersNullsLast where !query.orderBy.isEmpty:
            let evaluator = try QueryEvaluator(query: query, schema: schema.requireTable(query.table))
            var matching = try read(Query(table: query.table, filter: query.filter)).items
            matching.sort { nullsLastPrecedes($0, $1, query.orderBy) }
            let page = matching.dropFirst(query.skip).prefix(query.top ?? matching.count).map(evaluator.select)
            return QueryResult(items: Array(page), totalCount: query.includeTotalCount ? matching.count : nil)
        case .comparesStringsCaseInsensitively:
            let table = try schema.requireTable(query.table)
            var folded = query
            folded.filter = query.filter.map { foldCase($0, in: table) }
            return try read(folded)
        default:
            return try read(query)
        }
    }

    /// Items as this store writes them.
    fileprivate func distorted(_ items: [Item]) -> [Item] {
        guard fault == .dropsNegativeZeroSign else { return items }
        return items.map { item in
            Item(
                id: item.id,
                values: item.values.mapValues { value in
                    if case .double(let number) = value, number == 0 { return .double(0) }
                    return value
                })
        }
    }

    private func nullsLastPrecedes(_ lhs: Item, _ rhs: Item, _ keys: [SortKey]) -> Bool {
        for key in keys {
            let left = lhs[key.column]
            let right = rhs[key.column]
            if left.isNull != right.isNull { return right.isNull }
            let order = ValueSemantics.compare(left, right)
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return ValueSemantics.compareBytes(lhs.id, rhs.id) < 0
    }

    /// `expression` with every string column read through `tolower` and every string literal in
    /// lower case, so comparisons ignore ASCII letter case.
    private func foldCase(_ expression: Expression, in table: TableSchema) -> Expression {
        func fold(_ expression: Expression) -> Expression { foldCase(expression, in: table) }
        func fold(_ value: Value) -> Value {
            if case .string(let text) = value { return .string(text.lowercased()) }
            return value
        }
        switch expression {
        case .literal(let value): return .literal(fold(value))
        case .column(let name):
            let isString = name == "id" || table.column(named: name)?.type == .string
            return isString ? .function(.toLower, [expression]) : expression
        case .not(let operand): return .not(fold(operand))
        case .and(let lhs, let rhs): return .and(fold(lhs), fold(rhs))
        case .or(let lhs, let rhs): return .or(fold(lhs), fold(rhs))
        case .comparison(let lhs, let op, let rhs): return .comparison(fold(lhs), op, fold(rhs))
        case .isIn(let operand, let values): return .isIn(fold(operand), values.map(fold))
        case .function(let function, let arguments): return .function(function, arguments.map(fold))
        case .arithmetic(let lhs, let op, let rhs): return .arithmetic(fold(lhs), op, fold(rhs))
        case .negate(let operand): return .negate(fold(operand))
        }
    }

    /// The transaction handed to `write`'s body: the real one, or (for
    /// ``Fault/commitsPartialTransactions``) one that commits every operation on its own.
    private struct Transaction: StoreTransaction {
        enum Target {
            case transaction(any StoreTransaction)
            case autocommit(InMemoryStore)
        }

        let store: BrokenStore
        let schema: StoreSchema
        let target: Target

        private func perform<T>(_ operation: (any StoreTransaction) throws -> T) throws -> T {
            switch target {
            case .transaction(let transaction): return try operation(transaction)
            case .autocommit(let store): return try store.write(operation)
            }
        }

        func read(_ query: Query) throws -> QueryResult {
            try store.distortedRead(query, schema: schema) { query in try perform { try $0.read(query) } }
        }

        func lookup(table: String, id: String) throws -> Item? {
            try perform { try $0.lookup(table: table, id: id) }
        }

        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            let items = store.distorted(items)
            try perform { try $0.upsert(items, into: table, origin: origin) }
        }

        func delete(ids: [String], from table: String) throws {
            try perform { try $0.delete(ids: ids, from: table) }
        }

        func delete(matching query: Query) throws -> Int {
            var idsOnly = query
            idsOnly.selection = []
            idsOnly.includeTotalCount = false
            let ids = try read(idsOnly).items.map(\.id)
            try delete(ids: ids, from: query.table)
            return ids.count
        }
    }
}
