/// One declared index of an ``InMemoryStore`` table: every row's indexed values and the row itself, sorted
/// in query order (the columns in turn under ``ValueSemantics/compare(_:_:)``, nulls first, then
/// the id's bytes).
///
/// Writes do not touch it: the store notes which rows changed since the index was last brought
/// up to date (with the row each had then), and the next read that uses the index applies those
/// changes first (one removal and one insertion by binary search per row when they are few, a
/// merge of the re-sorted changes otherwise, or an append when the changes are new rows that all
/// sort after the last entry, as rows stamped with a later `updatedAt` do in a pull index). So a
/// bulk load costs one sort, and a query that follows single-row writes moves a few entries.
struct InMemoryIndex {
    /// The indexed values of one row, and the row itself (as the table holds it: every change
    /// to a row replaces its entry before a read uses the index), so that a walk reaches rows
    /// without looking them up by id.
    struct Entry {
        /// The first indexed value, kept inline as well: a walk tests it on every entry it
        /// passes, and reading it out of ``values`` (an array of its own, elsewhere on the heap)
        /// cost a cache miss per entry on a large table.
        var first: Value
        var values: [Value]
        var row: Item
        var id: String { row.id }

        init(values: [Value], row: Item) {
            first = values[0]
            self.values = values
            self.row = row
        }
    }

    let index: TableIndex
    private(set) var entries: [Entry] = []

    /// An index over `rows`.
    init(_ index: TableIndex, rows: some Sequence<Item>) {
        self.index = index
        entries = rows.map(entry(of:))
        entries.sort(by: InMemoryIndex.precedes)
    }

    /// The entry of `row`.
    func entry(of row: Item) -> Entry {
        Entry(values: index.columns.map { row[$0] }, row: row)
    }

    /// Brings the index up to date: `changes` maps each changed id to the row as the index holds
    /// it (`nil`: none), and `current` answers the row as it is now.
    mutating func apply(_ changes: [IdKey: Item?], current: (IdKey) -> Item?) {
        if changes.count <= max(16, entries.count / 64) {
            for (key, old) in changes {
                if let old, let position = position(of: entry(of: old)) { entries.remove(at: position) }
                if let row = current(key) {
                    let new = entry(of: row)
                    entries.insert(new, at: insertionPoint(of: new))
                }
            }
            return
        }
        // The entries to drop are found by binary search (a changed row's old entry is known),
        // instead of hashing the id of every entry; rows that were not in the index drop nothing.
        var stale: [Int] = []
        for case (_, let old?) in changes {
            if let position = position(of: entry(of: old)) { stale.append(position) }
        }
        stale.sort()
        var added = changes.keys.compactMap { current($0).map(entry(of:)) }
        added.sort(by: InMemoryIndex.precedes)
        let sortLast: Bool
        if let last = entries.last, let first = added.first {
            sortLast = InMemoryIndex.precedes(last, first)
        } else {
            sortLast = true
        }
        if stale.isEmpty, sortLast {
            // New rows that all sort after the last entry (rows stamped with a later `updatedAt`
            // than any before, ids that grow): appended, nothing else moves.
            entries.append(contentsOf: added)
            return
        }
        var merged: [Entry] = []
        merged.reserveCapacity(entries.count + added.count)
        var next = 0
        var nextStale = 0
        for position in entries.indices {
            if nextStale < stale.count, stale[nextStale] == position {
                nextStale += 1
                continue
            }
            while next < added.count, InMemoryIndex.precedes(added[next], entries[position]) {
                merged.append(added[next])
                next += 1
            }
            merged.append(entries[position])
        }
        merged.append(contentsOf: added[next...])
        entries = merged
    }

    /// The position of an entry equal to `entry` (same values and id), if any.
    private func position(of entry: Entry) -> Int? {
        let position = insertionPoint(of: entry)
        guard position < entries.count, !InMemoryIndex.precedes(entry, entries[position]) else { return nil }
        return position
    }

    /// The first position whose entry does not sort before `entry`.
    private func insertionPoint(of entry: Entry) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if InMemoryIndex.precedes(entries[middle], entry) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first position whose first indexed value satisfies `admitted`, which must be false
    /// for a prefix of the entries and true for the rest.
    func partitionPoint(_ admitted: (Value) -> Bool) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if admitted(entries[middle].first) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Query order of entries: the values in turn, then the ids' bytes.
    static func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
        for position in lhs.values.indices {
            let order = ValueSemantics.compare(lhs.values[position], rhs.values[position])
            if order != 0 { return order < 0 }
        }
        return ValueSemantics.compareBytes(lhs.id, rhs.id) < 0
    }
}

