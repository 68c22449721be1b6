/// A read of one table: filter, ordering, paging, total count and column selection.
///
/// The result order is the ``orderBy`` keys and then `id` ascending (byte-wise), so paging is
/// deterministic on every backend. Nulls sort before every other value in ascending order and after
/// them in descending order. `skip` and `top` apply after ordering; the total count, when requested,
/// counts every matching row regardless of `skip` and `top`.
public struct Query: Sendable, Hashable, CustomStringConvertible {
    /// The table to read.
    public var table: String
    /// The filter; `nil` matches every row.
    public var filter: Expression?
    /// Ordering keys, most significant first.
    public var orderBy: [SortKey]
    /// Rows to skip after ordering (≥ 0).
    public var skip: Int
    /// The most rows to return (≥ 0), or `nil` for all.
    public var top: Int?
    /// Whether to count every matching row (``QueryResult/totalCount``).
    public var includeTotalCount: Bool
    /// Columns to return (`id` is always returned), or `nil` for all.
    public var selection: [String]?

    /// Creates a query.
    public init(
        table: String, filter: Expression? = nil, orderBy: [SortKey] = [], skip: Int = 0,
        top: Int? = nil, includeTotalCount: Bool = false, selection: [String]? = nil
    ) {
        self.table = table
        self.filter = filter
        self.orderBy = orderBy
        self.skip = skip
        self.top = top
        self.includeTotalCount = includeTotalCount
        self.selection = selection
    }

    /// Checks the query against its table: columns exist, the filter is boolean and well-typed,
    /// `skip` and `top` are not negative. Throws ``OfflineSyncError/Code-swift.struct/invalidQuery``
    /// or ``OfflineSyncError/Code-swift.struct/unknownColumn`` naming the operand at fault.
    public func validate(against schema: TableSchema) throws {
        guard skip >= 0 else {
            throw OfflineSyncError(.invalidQuery, "query on '\(table)': skip is \(skip); it must be 0 or more")
        }
        if let top, top < 0 {
            throw OfflineSyncError(.invalidQuery, "query on '\(table)': top is \(top); it must be 0 or more")
        }
        if let filter {
            let type = try ExpressionTypes(schema: schema).type(of: filter)
            guard type == nil || type == .bool else {
                throw OfflineSyncError(
                    .invalidQuery,
                    "query on '\(table)': the filter \(ODataPrinter.filter(filter)) is a \(type!.rawValue), not a condition"
                )
            }
        }
        for key in orderBy {
            _ = try ExpressionTypes(schema: schema).columnType(key.column)
        }
        for column in selection ?? [] {
            _ = try ExpressionTypes(schema: schema).columnType(column)
        }
    }

    public var description: String {
        var parts = ["table=\(table)"]
        if let filter { parts.append("$filter=\(ODataPrinter.filter(filter))") }
        if !orderBy.isEmpty { parts.append("$orderby=\(ODataPrinter.orderBy(orderBy))") }
        if skip > 0 { parts.append("$skip=\(skip)") }
        if let top { parts.append("$top=\(top)") }
        if includeTotalCount { parts.append("$inlinecount=allpages") }
        if let selection { parts.append("$select=\(selection.joined(separator: ","))") }
        return parts.joined(separator: "&")
    }
}

/// The answer to a ``Query``.
public struct QueryResult: Sendable, Hashable {
    /// The rows, in query order.
    public var items: [Item]
    /// The number of rows matching the filter, when the query asked for it.
    public var totalCount: Int?

    /// Creates a result.
    public init(items: [Item], totalCount: Int? = nil) {
        self.items = items
        self.totalCount = totalCount
    }
}

/// Type checking of expressions against a table.
struct ExpressionTypes {
    let schema: TableSchema

    func columnType(_ name: String) throws -> ColumnType {
        if name == "id" { return .string }
        guard let column = schema.column(named: name) else {
            throw OfflineSyncError(
                .unknownColumn, "query on '\(schema.name)' names column '\(name)', which the table does not declare")
        }
        return column.type
    }

    /// The type of an expression; `nil` for the `null` literal.
    func type(of expression: Expression) throws -> ColumnType? {
        switch expression {
        case .literal(let value):
            return value.type
        case .column(let name):
            return try columnType(name)
        case .not(let operand):
            try requireBool(operand)
            return .bool
        case .and(let lhs, let rhs), .or(let lhs, let rhs):
            try requireBool(lhs)
            try requireBool(rhs)
            return .bool
        case .comparison(let lhs, let op, let rhs):
            let left = try type(of: lhs)
            let right = try type(of: rhs)
            if let left, let right, !compatible(left, right) {
                throw OfflineSyncError(
                    .invalidQuery,
                    "query on '\(schema.name)': cannot compare \(left.rawValue) \(ODataPrinter.filter(lhs)) with \(right.rawValue) \(ODataPrinter.filter(rhs)) using '\(op.rawValue)'"
                )
            }
            return .bool
        case .isIn(let operand, let values):
            let left = try type(of: operand)
            for value in values {
                if let left, let right = value.type, !compatible(left, right) {
                    throw OfflineSyncError(
                        .invalidQuery,
                        "query on '\(schema.name)': 'in' list value \(value) is a \(right.rawValue) but \(ODataPrinter.filter(operand)) is a \(left.rawValue)"
                    )
                }
            }
            return .bool
        case .function(let function, let arguments):
            let parameters = function.parameterTypes
            guard arguments.count == parameters.count else {
                throw OfflineSyncError(
                    .invalidQuery,
                    "query on '\(schema.name)': \(function.rawValue) takes \(parameters.count) argument(s), got \(arguments.count)"
                )
            }
            for (argument, parameter) in zip(arguments, parameters) {
                if let actual = try type(of: argument), actual != parameter {
                    throw OfflineSyncError(
                        .invalidQuery,
                        "query on '\(schema.name)': \(function.rawValue) needs a \(parameter.rawValue) argument, but \(ODataPrinter.filter(argument)) is a \(actual.rawValue)"
                    )
                }
            }
            return function.resultType
        }
    }

    private func requireBool(_ expression: Expression) throws {
        if let actual = try type(of: expression), actual != .bool {
            throw OfflineSyncError(
                .invalidQuery,
                "query on '\(schema.name)': \(ODataPrinter.filter(expression)) is a \(actual.rawValue), not a condition"
            )
        }
    }

    /// Integers and doubles mix; JSON columns compare with strings (their text).
    private func compatible(_ a: ColumnType, _ b: ColumnType) -> Bool {
        if a == b { return true }
        let numeric: Set<ColumnType> = [.integer, .double]
        let text: Set<ColumnType> = [.string, .json]
        return (numeric.contains(a) && numeric.contains(b)) || (text.contains(a) && text.contains(b))
    }
}
