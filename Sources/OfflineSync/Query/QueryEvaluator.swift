/// The reference implementation of query semantics: filter, order, page, count and select.
///
/// ``InMemoryStore`` answers every query with it, the conformance suite compares every backend
/// with it, and a backend that cannot translate a predicate (a key-value store, for one) may scan
/// and call it, so results are identical everywhere. The rules are written on ``FilterExpression`` and ``Query``.
public struct QueryEvaluator: Sendable {
    /// The validated query.
    public let query: Query

    /// Validates `query` against `schema` and prepares to evaluate it.
    public init(query: Query, schema: TableSchema) throws {
        try query.validate(against: schema)
        self.query = query
        var selected: [String] = []
        for column in query.selection ?? [] where column != "id" && !selected.contains(column) {
            selected.append(column)
        }
        selectionLayout = RowLayout(uniqueNames: selected)
        compiledFilter = CompiledFilter(query.filter, layout: schema.rowLayout)
    }

    /// The filter prepared for the table's rows (see ``CompiledFilter``), which ``matches(_:)`` runs.
    private let compiledFilter: CompiledFilter

    /// The selected columns other than `id`, the layout of ``select(_:)``'s items.
    private let selectionLayout: RowLayout

    /// `true` when the item satisfies the query's filter (always, without a filter).
    public func matches(_ item: Item) -> Bool {
        compiledFilter.matches(item)
    }

    /// `true` when `lhs` sorts before `rhs` under the query's ordering (then `id` ascending).
    public func precedes(_ lhs: Item, _ rhs: Item) -> Bool {
        precedes(sortKeys(of: lhs), lhs.id, sortKeys(of: rhs), rhs.id)
    }

    /// The values of an item's ordering keys, most significant first.
    private func sortKeys(of item: Item) -> [Value] {
        query.orderBy.map { item[$0.column] }
    }

    /// The ordering rule: the keys in turn (nulls first, reversed when descending), then the ids'
    /// bytes.
    private func precedes(_ lhsKeys: [Value], _ lhsId: String, _ rhsKeys: [Value], _ rhsId: String) -> Bool {
        for (position, key) in query.orderBy.enumerated() {
            let order = ValueSemantics.compare(lhsKeys[position], rhsKeys[position])
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return ValueSemantics.compareBytes(lhsId, rhsId) < 0
    }

    /// Runs the whole query over the rows of its table.
    ///
    /// When the page ends well before the last match (`skip + top` under half of the matches),
    /// only the first `skip + top` rows are kept while scanning (a bounded heap), so a small page
    /// of a large table costs one pass instead of a full sort; the order is total (ties end at
    /// the unique id), so the result is the same.
    public func run(over rows: some Sequence<Item>) -> QueryResult {
        let matching = rows.filter(matches)
        let total = query.includeTotalCount ? matching.count : nil
        let start = min(query.skip, matching.count)
        let end = query.top.map { start + min(matching.count - start, $0) } ?? matching.count
        let ordered =
            end < matching.count / 2 ? firstPositions(of: matching, count: end) : sortedPositions(of: matching)
        let page = ordered[start..<end].map { select(matching[$0]) }
        return QueryResult(items: page, totalCount: total)
    }

    /// The positions of the first `count` items in query order, found with a max-heap of the
    /// best `count` positions seen so far.
    private func firstPositions(of items: [Item], count: Int) -> [Int] {
        guard count > 0 else { return [] }
        var heap: [Int] = []
        heap.reserveCapacity(count)
        func after(_ a: Int, _ b: Int) -> Bool { precedes(items[b], items[a]) }
        for position in items.indices {
            if heap.count < count {
                heap.append(position)
                var child = heap.count - 1
                while child > 0, after(heap[child], heap[(child - 1) / 2]) {
                    heap.swapAt(child, (child - 1) / 2)
                    child = (child - 1) / 2
                }
            } else if precedes(items[position], items[heap[0]]) {
                heap[0] = position
                var parent = 0
                while true {
                    let left = 2 * parent + 1
                    let right = left + 1
                    var largest = parent
                    if left < heap.count, after(heap[left], heap[largest]) { largest = left }
                    if right < heap.count, after(heap[right], heap[largest]) { largest = right }
                    if largest == parent { break }
                    heap.swapAt(parent, largest)
                    parent = largest
                }
            }
        }
        return heap.sorted { precedes(items[$0], items[$1]) }
    }

    /// The positions of `items` in query order (the order of ``precedes(_:_:)``). Sort keys are read
    /// once per item and positions are sorted instead of items, which keeps sorting cheap.
    private func sortedPositions(of items: [Item]) -> [Int] {
        let keys = items.map(sortKeys)
        return items.indices.sorted { precedes(keys[$0], items[$0].id, keys[$1], items[$1].id) }
    }

    /// Every row in query order (no filter, no paging): what ``RangeScan`` runs over.
    func ordered(_ rows: some Sequence<Item>) -> [Item] {
        let items = Array(rows)
        return sortedPositions(of: items).map { items[$0] }
    }

    /// The item reduced to the query's selection (`id` always kept).
    public func select(_ item: Item) -> Item {
        guard query.selection != nil else { return item }
        let values: [Value?] = selectionLayout.names.map { column in
            let value = item[column]
            return value.isNull ? nil : value
        }
        return Item(id: item.id, layout: selectionLayout, values: values)
    }

    /// A null or a non-boolean counts as false in a boolean position.
    public static func isTrue(_ value: Value) -> Bool {
        if case .bool(true) = value { return true }
        return false
    }

    /// The value of an expression on one item.
    public static func evaluate(_ expression: FilterExpression, on item: Item) -> Value {
        switch expression {
        case .literal(let value):
            return value
        case .column(let name):
            return item[name]
        case .not(let operand):
            return .bool(!isTrue(evaluate(operand, on: item)))
        case .and(let lhs, let rhs):
            return .bool(isTrue(evaluate(lhs, on: item)) && isTrue(evaluate(rhs, on: item)))
        case .or(let lhs, let rhs):
            return .bool(isTrue(evaluate(lhs, on: item)) || isTrue(evaluate(rhs, on: item)))
        case .comparison(let lhs, let op, let rhs):
            return .bool(compare(evaluate(lhs, on: item), op, evaluate(rhs, on: item)))
        case .isIn(let operand, let values):
            let value = evaluate(operand, on: item)
            return .bool(values.contains { ValueSemantics.equal(value, $0) })
        case .function(let function, let arguments):
            return apply(function, arguments.map { evaluate($0, on: item) })
        case .arithmetic(let lhs, let op, let rhs):
            return ValueSemantics.arithmetic(evaluate(lhs, on: item), op, evaluate(rhs, on: item))
        case .negate(let operand):
            return ValueSemantics.negate(evaluate(operand, on: item))
        }
    }

    /// Applies a comparison operator with the null rules of ``FilterExpression``.
    public static func compare(_ lhs: Value, _ op: ComparisonOperator, _ rhs: Value) -> Bool {
        switch op {
        case .eq: return ValueSemantics.equal(lhs, rhs)
        case .ne: return !ValueSemantics.equal(lhs, rhs)
        default:
            if lhs.isNull || rhs.isNull { return false }
            let order = ValueSemantics.compare(lhs, rhs)
            switch op {
            case .gt: return order > 0
            case .ge: return order >= 0
            case .lt: return order < 0
            default: return order <= 0
            }
        }
    }
}
