import CLMDB
import OfflineSync

/// Reads one table inside a transaction: lookups by id and queries through a ``QueryPlan``.
struct TableReader {
    let context: TransactionContext
    let layout: TableLayout

    /// The row with this id, or `nil`.
    func lookup(_ id: String) throws -> Item? {
        var key = id
        return try key.withUTF8 { bytes in
            guard (1...QueryPlan.maximumIdBytes).contains(bytes.count),
                let record = try context.get(layout.items, UnsafeRawBufferPointer(bytes))
            else { return nil }
            return try decode(id: id, record: record)
        }
    }

    /// Answers `query` exactly as ``OfflineSync/QueryEvaluator/run(over:)`` would over the table.
    ///
    /// Candidates come from the ``QueryPlan``; each is tested and ranked by a ``RowProbe`` on the
    /// fields of its record that the filter and the ordering read. Matching rows are kept as
    /// their ordering values and pointers into the map (the first `skip + top` of them, sorted,
    /// when that is at most ``boundedSelectionLimit``), and only the rows of the answer are
    /// decoded whole. A plan whose candidates arrive in query order stops once it has
    /// `skip + top` matches (and, where the order is only that of the first sort key, their ties).
    func run(_ query: Query) throws -> QueryResult {
        let evaluator = try QueryEvaluator(query: query, schema: layout.schema)
        let entries = try context.entryCount(layout.items)
        // An empty table (most often the operation queue or its errors between pushes) answers
        // every valid query with nothing, without a plan or a probe.
        if entries == 0 { return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil) }
        let plan = QueryPlan.plan(query, layout: layout)
        let knownTotal = query.filter == nil ? entries : nil
        let wanted = query.top.map { $0 > Int.max - query.skip ? Int.max : query.skip + $0 }
        let needsEveryMatch = query.includeTotalCount && knownTotal == nil
        if wanted == 0, !needsEveryMatch {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? knownTotal : nil)
        }
        let stopsEarly = plan.isOrdered && wanted != nil && !needsEveryMatch
        let bound = stopsEarly ? nil : wanted.flatMap { $0 <= TableReader.boundedSelectionLimit ? $0 : nil }
        let probe = RowProbe(query, layout: layout)
        // The screen's plain data, read per candidate without retaining the probe's objects
        // (`probe` keeps them alive until the end of this method). Unless the walk stops early
        // (it must see the rows past the page to stop), `candidates` screens each record before
        // calling the closure below: calling it costs retains of what it captures.
        let screen = probe.fieldTests?.screen
        var row = probe.makeRow()
        let skipsLoadWhenPassed = probe.fieldTests?.coversFilter == true
        var kept: [RowProbe.Candidate] = []
        var matchCount = 0
        var lastTie: UnsafeRawBufferPointer?
        var lastTieIsExact = false
        let exact = stopsEarly && plan.isExactlyOrdered
        // While candidates arrive exactly in query order, the kept ones are already sorted: they
        // are kept without their ordering values, which are read (from the records they point
        // at) only if a cut index key breaks that order.
        var inArrivalOrder = exact
        let ids = IdBytes(plan)
        defer { withExtendedLifetime(ids) {} }
        try candidates(
            plan, ids: ids, ties: stopsEarly ? (exact ? .valuePart : .firstComponent) : .none,
            screen: stopsEarly ? nil : screen
        ) {
            id, record, tie, screened in
            if stopsEarly, let wanted, kept.count >= wanted {
                // Past the page: stop, unless this row ties with the last one kept in the part
                // of the key that orders them (then it may still sort before it).
                if !TableReader.same(tie, lastTie) || (exact && lastTieIsExact) { return false }
            }
            let verdict = screened ?? screen.map { RecordCodec.FieldTests.verdict($0, record) } ?? .undecided
            if verdict == .rejected { return true }
            // A record the screen passed on every test of the filter needs loading only for its
            // sort keys, which a walk in query order does not keep (they are read afterwards if
            // a cut index key breaks the order, and the answer's rows are decoded whole).
            let loaded = bound != nil || !skipsLoadWhenPassed || verdict != .passed
            if loaded {
                guard probe.load(record, id: id, into: &row) else { throw corrupt(id) }
                guard probe.matches(row, screened: verdict) else { return true }
            }
            matchCount += 1
            if stopsEarly {
                lastTie = tie
                // A value part shorter than the cut is exact: the index orders its rows fully.
                lastTieIsExact = tie.map { $0.count < IndexKey.maximumValueBytes } ?? true
                if !lastTieIsExact { inArrivalOrder = false }
            }
            if let bound {
                if kept.count == bound {
                    guard let last = kept.last, probe.precedes(row, id: id, last) else { return true }
                    kept.removeLast()
                }
                let candidate = RowProbe.Candidate(keys: probe.sortKeys(of: row, id: id), id: id, record: record)
                var low = 0
                var high = kept.count
                while low < high {
                    let middle = (low + high) / 2
                    if probe.precedes(kept[middle], candidate) { low = middle + 1 } else { high = middle }
                }
                kept.insert(candidate, at: low)
                if !needsEveryMatch, kept.count == bound, let last = kept.last { probe.cutOff(after: last) }
            } else {
                if !inArrivalOrder, !loaded, !probe.load(record, id: id, into: &row) {
                    throw corrupt(id)
                }
                let keys = inArrivalOrder ? [] : probe.sortKeys(of: row, id: id)
                kept.append(RowProbe.Candidate(keys: keys, id: id, record: record))
            }
            return true
        }
        if bound == nil, !inArrivalOrder {
            for position in kept.indices where kept[position].keys.count != probe.order.count {
                let candidate = kept[position]
                guard probe.load(candidate.record, id: candidate.id, into: &row) else {
                    throw corrupt(candidate.id)
                }
                kept[position].keys = probe.sortKeys(of: row, id: candidate.id)
            }
            kept.sort(by: probe.precedes)
        }
        withExtendedLifetime(probe) {}
        let start = min(query.skip, kept.count)
        let end = wanted.map { min($0, kept.count) } ?? kept.count
        var items: [Item] = []
        items.reserveCapacity(end - start)
        for candidate in kept[start..<end] {
            let item = try decode(id: String(decoding: candidate.id, as: UTF8.self), record: candidate.record)
            items.append(evaluator.select(item))
        }
        return QueryResult(items: items, totalCount: query.includeTotalCount ? knownTotal ?? matchCount : nil)
    }

    /// Up to this many wanted rows are kept in a sorted array while scanning instead of sorting
    /// every match at the end.
    static let boundedSelectionLimit = 1024

    /// `true` when both tie keys are absent or hold the same bytes.
    private static func same(_ lhs: UnsafeRawBufferPointer?, _ rhs: UnsafeRawBufferPointer?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        return KeyRange.compare(lhs, rhs) == 0
    }

    /// Which part of an index key a walk in query order reports with each candidate.
    enum Ties {
        /// Nothing.
        case none
        /// The first component: rows sharing it may still come in any order.
        case firstComponent
        /// The whole value part (without the id).
        case valuePart
    }

    /// Calls `body` with the id and record of each candidate row of `plan` (and, for an index
    /// walk, the part of the key that `ties` asks for) until it returns `false`. The buffers
    /// point into the map. With a `screen`, records it rejects are skipped without calling
    /// `body`, which gets the verdict of the others (`nil` without a screen).
    private func candidates(
        _ plan: QueryPlan, ids: IdBytes, ties: Ties,
        screen: UnsafeMutablePointer<RecordCodec.FieldTests.Screen>?,
        _ body: (
            UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer?, RecordCodec.FieldTests.Verdict?
        ) throws -> Bool
    ) throws {
        switch plan.access {
        case .ids:
            for id in ids.buffers {
                guard (1...QueryPlan.maximumIdBytes).contains(id.count), let record = try context.get(layout.items, id)
                else { continue }
                let verdict = screen.map { RecordCodec.FieldTests.verdict($0, record) }
                if verdict == .rejected { continue }
                guard try body(id, record, nil, verdict) else { return }
            }
        case .primary(let range):
            try context.walk(layout.items, range, descending: plan.descending, screen: screen) { key, record, verdict in
                // The walk passed over the records the screen rejects; this verdict is `passed`
                // or `undecided`.
                try body(key, record, nil, screen == nil ? nil : verdict)
            }
        case .index(let index, let ranges):
            var seen: Set<[UInt8]> = []
            let deduplicates = ranges.count > 1 && !plan.rangesAreDisjoint
            for range in ranges {
                var more = true
                try context.walk(index.dbi, range, descending: plan.descending) { key, value, _ in
                    guard !deduplicates || seen.insert(Array(value)).inserted else { return true }
                    guard let record = try context.get(layout.items, value) else {
                        throw LMDBError.corrupt(
                            "index '\(index.index.name)' lists id '\(String.quotedForError(value))', which has no row",
                            table: layout.schema.name, path: context.path)
                    }
                    let valueLength = key.count - value.count
                    let tie: UnsafeRawBufferPointer?
                    switch ties {
                    case .none: tie = nil
                    case .valuePart: tie = UnsafeRawBufferPointer(rebasing: key.prefix(valueLength))
                    case .firstComponent:
                        tie = UnsafeRawBufferPointer(
                            rebasing: key.prefix(
                                IndexKey.firstComponentLength(
                                    key, valueLength: valueLength, type: index.firstColumn.type)))
                    }
                    let verdict = screen.map { RecordCodec.FieldTests.verdict($0, record) }
                    if verdict == .rejected { return true }
                    more = try body(value, record, tie, verdict)
                    return more
                }
                if !more { return }
            }
        }
    }

    /// The ids of an `.ids` plan as bytes that live as long as this object, so that candidates
    /// can point at them like at ids in the map.
    final class IdBytes {
        private let storage: UnsafeMutableRawBufferPointer
        let buffers: [UnsafeRawBufferPointer]

        init(_ plan: QueryPlan) {
            guard case .ids(let ids) = plan.access else {
                storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
                buffers = []
                return
            }
            let total = ids.reduce(0) { $0 + $1.utf8.count }
            storage = .allocate(byteCount: max(total, 1), alignment: 1)
            var offset = 0
            var buffers: [UnsafeRawBufferPointer] = []
            buffers.reserveCapacity(ids.count)
            for id in ids {
                let count = id.utf8.count
                let target = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<offset + count])
                target.copyBytes(from: id.utf8)
                buffers.append(UnsafeRawBufferPointer(target))
                offset += count
            }
            self.buffers = buffers
        }

        deinit {
            storage.deallocate()
        }
    }

    private func decode(id: String, record: UnsafeRawBufferPointer) throws -> Item {
        guard let item = RecordCodec.decode(record, id: id, layout: layout.schema.rowLayout) else { throw corrupt(id.utf8) }
        return item
    }

    /// The error for a stored record that cannot be decoded, quoting its id (`String.quotedForError`).
    private func corrupt<Id: Collection<UInt8>>(_ id: Id) -> LMDBError {
        LMDBError.corrupt(
            "the record of id '\(String.quotedForError(id))' is malformed", table: layout.schema.name,
            path: context.path)
    }
}
