import CLMDB
import OfflineSync

/// Reads one table inside a transaction: lookups by id and queries through a ``QueryPlan``.
struct TableReader {
    let context: TransactionContext
    let layout: TableLayout

    /// The row with this id, or `nil`.
    func lookup(_ id: String) throws -> Item? {
        try record(of: id).map { try decode(id: id, record: $0) }
    }

    /// The stored record of this id, or `nil`; valid until the transaction's next write.
    private func record(of id: String) throws -> UnsafeRawBufferPointer? {
        let bytes = Array(id.utf8)
        guard (1...QueryPlan.maximumIdBytes).contains(bytes.count) else { return nil }
        return try bytes.withUnsafeBytes { try context.get(layout.items, $0) }
    }

    /// Answers `query` exactly as ``OfflineSync/QueryEvaluator/run(over:)`` would over the table.
    func run(_ query: Query) throws -> QueryResult {
        let evaluator = try QueryEvaluator(query: query, schema: layout.schema)
        let plan = QueryPlan.plan(query, layout: layout)
        let knownTotal = query.filter == nil ? try context.entryCount(layout.items) : nil
        let wanted = query.top.map { $0 > Int.max - query.skip ? Int.max : query.skip + $0 }
        let needsEveryMatch = query.includeTotalCount && knownTotal == nil
        if wanted == 0, !needsEveryMatch {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? knownTotal : nil)
        }
        let stopsEarly = plan.isOrdered && wanted != nil && !needsEveryMatch
        let bound = stopsEarly ? nil : wanted.flatMap { $0 <= TableReader.boundedSelectionLimit ? $0 : nil }
        var matches: [Item] = []
        var matchCount = 0
        var lastTie: [UInt8]?
        let prefilter = prefilterColumns(query.filter)
        try candidates(plan, wantTies: stopsEarly) { id, record, tie in
            if stopsEarly, let wanted, matches.count >= wanted, tie != lastTie { return false }
            if let prefilter {
                guard let partial = RecordCodec.decode(record, id: id, layout: layout.schema.rowLayout, only: prefilter)
                else {
                    throw corrupt(id)
                }
                guard evaluator.matches(partial) else { return true }
            }
            let item = try decode(id: id, record: record)
            guard prefilter != nil || evaluator.matches(item) else { return true }
            matchCount += 1
            lastTie = tie
            if let bound {
                TableReader.keep(item, inFirst: bound, of: &matches, by: evaluator)
            } else {
                matches.append(item)
            }
            return true
        }
        if bound == nil { matches.sort(by: evaluator.precedes) }
        let start = min(query.skip, matches.count)
        let end = wanted.map { min($0, matches.count) } ?? matches.count
        return QueryResult(
            items: matches[start..<end].map(evaluator.select),
            totalCount: query.includeTotalCount ? knownTotal ?? matchCount : nil)
    }

    /// Up to this many wanted rows are kept in a sorted array while scanning instead of sorting
    /// every match at the end.
    static let boundedSelectionLimit = 1024

    /// Inserts `item` into the sorted `rows` if it is among the first `limit` rows.
    private static func keep(_ item: Item, inFirst limit: Int, of rows: inout [Item], by evaluator: QueryEvaluator) {
        if rows.count == limit {
            guard let last = rows.last, evaluator.precedes(item, last) else { return }
            rows.removeLast()
        }
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if evaluator.precedes(rows[middle], item) { low = middle + 1 } else { high = middle }
        }
        rows.insert(item, at: low)
    }

    /// The columns to decode first to evaluate the filter, when that is fewer than all of them:
    /// a row the filter rejects then costs only the decoding of the columns it reads.
    private func prefilterColumns(_ filter: Expression?) -> [Bool]? {
        guard let filter else { return nil }
        var names: Set<String> = []
        TableReader.collectColumns(of: filter, into: &names)
        let wanted = layout.columnNames.map(names.contains)
        return wanted.allSatisfy { $0 } ? nil : wanted
    }

    private static func collectColumns(of expression: Expression, into names: inout Set<String>) {
        switch expression {
        case .literal:
            return
        case .column(let name):
            names.insert(name)
        case .not(let operand), .negate(let operand), .isIn(let operand, _):
            collectColumns(of: operand, into: &names)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            collectColumns(of: lhs, into: &names)
            collectColumns(of: rhs, into: &names)
        case .function(_, let arguments):
            for argument in arguments { collectColumns(of: argument, into: &names) }
        }
    }

    /// Calls `body` with the id and record of each candidate row of `plan` (and, with
    /// `wantTies`, the key bytes that equal rows of the first sort key share) until it returns
    /// `false`.
    private func candidates(
        _ plan: QueryPlan, wantTies: Bool,
        _ body: (String, UnsafeRawBufferPointer, [UInt8]?) throws -> Bool
    ) throws {
        switch plan.access {
        case .ids(let ids):
            for id in ids {
                guard let record = try record(of: id) else { continue }
                guard try body(id, record, nil) else { return }
            }
        case .primary(let range):
            try context.walk(layout.items, range, descending: plan.descending) { key, record in
                try body(String(decoding: key, as: UTF8.self), record, wantTies ? Array(key) : nil)
            }
        case .index(let index, let ranges):
            var seen: Set<String> = []
            for range in ranges {
                var more = true
                try context.walk(index.dbi, range, descending: plan.descending) { key, value in
                    let id = String(decoding: value, as: UTF8.self)
                    guard ranges.count == 1 || seen.insert(id).inserted else { return true }
                    guard let record = try context.get(layout.items, value) else {
                        throw LMDBError.corrupt(
                            "index '\(index.index.name)' lists id '\(id)', which has no row", table: layout.schema.name,
                            path: context.path)
                    }
                    let tie =
                        wantTies
                        ? Array(
                            key.prefix(
                                IndexKey.firstComponentLength(
                                    key, valueLength: key.count - value.count, type: index.firstColumn.type))) : nil
                    more = try body(id, record, tie)
                    return more
                }
                if !more { return }
            }
        }
    }

    private func decode(id: String, record: UnsafeRawBufferPointer) throws -> Item {
        guard let item = RecordCodec.decode(record, id: id, layout: layout.schema.rowLayout) else { throw corrupt(id) }
        return item
    }

    private func corrupt(_ id: String) -> LMDBError {
        LMDBError.corrupt("the record of id '\(id)' is malformed", table: layout.schema.name, path: context.path)
    }
}
