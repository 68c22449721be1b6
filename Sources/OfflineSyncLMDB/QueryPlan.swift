import OfflineSync

/// How a query reaches its candidate rows: by id, by a range of ids, by ranges of an index, or
/// by walking the whole table. Candidates are a superset of the matching rows; the reference
/// evaluator decides which match, so every plan gives the same answer as ``OfflineSync/InMemoryStore``.
struct QueryPlan {
    enum Access {
        /// Point lookups of these ids (deduplicated), in no particular order.
        case ids([String])
        /// A walk of the items sub-database over a range of ids.
        case primary(KeyRange)
        /// Walks of an index over ranges of its key prefixes.
        case index(IndexLayout, [KeyRange])
    }

    var access: Access
    /// Walk backwards (for a descending first sort key).
    var descending = false
    /// Candidates arrive in the order of the query's first sort key (ties allowed), so a query
    /// with `top` can stop once it has enough rows and their ties.
    var isOrdered = false
    /// Candidates arrive in the query's whole order (ties broken by id as the query breaks them),
    /// except among index keys whose value part was cut (see ``IndexKey``): a walk with `top` can
    /// stop at the page's last row.
    var isExactlyOrdered = false
    /// The ranges of an `.index` access are sorted in walk order and share no key, so no row is
    /// reached twice.
    var rangesAreDisjoint = false

    /// The longest id (LMDB keys of the items sub-databases).
    static let maximumIdBytes = TableSchema.maximumIdLength

    /// Chooses the access path for `query` over `layout`, in this order of preference: ids from
    /// `id eq`/`id in`; an index whose first column has `eq`/`in` (the one whose leading columns
    /// the equalities pin down furthest); a range of ids; a range of an
    /// index's first column; an index walk in sort order when only the first rows are wanted;
    /// the whole table.
    static func plan(_ query: Query, layout: TableLayout) -> QueryPlan {
        var plan = access(query, layout: layout)
        switch plan.access {
        case .ids: break
        case .primary: plan.isExactlyOrdered = plan.isOrdered
        case .index(let index, _):
            plan.isExactlyOrdered = plan.isOrdered && !plan.descending && ordersLikeKeys(query.orderBy, index)
        }
        return plan
    }

    /// `true` when the ordering `orderBy` (then `id`) is the order of `index`'s keys: its
    /// columns in turn, ascending, then the id.
    private static func ordersLikeKeys(_ orderBy: [SortKey], _ index: IndexLayout) -> Bool {
        var keys = orderBy
        if let idKey = keys.firstIndex(where: { $0.column == "id" }) {
            guard !keys[idKey].descending else { return false }
            keys.removeSubrange(idKey...)
        }
        return keys.count == index.columns.count
            && zip(keys, index.columns).allSatisfy { !$0.descending && $0.column == $1.name }
    }

    /// Sorts equality ranges into walk order; `true` when no two of them share a key.
    private static func sortedDisjoint(_ ranges: inout [KeyRange], descending: Bool) -> Bool {
        ranges.sort { ($0.lower ?? []).lexicographicallyPrecedes($1.lower ?? []) }
        var disjoint = true
        for position in ranges.indices.dropFirst() {
            guard let upper = ranges[position - 1].upper, let lower = ranges[position].lower else {
                disjoint = false
                break
            }
            // Prefix-inclusive end: the next range must start above every key that begins with `upper`.
            if !upper.lexicographicallyPrecedes(lower.prefix(upper.count)) {
                disjoint = false
                break
            }
        }
        if descending { ranges.reverse() }
        return disjoint
    }

