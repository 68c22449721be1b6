/// A condition on a model's properties, written with key paths and printed to an ``Expression``:
///
/// ```swift
/// \.complete == false && .hasPrefix(\.text, "A")
/// \.priority >= 2 || \.due == nil
/// !.contains(\.text, "milk")
/// .isIn(\.status, [.open, .blocked])
/// ```
///
/// The right-hand values are stored as the model stores them (dates as dates, enums as their raw
/// values, `nil` as null), so a comparison means what it means on the column (see
/// <doc:FilterLanguage>). Key paths are turned into column names when the query runs; a key path
/// that does not read a stored column makes the read throw
/// ``OfflineSyncError/Code-swift.struct/invalidQuery``.
public struct ModelPredicate<Model: SyncModel>: Sendable {
    indirect enum Node: Sendable {
        case comparison(ModelKeyPath, ComparisonOperator, Operand)
        case function(Function, ModelKeyPath, Operand)
        case isIn(ModelKeyPath, [Operand])
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
    }

    /// A right-hand value as stored, or why it cannot be stored.
    enum Operand: Sendable {
        case value(Value)
        case invalid(String)

        init<V: Encodable>(_ value: V) {
            do {
                self = .value(try RowEncoder.columnValue(value, codingPath: []))
            } catch {
                self = .invalid(RowDecoder.describe(error))
            }
        }
    }

    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// True when the string property starts with `prefix` (bytes compared exactly).
    public static func hasPrefix(_ keyPath: KeyPath<Model, String>, _ prefix: String) -> Self {
        Self(.function(.startsWith, ModelKeyPath(keyPath), .value(.string(prefix))))
    }

    /// True when the optional string property starts with `prefix`; false when it is `nil`.
    public static func hasPrefix(_ keyPath: KeyPath<Model, String?>, _ prefix: String) -> Self {
        Self(.function(.startsWith, ModelKeyPath(keyPath), .value(.string(prefix))))
    }

    /// True when the string property ends with `suffix`.
    public static func hasSuffix(_ keyPath: KeyPath<Model, String>, _ suffix: String) -> Self {
        Self(.function(.endsWith, ModelKeyPath(keyPath), .value(.string(suffix))))
    }

    /// True when the optional string property ends with `suffix`; false when it is `nil`.
    public static func hasSuffix(_ keyPath: KeyPath<Model, String?>, _ suffix: String) -> Self {
        Self(.function(.endsWith, ModelKeyPath(keyPath), .value(.string(suffix))))
    }

    /// True when the string property contains `needle`.
    public static func contains(_ keyPath: KeyPath<Model, String>, _ needle: String) -> Self {
        Self(.function(.contains, ModelKeyPath(keyPath), .value(.string(needle))))
    }

    /// True when the optional string property contains `needle`; false when it is `nil`.
    public static func contains(_ keyPath: KeyPath<Model, String?>, _ needle: String) -> Self {
        Self(.function(.contains, ModelKeyPath(keyPath), .value(.string(needle))))
    }

    /// True when the property equals one of `values`.
    public static func isIn<V: Encodable>(_ keyPath: KeyPath<Model, V>, _ values: [V]) -> Self {
        Self(.isIn(ModelKeyPath(keyPath), values.map { Operand($0) }))
    }

    /// Both conditions.
    public static func && (lhs: Self, rhs: Self) -> Self { Self(.and(lhs.node, rhs.node)) }
    /// Either condition.
    public static func || (lhs: Self, rhs: Self) -> Self { Self(.or(lhs.node, rhs.node)) }
    /// The opposite condition (a `nil` operand of a function counts as false, so its negation holds).
    public static prefix func ! (operand: Self) -> Self { Self(.not(operand.node)) }

    /// The expression over the table's columns.
    func expression(_ layout: ModelLayout<Model>) throws -> Expression {
        try Self.expression(node, layout)
    }

