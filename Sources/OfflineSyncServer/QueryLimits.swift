import OfflineSync

/// The largest query the server runs; a larger one is answered 400 naming the limit.
///
/// They keep one request from costing the server more than any real client needs (the Azure
/// clients send a handful of ordering keys and short filters) and keep generated SQL within what
/// both SQLite versions accept (SQLCipher's SQLite 3.15 binds at most 999 parameters).
public struct QueryLimits: Sendable, Hashable {
    /// The most `$orderby` keys. Default 16.
    public var maximumOrderingKeys: Int
    /// The most `$select` columns. Default 256.
    public var maximumSelectedColumns: Int
    /// The deepest `$filter` expression tree (`a and (b or not c)` is 4 deep). Default 24:
    /// SQLite's parser overflows its stack on filters nested a little deeper (about 30 levels of
    /// parenthesised `and`).
    public var maximumFilterDepth: Int
    /// The most literal values in a `$filter` (the values of `in` lists and comparisons together).
    /// Default 500.
    public var maximumFilterValues: Int

    /// Creates limits.
    public init(
        maximumOrderingKeys: Int = 16, maximumSelectedColumns: Int = 256, maximumFilterDepth: Int = 24,
        maximumFilterValues: Int = 500
    ) {
        self.maximumOrderingKeys = maximumOrderingKeys
        self.maximumSelectedColumns = maximumSelectedColumns
        self.maximumFilterDepth = maximumFilterDepth
        self.maximumFilterValues = maximumFilterValues
    }

    /// Throws ``OfflineSyncError`` `.invalidQuery` (answered 400) naming the first limit `query`
    /// exceeds.
    func check(_ query: Query) throws {
        if query.orderBy.count > maximumOrderingKeys {
            throw exceeded("$orderby has \(query.orderBy.count) keys", maximumOrderingKeys, "keys")
        }
        if let selection = query.selection, selection.count > maximumSelectedColumns {
            throw exceeded("$select names \(selection.count) columns", maximumSelectedColumns, "columns")
        }
        guard let filter = query.filter else { return }
        var values = 0
        let depth = Self.measure(filter, values: &values, limit: maximumFilterDepth)
        if depth > maximumFilterDepth {
            throw exceeded(
                "$filter is nested more than \(maximumFilterDepth) levels deep", maximumFilterDepth, "levels")
        }
        if values > maximumFilterValues {
            throw exceeded("$filter has \(values) values", maximumFilterValues, "values")
        }
    }

    private func exceeded(_ what: String, _ limit: Int, _ unit: String) -> OfflineSyncError {
        OfflineSyncError(
            .invalidQuery, "\(what); this server accepts at most \(limit) \(unit) in one query; split the query")
    }

    /// The depth of `expression` (stopping a little past `limit`) and, added to `values`, how many
    /// literals it holds.
    private static func measure(_ expression: FilterExpression, values: inout Int, limit: Int) -> Int {
        switch expression {
        case .literal:
            values += 1
            return 1
        case .column:
            return 1
        case .not(let operand), .negate(let operand):
            return 1 + measure(operand, values: &values, limit: limit)
        case .and(let left, let right), .or(let left, let right), .comparison(let left, _, let right),
            .arithmetic(let left, _, let right):
            let leftDepth = measure(left, values: &values, limit: limit)
            guard leftDepth <= limit else { return leftDepth + 1 }
            return 1 + max(leftDepth, measure(right, values: &values, limit: limit))
        case .isIn(let operand, let list):
            values += list.count
            return 1 + measure(operand, values: &values, limit: limit)
        case .function(_, let arguments):
            var deepest = 0
            for argument in arguments {
                deepest = max(deepest, measure(argument, values: &values, limit: limit))
                if deepest > limit { break }
            }
            return 1 + deepest
        }
    }
}