    private static func access(_ query: Query, layout: TableLayout) -> QueryPlan {
        let constraints = conjuncts(of: query.filter).compactMap(Constraint.init)
        let firstKey = query.orderBy.first ?? SortKey("id")
        let ordersById = firstKey.column == "id"

        if let equality = constraints.first(where: { $0.column == "id" && $0.equals != nil }),
            let values = equality.equals
        {
            // Ids are equal byte for byte: a `Set<String>` would take "é" and "e\u{301}" (Unicode
            // canonical equivalents) for one id and look up only the first.
            var seen: Set<[UInt8]> = []
            let ids = values.compactMap { value -> String? in
                switch value {
                case .string(let text), .json(let text): return text
                default: return nil
                }
            }.filter { seen.insert(Array($0.utf8)).inserted }
            return QueryPlan(access: .ids(ids))
        }
        var best: (plan: QueryPlan, prefixLength: Int)?
        for index in layout.indexes {
            let column = index.firstColumn
            guard let values = constraints.first(where: { $0.column == column.name && $0.equals != nil })?.equals else {
                continue
            }
            let equalities = values.map { equalityRange($0, type: column.type) }
            guard !equalities.contains(where: { $0 == nil }) else { continue }
            var ranges = equalities.compactMap { $0 }
            if ranges.count == 1 {
                ranges = [narrowed(ranges[0], index: index, constraints: constraints)]
            }
            let sortsByColumn = firstKey.column == column.name
            let disjoint =
                ranges.count < 2 || sortedDisjoint(&ranges, descending: sortsByColumn && firstKey.descending)
            let ordered = disjoint && sortsByColumn
            let plan = QueryPlan(
                access: .index(index, ranges), descending: ordered && firstKey.descending,
                isOrdered: ordered, rangesAreDisjoint: disjoint)
            let prefixLength = ranges.count == 1 ? ranges[0].lower?.count ?? 0 : 0
            if best.map({ prefixLength > $0.prefixLength }) ?? true { best = (plan, prefixLength) }
        }
        if let best { return best.plan }
        let idRanges = constraints.filter { $0.column == "id" && $0.equals == nil }
        if !idRanges.isEmpty,
            let range = combine(
                idRanges, start: nil, key: { value, _ in idKey(value) },
                prefixKey: { Array($0.utf8.prefix(maximumIdBytes + 1)) })
        {
            return QueryPlan(
                access: .primary(range), descending: ordersById && firstKey.descending, isOrdered: ordersById)
        }
        for index in layout.indexes {
            let column = index.firstColumn
            let ranges = constraints.filter { $0.column == column.name && $0.equals == nil }
            guard !ranges.isEmpty,
                let range = combine(
                    ranges, start: IndexKey.firstNonNull, key: { indexKey($0, type: column.type, roundingUp: $1) },
                    prefixKey: { column.type == .string ? IndexKey.stringPrefix($0) : nil })
            else { continue }
            let ordered = firstKey.column == column.name
            return QueryPlan(
                access: .index(index, [range]), descending: ordered && firstKey.descending, isOrdered: ordered)
        }
        if query.top != nil, !ordersById,
            let index = layout.indexes.first(where: { $0.firstColumn.name == firstKey.column })
        {
            return QueryPlan(access: .index(index, [.all]), descending: firstKey.descending, isOrdered: true)
        }
        return QueryPlan(access: .primary(.all), descending: ordersById && firstKey.descending, isOrdered: ordersById)
    }

    /// The top-level `and` operands of a filter.
    private static func conjuncts(of filter: FilterExpression?) -> [FilterExpression] {
        guard let filter else { return [] }
        if case .and(let lhs, let rhs) = filter { return conjuncts(of: lhs) + conjuncts(of: rhs) }
        return [filter]
    }

    /// `range` (one exact value of the index's first column) extended by single-value equalities
    /// on the following columns, so `table eq 'a' and itemId eq 'b'` walks only the rows of both
    /// values in an index on `(table, itemId)`.
    private static func narrowed(_ range: KeyRange, index: IndexLayout, constraints: [Constraint]) -> KeyRange {
        guard var prefix = range.lower, prefix == range.upper else { return range }
        for column in index.columns.dropFirst() {
            guard prefix.count < IndexKey.maximumValueBytes,
                let values = constraints.first(where: { $0.column == column.name && $0.equals?.count == 1 })?.equals,
                let component = equalityRange(values[0], type: column.type),
                let exact = component.lower, exact == component.upper
            else { break }
            prefix += exact
        }
        let cut = Array(prefix.prefix(IndexKey.maximumValueBytes))
        return KeyRange(lower: cut, upper: cut)
    }

    /// The key range of the rows whose first indexed value equals `value` (null included).
    private static func equalityRange(_ value: Value, type: ColumnType) -> KeyRange? {
        if value.isNull {
            return KeyRange(lower: IndexKey.prefix(.null, as: type), upper: IndexKey.prefix(.null, as: type))
        }
        guard let low = indexKey(value, type: type, roundingUp: false),
            let high = indexKey(value, type: type, roundingUp: true)
        else { return nil }
        return KeyRange(lower: low, upper: high)
    }

