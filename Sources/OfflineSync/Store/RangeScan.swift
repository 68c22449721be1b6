/// A query answered from rows already sorted in its order, starting at the first row its
/// filter can match instead of scanning the table.
///
/// It applies when the filter is a conjunction that bounds the first ordering key (ascending;
/// `id` when the query has no ordering) with `eq`, `gt`, `ge`, `lt` or `le` against a literal of
/// the column's own kind (numbers for numbers, strings for strings, dates for dates, booleans for
/// booleans), and the query has a `top` and no total count. Under ``ValueSemantics`` such a bound
/// never admits null (which sorts first) and is monotone along the non-null sorted rows, so the
/// rows it admits form one contiguous run: a binary search finds its start, the scan stops at its end or when the
/// page is full, and every row in between is still checked against the whole filter by
/// ``QueryEvaluator``. The result is therefore the evaluator's, row for row.
struct RangeScan {
    private let column: String
    private let lower: [(ComparisonOperator, Value)]
    private let upper: [(ComparisonOperator, Value)]
    /// `true` for a scan from the first sorted row (see ``init(fromFirstRowOf:)``).
    private var fromFirstRow = false

    /// A scan from the first row of the sorted rows, for a query with a `top`, no total count and
    /// an ascending first ordering key, whatever its filter: the rows are read in the query's order
    /// and each is checked against the whole filter until the page is full, which gives the
    /// evaluator's result row for row (null rows included, as they sort first). Worth it only
    /// over rows already sorted; `nil` when it does not apply.
    init?(fromFirstRowOf query: Query) {
        guard query.top != nil, !query.includeTotalCount else { return nil }
        let first = query.orderBy.first ?? SortKey("id")
        guard !first.descending else { return nil }
        column = first.column
        lower = []
        upper = []
        fromFirstRow = true
    }

    /// The scan for `query`, or `nil` when it does not apply.
    init?(_ query: Query, schema: TableSchema) {
        guard let filter = query.filter, query.top != nil, !query.includeTotalCount else { return nil }
        let first = query.orderBy.first ?? SortKey("id")
        guard !first.descending else { return nil }
        let kind: ColumnType
        if first.column == "id" {
            kind = .string
        } else if let declared = schema.column(named: first.column)?.type {
            kind = declared
        } else {
            return nil
        }
        var lower: [(ComparisonOperator, Value)] = []
        var upper: [(ComparisonOperator, Value)] = []
        for conjunct in RangeScan.conjuncts(of: filter) {
            guard let (op, value) = RangeScan.bound(conjunct, on: first.column), RangeScan.kind(of: value, fits: kind)
            else { continue }
            switch op {
            case .gt, .ge: lower.append((op, value))
            case .lt, .le: upper.append((op, value))
            case .eq:
                lower.append((.ge, value))
                upper.append((.le, value))
            case .ne: continue
            }
        }
        guard !lower.isEmpty || !upper.isEmpty else { return nil }
        self.column = first.column
        self.lower = lower
        self.upper = upper
    }

    /// Runs the query over `sorted`, which holds every row of the table in the query's order.
    func run(_ evaluator: QueryEvaluator, over sorted: [Item]) -> QueryResult {
        let query = evaluator.query
        let top = query.top ?? sorted.count
        var items: [Item] = []
        guard top > 0 else { return QueryResult(items: items) }
        var skipped = 0
        var position = firstAdmitted(in: sorted)
        while position < sorted.count {
            let row = sorted[position]
            position += 1
            if !upper.allSatisfy({ QueryEvaluator.compare(row[column], $0.0, $0.1) }) { break }
            guard evaluator.matches(row) else { continue }
            if skipped < query.skip {
                skipped += 1
                continue
            }
            items.append(evaluator.select(row))
            if items.count == top { break }
        }
        return QueryResult(items: items)
    }

    /// The position of the first row that is not null (every bound refuses null, and nulls sort
    /// first) and satisfies every lower bound: a partition point.
    private func firstAdmitted(in sorted: [Item]) -> Int {
        if fromFirstRow { return 0 }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = low + (high - low) / 2
            let value = sorted[middle][column]
            if !value.isNull && lower.allSatisfy({ QueryEvaluator.compare(value, $0.0, $0.1) }) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }

    /// The only ids a filter can match when one of its conjuncts is `id eq literal` or
    /// `id in (…)`, or `nil` when no conjunct pins the id. A row whose id is not listed fails that
    /// conjunct (an id equals only a string or JSON value with the same bytes), so evaluating the
    /// query over the listed rows alone gives the same result as over the whole table.
    static func pinnedIds(_ filter: FilterExpression?) -> [String]? {
        guard let filter else { return nil }
        for conjunct in conjuncts(of: filter) {
            let values: [Value]
            switch conjunct {
            case .isIn(.column("id"), let listed): values = listed
            case .comparison(.column("id"), .eq, .literal(let value)),
                .comparison(.literal(let value), .eq, .column("id")):
                values = [value]
            default: continue
            }
            var seen = Set<IdKey>()
            return values.compactMap { value -> String? in
                switch value {
                case .string(let id), .json(let id): seen.insert(IdKey(id)).inserted ? id : nil
                default: nil
                }
            }
        }
        return nil
    }

    private static func conjuncts(of expression: FilterExpression) -> [FilterExpression] {
        if case .and(let lhs, let rhs) = expression { return conjuncts(of: lhs) + conjuncts(of: rhs) }
        return [expression]
    }

    /// `column op literal` (or the mirrored `literal op column`) on `column`, as `(op, literal)`.
    private static func bound(_ expression: FilterExpression, on column: String) -> (ComparisonOperator, Value)? {
        guard case .comparison(let lhs, let op, let rhs) = expression else { return nil }
        switch (lhs, rhs) {
        case (.column(let name), .literal(let value)) where name == column:
            return (op, value)
        case (.literal(let value), .column(let name)) where name == column:
            let mirrored: ComparisonOperator =
                switch op {
                case .gt: .lt
                case .ge: .le
                case .lt: .gt
                case .le: .ge
                case .eq, .ne: op
                }
            return (mirrored, value)
        default:
            return nil
        }
    }

    /// A null literal never bounds; other literals only when they compare within the column's kind.
    private static func kind(of value: Value, fits type: ColumnType) -> Bool {
        switch (value, type) {
        case (.int, .integer), (.int, .double), (.double(_), .integer), (.double(_), .double),
            (.string, .string), (.date, .date), (.bool, .bool):
            if case .double(let number) = value { return number.isFinite }
            return true
        default:
            return false
        }
    }
}