/// How a query reads an ``InMemoryIndex``: runs of entries whose first indexed value satisfies
/// the filter's `eq`, `in`, range or `startswith` conjuncts on that column, or every entry in
/// order when the query only wants the first rows in the index's order.
///
/// A run is found by binary search and walked while its values stay inside it; every row
/// reached is still checked against the whole filter by ``QueryEvaluator``, so the answer is the
/// evaluator's over the whole table, unless the run's bounds are the whole filter (only range
/// comparisons on the indexed column, as an incremental pull's `updatedAt ge …`): then every row
/// reached matches and none is checked again. Runs exist only for literals of the column's own
/// kind (numbers for numbers, strings for strings …), whose admitted values are contiguous in
/// the index's order.
struct InMemoryIndexScan {
    /// One contiguous run: where it starts (a partition point) and while it lasts.
    struct Run {
        var starts: (Value) -> Bool
        var lasts: (Value) -> Bool
    }

    let indexName: String
    let runs: [Run]
    /// The runs admit exactly the rows the filter matches: the filter is only range comparisons
    /// (`gt`, `ge`, `lt`, `le`) of the indexed column with literals of its kind, which the runs'
    /// bounds evaluate as ``QueryEvaluator`` does (no filter at all counts too).
    let coversFilter: Bool
    /// Rows arrive in the query's whole order (its ordering is the index's columns, ascending,
    /// then `id`), so a page can stop at its last row.
    let isOrdered: Bool

    /// The scan for `query`, or `nil` when no declared index applies.
    init?(_ query: Query, schema: TableSchema) {
        let conjuncts = InMemoryIndexScan.conjuncts(of: query.filter)
        var chosen: (name: String, runs: [Run], isEquality: Bool, ordered: Bool, covers: Bool)?
        for index in schema.indexes {
            let column = index.columns[0]
            let type: ColumnType
            if column == "id" {
                type = .string
            } else if let declared = schema.column(named: column)?.type {
                type = declared
            } else {
                continue
            }
            let ordersLikeIndex = InMemoryIndexScan.ordersLike(query.orderBy, index)
            if let values = InMemoryIndexScan.equalities(conjuncts, column: column, type: type) {
                var sorted = values
                sorted.sort { ValueSemantics.compare($0, $1) < 0 }
                var distinct: [Value] = []
                for value in sorted where distinct.last.map({ ValueSemantics.compare($0, value) != 0 }) ?? true {
                    distinct.append(value)
                }
                let runs = distinct.map { value in
                    value.isNull
                        ? Run(starts: { _ in true }, lasts: { $0.isNull })
                        : Run(
                            starts: { !$0.isNull && ValueSemantics.compare($0, value) >= 0 },
                            lasts: { ValueSemantics.compare($0, value) == 0 })
                }
                // Equality wins over a range; of several equalities the first index declared.
                if chosen.map({ !$0.isEquality }) ?? true {
                    chosen = (index.name, runs, true, ordersLikeIndex, false)
                }
                continue
            }
            guard chosen == nil else { continue }
            if let (run, covers) = InMemoryIndexScan.range(conjuncts, column: column, type: type) {
                chosen = (index.name, [run], false, ordersLikeIndex, covers)
            } else if query.top != nil, ordersLikeIndex {
                chosen = (
                    index.name, [Run(starts: { _ in true }, lasts: { _ in true })], false, true, conjuncts.isEmpty
                )
            }
        }
        guard let chosen else { return nil }
        indexName = chosen.name
        runs = chosen.runs
        isOrdered = chosen.ordered
        coversFilter = chosen.covers
    }

    /// Runs the query over the rows the runs reach (`index` must be up to date).
    func run(_ evaluator: QueryEvaluator, over index: InMemoryIndex) -> QueryResult {
        let query = evaluator.query
        let wanted = query.top.map { $0 > Int.max - query.skip ? Int.max : query.skip + $0 }
        let stopsEarly = isOrdered && wanted != nil && !query.includeTotalCount
        // When the walk stops early, the rows it keeps are the page itself: the matches in the
        // query's whole order (the index's) past `skip`, selected as they are found, without
        // filtering and sorting them again or copying them twice.
        var candidates: [Item] = []
        if stopsEarly, let wanted { candidates.reserveCapacity(min(wanted - min(query.skip, wanted), 1_024)) }
        var matches = 0
        // Through the buffer: subscripting the array copies each entry out (a retain of its
        // values and of the row's parts, then the releases) before one field is read.
        index.entries.withUnsafeBufferPointer { entries in
            walk: for run in runs {
                var position = index.partitionPoint(run.starts)
                while position < entries.count {
                    guard run.lasts(entries[position].first) else { break }
                    defer { position += 1 }
                    if stopsEarly {
                        guard coversFilter || evaluator.matches(entries[position].row) else { continue }
                        matches += 1
                        let wanted = wanted ?? Int.max
                        if matches > query.skip, matches <= wanted {
                            candidates.append(evaluator.select(entries[position].row))
                        }
                        if matches >= wanted { break walk }
                    } else {
                        candidates.append(entries[position].row)
                    }
                }
            }
        }
        if stopsEarly { return QueryResult(items: candidates, totalCount: nil) }
        return evaluator.run(over: candidates)
    }