    private static func expression(_ node: Node, _ layout: ModelLayout<Model>) throws -> Expression {
        func literal(_ operand: Operand, _ column: String) throws -> Expression {
            switch operand {
            case .value(let value): return .literal(layout.converted(value, column: column))
            case .invalid(let problem):
                throw OfflineSyncError(
                    .invalidQuery,
                    "a value compared with column '\(column)' of \(Model.self) cannot be stored: \(problem)")
            }
        }
        switch node {
        case .comparison(let keyPath, let op, let operand):
            let column = try layout.column(for: keyPath)
            return .comparison(.column(column), op, try literal(operand, column))
        case .function(let function, let keyPath, let operand):
            let column = try layout.column(for: keyPath)
            return .function(function, [.column(column), try literal(operand, column)])
        case .isIn(let keyPath, let operands):
            let column = try layout.column(for: keyPath)
            let values = try operands.map { operand -> Value in
                guard case .literal(let value) = try literal(operand, column) else { return .null }
                return value
            }
            return .isIn(.column(column), values)
        case .and(let lhs, let rhs): return .and(try expression(lhs, layout), try expression(rhs, layout))
        case .or(let lhs, let rhs): return .or(try expression(lhs, layout), try expression(rhs, layout))
        case .not(let operand): return .not(try expression(operand, layout))
        }
    }
}

/// True when the property equals `value` (`nil` matches a missing value).
public func == <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .eq, .init(rhs)))
}

/// True when the property differs from `value` (`nil` included).
public func != <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .ne, .init(rhs)))
}

/// True when the property is less than `value`; false when either is `nil`.
public func < <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .lt, .init(rhs)))
}

/// True when the property is at most `value`; false when either is `nil`.
public func <= <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .le, .init(rhs)))
}

/// True when the property is greater than `value`; false when either is `nil`.
public func > <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .gt, .init(rhs)))
}

/// True when the property is at least `value`; false when either is `nil`.
public func >= <Model: SyncModel, V: Encodable>(lhs: KeyPath<Model, V>, rhs: V) -> ModelPredicate<Model> {
    ModelPredicate(.comparison(ModelKeyPath(lhs), .ge, .init(rhs)))
}

/// A read of a model's table: a condition, an ordering, paging; the typed form of ``Query``.
///
/// ```swift
/// let page = try todos.read(.filter(\.complete == false).order(by: \.text).top(50))
/// let all = try todos.read(.all.order(by: \.due, descending: true))
/// ```
///
/// The order is the ordering keys and then `id`, as for ``Query``.
public struct ModelQuery<Model: SyncModel>: Sendable {
    var predicate: ModelPredicate<Model>?
    var ordering: [(ModelKeyPath, Bool)] = []
    var skipCount = 0
    var topCount: Int?

    /// A query of the rows matching `predicate` (every row when `nil`).
    public init(_ predicate: ModelPredicate<Model>? = nil) {
        self.predicate = predicate
    }

    /// Every row.
    public static var all: Self { Self() }

    /// The rows matching `predicate`.
    public static func filter(_ predicate: ModelPredicate<Model>) -> Self { Self(predicate) }

    /// This query narrowed to the rows that also match `predicate`.
    public func filter(_ predicate: ModelPredicate<Model>) -> Self {
        var copy = self
        copy.predicate = self.predicate.map { $0 && predicate } ?? predicate
        return copy
    }

    /// This query ordered by a property after the ordering keys it already has.
    public func order<V>(by keyPath: KeyPath<Model, V>, descending: Bool = false) -> Self {
        var copy = self
        copy.ordering.append((ModelKeyPath(keyPath), descending))
        return copy
    }

    /// This query without its first `count` rows (after ordering).
    public func skip(_ count: Int) -> Self {
        var copy = self
        copy.skipCount = count
        return copy
    }

    /// This query limited to `count` rows.
    public func top(_ count: Int) -> Self {
        var copy = self
        copy.topCount = count
        return copy
    }

    /// The untyped query on `table`.
    func query(table: String, layout: ModelLayout<Model>) throws -> Query {
        Query(
            table: table, filter: try predicate?.expression(layout),
            orderBy: try ordering.map { SortKey(try layout.column(for: $0.0), descending: $0.1) }, skip: skipCount,
            top: topCount)
    }
}