    /// One key range covering every row that satisfies all the range constraints: the greatest
    /// lower and the least upper bound, each turned into key bytes by `key` (rounding outwards).
    private static func combine(
        _ constraints: [Constraint], start: [UInt8]?,
        key: (Value, _ roundingUp: Bool) -> [UInt8]?,
        prefixKey: (String) -> [UInt8]?
    ) -> KeyRange? {
        var range = KeyRange(lower: start, upper: nil)
        for constraint in constraints {
            if let prefix = constraint.prefix {
                // Every key that starts with these bytes: they are both the lower bound and the
                // (prefix-inclusive) upper one.
                guard let bytes = prefixKey(prefix) else { return nil }
                if range.lower.map({ $0.lexicographicallyPrecedes(bytes) }) ?? true { range.lower = bytes }
                if range.upper.map({ bytes.lexicographicallyPrecedes($0) }) ?? true { range.upper = bytes }
                continue
            }
            if let lower = constraint.lower {
                guard let bytes = key(lower, false) else { return nil }
                if range.lower.map({ $0.lexicographicallyPrecedes(bytes) }) ?? true { range.lower = bytes }
            }
            if let upper = constraint.upper {
                guard let bytes = key(upper, true) else { return nil }
                if range.upper.map({ bytes.lexicographicallyPrecedes($0) }) ?? true { range.upper = bytes }
            }
        }
        return range
    }

    /// The bytes of an id bound, cut below LMDB's key limit (a cut bound still covers its range).
    private static func idKey(_ value: Value) -> [UInt8]? {
        switch value {
        case .string(let text), .json(let text): return Array(text.utf8.prefix(maximumIdBytes + 1))
        default: return nil
        }
    }

    /// The ``IndexKey`` prefix of a bound on a column of `type`.
    private static func indexKey(_ value: Value, type: ColumnType, roundingUp: Bool) -> [UInt8]? {
        bound(value, type: type, roundingUp: roundingUp).flatMap { IndexKey.prefix($0, as: type) }
    }

    /// `value` in the column's own type, rounded outwards so that a range of the result covers
    /// the range of `value` (integers and doubles mix in queries); `nil` when no bound fits.
    private static func bound(_ value: Value, type: ColumnType, roundingUp: Bool) -> Value? {
        switch (type, value) {
        case (.integer, .double(let number)):
            guard number.isFinite else { return nil }
            let rounded = roundingUp ? number.rounded(.up) : number.rounded(.down)
            if rounded >= 9_223_372_036_854_775_807.0 { return .int(.max) }
            if rounded <= -9_223_372_036_854_775_808.0 { return .int(.min) }
            return .int(Int64(rounded))
        case (.double, .int(let number)):
            let converted = Double(number)
            return .double(roundingUp ? converted.nextUp : converted.nextDown)
        case (.bool, .bool), (.integer, .int), (.double, .double), (.date, .date),
            (.string, .string), (.string, .json), (.json, .json), (.json, .string):
            return value
        default:
            return nil
        }
    }
}

/// What one `and` operand says about one column: equal to one of some values, or within bounds
/// (bounds are treated as inclusive; the evaluator applies strictness).
private struct Constraint {
    var column: String
    var equals: [Value]?
    var lower: Value?
    var upper: Value?
    /// `startswith(column, prefix)`: the UTF-8 bytes of the value begin with those of `prefix`.
    var prefix: String?

    init?(_ expression: FilterExpression) {
        switch expression {
        case .function(.startsWith, let arguments):
            guard arguments.count == 2, case .column(let name) = arguments[0], case .literal(let value) = arguments[1],
                case .string(let prefix) = value, !prefix.isEmpty
            else { return nil }
            self.init(column: name)
            self.prefix = prefix
        case .comparison(.column(let name), let op, .literal(let value)):
            self.init(column: name, op: op, value: value)
        case .comparison(.literal(let value), let op, .column(let name)):
            let flipped: ComparisonOperator
            switch op {
            case .gt: flipped = .lt
            case .ge: flipped = .le
            case .lt: flipped = .gt
            case .le: flipped = .ge
            default: flipped = op
            }
            self.init(column: name, op: flipped, value: value)
        case .isIn(.column(let name), let values):
            self.init(column: name, equals: values)
        default:
            return nil
        }
    }

    private init(column: String, equals: [Value]? = nil, lower: Value? = nil, upper: Value? = nil) {
        self.column = column
        self.equals = equals
        self.lower = lower
        self.upper = upper
    }

    private init?(column: String, op: ComparisonOperator, value: Value) {
        switch op {
        case .eq: self.init(column: column, equals: [value])
        case .ne: return nil
        case .gt, .ge:
            guard !value.isNull else { return nil }
            self.init(column: column, lower: value)
        case .lt, .le:
            guard !value.isNull else { return nil }
            self.init(column: column, upper: value)
        }
    }
}