    /// `true` when `orderBy` (then `id`) is the order of the index: its columns in turn,
    /// ascending, then `id` ascending.
    private static func ordersLike(_ orderBy: [SortKey], _ index: TableIndex) -> Bool {
        var keys = orderBy
        if let idKey = keys.firstIndex(where: { $0.column == "id" }) {
            guard !keys[idKey].descending else { return false }
            keys.removeSubrange(idKey...)
        }
        // An index that names `id` (as the pull's `updatedAt, id` does) is ordered by it there;
        // the columns after it never decide.
        var columns = index.columns
        if let idColumn = columns.firstIndex(of: "id") { columns.removeSubrange(idColumn...) }
        return keys.count == columns.count
            && zip(keys, columns).allSatisfy { !$0.descending && $0.column == $1 }
    }

    private static func conjuncts(of filter: FilterExpression?) -> [FilterExpression] {
        guard let filter else { return [] }
        if case .and(let lhs, let rhs) = filter { return conjuncts(of: lhs) + conjuncts(of: rhs) }
        return [filter]
    }

    /// The values of the first `column eq literal` or `column in (…)` conjunct whose literals are
    /// all null or of the column's kind.
    private static func equalities(_ conjuncts: [FilterExpression], column: String, type: ColumnType) -> [Value]? {
        for conjunct in conjuncts {
            let values: [Value]
            switch conjunct {
            case .comparison(.column(let name), .eq, .literal(let value)) where name == column,
                .comparison(.literal(let value), .eq, .column(let name)) where name == column:
                values = [value]
            case .isIn(.column(let name), let listed) where name == column:
                values = listed
            default:
                continue
            }
            if values.allSatisfy({ $0.isNull || fits($0, type) }) { return values }
        }
        return nil
    }

    /// One run for the range and `startswith` conjuncts on `column`, or `nil` when there is none;
    /// `covers` is `true` when the run's bounds are every conjunct (see ``coversFilter``).
    private static func range(
        _ conjuncts: [FilterExpression], column: String, type: ColumnType
    ) -> (run: Run, covers: Bool)? {
        var lowerBounds: [(ComparisonOperator, Value)] = []
        var upperBounds: [(ComparisonOperator, Value)] = []
        var prefixList: [String] = []
        // Conjuncts the bounds do not evaluate (other columns, `eq`, `ne`, other kinds, and
        // `startswith`, whose byte prefix the run only narrows to).
        var unbounded = 0
        for conjunct in conjuncts {
            switch conjunct {
            case .comparison(.column(let name), let op, .literal(let value)) where name == column:
                if !add(op, value) { unbounded += 1 }
            case .comparison(.literal(let value), let op, .column(let name)) where name == column:
                let added: Bool
                switch op {
                case .gt: added = add(.lt, value)
                case .ge: added = add(.le, value)
                case .lt: added = add(.gt, value)
                case .le: added = add(.ge, value)
                case .eq, .ne: added = false
                }
                if !added { unbounded += 1 }
            case .function(.startsWith, let arguments) where type == .string:
                unbounded += 1
                guard arguments.count == 2, case .column(let name) = arguments[0], name == column,
                    case .literal(.string(let prefix)) = arguments[1]
                else { continue }
                prefixList.append(prefix)
            default:
                unbounded += 1
            }
        }
        func add(_ op: ComparisonOperator, _ value: Value) -> Bool {
            guard fits(value, type) else { return false }
            switch op {
            case .gt, .ge: lowerBounds.append((op, value))
            case .lt, .le: upperBounds.append((op, value))
            case .eq, .ne: return false
            }
            return true
        }
        guard !lowerBounds.isEmpty || !upperBounds.isEmpty || !prefixList.isEmpty else { return nil }
        // Constants for the closures: a captured `var` is boxed and checked for exclusive access
        // on every call, once per row walked.
        let lower = lowerBounds
        let upper = upperBounds
        let prefixes = prefixList
        let run = Run(
            starts: { value in
                guard !value.isNull else { return false }
                guard lower.allSatisfy({ QueryEvaluator.compare(value, $0.0, $0.1) }) else { return false }
                for prefix in prefixes {
                    guard case .string(let text) = value, ValueSemantics.compareBytes(text, prefix) >= 0 else {
                        return false
                    }
                }
                return true
            },
            lasts: { value in
                guard upper.allSatisfy({ QueryEvaluator.compare(value, $0.0, $0.1) }) else { return false }
                for prefix in prefixes {
                    guard case .string(let text) = value, text.utf8.starts(with: prefix.utf8) else { return false }
                }
                return true
            })
        return (run, unbounded == 0)
    }

    /// A literal bounds a column only when it compares within the column's kind.
    private static func fits(_ value: Value, _ type: ColumnType) -> Bool {
        switch (value, type) {
        case (.int, .integer), (.int, .double), (.string, .string), (.date, .date), (.bool, .bool):
            return true
        case (.double(let number), .integer), (.double(let number), .double):
            return number.isFinite
        default:
            return false
        }
    }
}
