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
    public var filter: FilterExpression?
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
        table: String, filter: FilterExpression? = nil, orderBy: [SortKey] = [], skip: Int = 0,
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
            let types = ExpressionTypes(schema: schema)
            var concatCalls = 0
            try types.checkGrowth(of: filter, insideReplace: false, concatCalls: &concatCalls)
            let type = try types.type(of: filter)
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
    func type(of expression: FilterExpression) throws -> ColumnType? {
        switch expression {
        case .literal(let value):
            // Stores hold finite doubles only, and a NaN literal has no order: SQLite binds it as
            // null while a comparison in Swift finds it equal to every number.
            if case .double(let number) = value, !number.isFinite {
                throw OfflineSyncError(
                    .invalidQuery,
                    "query on '\(schema.name)': the filter compares with \(number.isNaN ? "NaN" : "an infinity"), which no column holds (stores keep finite doubles only); compare with a finite number"
                )
            }
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
        case .arithmetic(let lhs, let op, let rhs):
            let left = try numericType(of: lhs, operation: "'\(op.rawValue)'")
            let right = try numericType(of: rhs, operation: "'\(op.rawValue)'")
            return left == .double || right == .double ? .double : .integer
        case .negate(let operand):
            return try numericType(of: operand, operation: "unary minus")
        case .function(let function, let arguments):
            guard function.arity.contains(arguments.count) else {
                throw OfflineSyncError(
                    .invalidQuery,
                    "query on '\(schema.name)': \(function.rawValue) takes \(function.arity.lowerBound)…\(function.arity.upperBound) argument(s), got \(arguments.count)"
                )
            }
            switch function {
            case .round, .floor, .ceiling:
                return try numericType(of: arguments[0], operation: function.rawValue)
            default:
                break
            }
            for (argument, parameter) in zip(arguments, function.parameterTypes) {
                if let actual = try type(of: argument), actual != parameter {
                    throw OfflineSyncError(
                        .invalidQuery,
                        "query on '\(schema.name)': \(function.rawValue) needs \(parameter == .integer ? "an" : "a") \(parameter.rawValue) argument, but \(ODataPrinter.filter(argument)) is a \(actual.rawValue)"
                    )
                }
            }
            return function.resultType
        }
    }

    /// The type of an operand that must be a number: integer, double or `nil` (the null literal).
    private func numericType(of expression: FilterExpression, operation: String) throws -> ColumnType? {
        let actual = try type(of: expression)
        guard actual == nil || actual == .integer || actual == .double else {
            throw OfflineSyncError(
                .invalidQuery,
                "query on '\(schema.name)': \(operation) needs a number, but \(ODataPrinter.filter(expression)) is a \(actual!.rawValue)"
            )
        }
        return actual
    }

    /// The most `concat` calls in one filter.
    static let maximumConcatCalls = 8
    /// The longest `replace` replacement, in Unicode scalars (the Azure Node server's limit).
    static let maximumReplacementLength = 100

    /// Bounds how much longer than its input a string can grow while a filter is evaluated (the
    /// Azure Node server's rules, plus a cap on `concat`): the replacement of a `replace` is a
    /// string literal of at most ``maximumReplacementLength`` scalars, `replace` calls do not nest,
    /// and a filter has at most ``maximumConcatCalls`` `concat` calls. Without these, a short
    /// filter could make every row allocate gigabytes.
    func checkGrowth(of expression: FilterExpression, insideReplace: Bool, concatCalls: inout Int) throws {
        switch expression {
        case .literal, .column:
            return
        case .not(let operand), .negate(let operand), .isIn(let operand, _):
            try checkGrowth(of: operand, insideReplace: insideReplace, concatCalls: &concatCalls)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            try checkGrowth(of: lhs, insideReplace: insideReplace, concatCalls: &concatCalls)
            try checkGrowth(of: rhs, insideReplace: insideReplace, concatCalls: &concatCalls)
        case .function(let function, let arguments):
            if function == .concat {
                concatCalls += 1
                guard concatCalls <= ExpressionTypes.maximumConcatCalls else {
                    throw OfflineSyncError(
                        .invalidQuery,
                        "query on '\(schema.name)': a filter may call concat at most \(ExpressionTypes.maximumConcatCalls) times"
                    )
                }
            }
            if function == .replace {
                guard !insideReplace else {
                    throw OfflineSyncError(
                        .invalidQuery, "query on '\(schema.name)': calls of replace cannot be nested")
                }
                let replacement = arguments.count == 3 ? arguments[2] : .literal(.null)
                switch replacement {
                case .literal(.string(let text))
                where text.unicodeScalars.count <= ExpressionTypes.maximumReplacementLength:
                    break
                case .literal(.null):
                    break
                default:
                    throw OfflineSyncError(
                        .invalidQuery,
                        "query on '\(schema.name)': the third argument of replace must be a string literal of at most \(ExpressionTypes.maximumReplacementLength) characters, not \(ODataPrinter.filter(replacement))"
                    )
                }
            }
            for argument in arguments {
                try checkGrowth(
                    of: argument, insideReplace: insideReplace || function == .replace, concatCalls: &concatCalls)
            }
        }
    }

    private func requireBool(_ expression: FilterExpression) throws {
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
