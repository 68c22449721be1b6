import OfflineSync

extension StoreTierGroups {
    /// Rows in the `pages` table: more than 1,000, a page cap a backend might have, and more
    /// than 999, SQLite 3.15's parameter limit.
    static let pageRows = 1_234
    /// Values in the long `in` lists: more than 32,766, the parameter limit of SQLite 3.32 and
    /// later, so a backend that binds one parameter per value must do something else.
    static let longListLength = 33_000

    /// Rule 4 past every size a backend might cap or special-case: `top` and `skip` above 1,000,
    /// `in` lists above 999 and above 32,766 values (in reads, in deletes by query, and as ids of
    /// `delete(ids:)`), upserts of more than 1,000 rows at once, orderings on `id` in both
    /// directions, inside and outside a transaction.
    static let limits = ConformanceGroup(
        "limits", tier: .store,
        cases: [
            ConformanceCase("top and skip past 1,000 agree with the reference evaluator") { context in
                let (store, rows) = try openWithManyRows(context)
                for query in LimitFixtures.pagingQueries() {
                    context.expectReference(store, query, rows: rows, schema: LimitFixtures.table)
                }
            },
            ConformanceCase("top and skip past 1,000 agree with the reference inside a transaction") { context in
                let store = try context.openStore(LimitFixtures.schema)
                let rows = LimitFixtures.rows()
                let committed = Array(rows.prefix(rows.count / 2))
                let pending = Array(rows.dropFirst(rows.count / 2))
                try store.upsert(committed, into: LimitFixtures.table.name)
                context.attempt("write(_:) that upserts \(pending.count) rows and reads past 1,000 rows") {
                    try store.write { transaction in
                        try transaction.upsert(pending, into: LimitFixtures.table.name, origin: .local)
                        for query in LimitFixtures.pagingQueries() {
                            if let difference = Reference.difference(
                                query, rows: rows, schema: LimitFixtures.table, answer: { try transaction.read(query) })
                            {
                                context.fail("transaction.read(\(query.table)) \(query): \(difference)")
                            }
                        }
                    }
                }
            },
            ConformanceCase("in lists past 999 and past 32,766 values find every listed row") { context in
                let (store, rows) = try openWithManyRows(context)
                for (table, tableRows) in [
                    (LimitFixtures.table, rows), (LimitFixtures.listed, LimitFixtures.listedRows()),
                ] {
                    for query in LimitFixtures.listQueries(table: table, rows: tableRows) {
                        context.expectReference(
                            store, query, rows: LimitFixtures.candidates(query, tableRows), schema: table)
                    }
                }
            },
            ConformanceCase("deleting by a query with a long in list or a large top removes exactly those rows") {
                context in
                let cases = [
                    (LimitFixtures.table, LimitFixtures.rows()), (LimitFixtures.listed, LimitFixtures.listedRows()),
                ]
                for (table, rows) in cases {
                    let queries =
                        LimitFixtures.listQueries(table: table, rows: rows)
                        + (table == LimitFixtures.table ? LimitFixtures.largeDeletes() : [])
                    for query in queries {
                        let store = try context.openStore(LimitFixtures.schema)
                        try store.upsert(rows, into: table.name)
                        let doomed = Set(
                            try QueryEvaluator(query: query, schema: table).run(
                                over: LimitFixtures.candidates(query, rows)
                            ).items.map { Array($0.id.utf8) })
                        let deleted = context.attempt("delete(matching: \(query))") {
                            try store.delete(matching: query)
                        }
                        context.expectEqual(deleted, doomed.count, "delete(matching: \(query)) count")
                        context.expectRows(
                            store, table.name, rows.filter { !doomed.contains(Array($0.id.utf8)) },
                            "delete(matching: \(query))")
                        try store.close()
                    }
                }
            },
            ConformanceCase("deleting more than 32,766 ids removes every listed row") { context in
                let (store, rows) = try openWithManyRows(context)
                let listed = LimitFixtures.longIdList(rows: rows)
                let doomed = Set(listed.map { Array($0.utf8) })
                context.attempt("delete(ids:) of \(listed.count) ids, present ones at the start, middle and end") {
                    try store.delete(ids: listed, from: LimitFixtures.table.name)
                }
                context.expectRows(
                    store, LimitFixtures.table.name, rows.filter { !doomed.contains(Array($0.id.utf8)) },
                    "delete(ids:) of \(listed.count) ids")
                context.expectRows(
                    store, LimitFixtures.listed.name, LimitFixtures.listedRows(), "delete(ids:) from another table")
            },
            /// A backend that finds the present ids of an `insertNew` batch with one `IN` list, or
            /// inserts it in chunks, must do so past 999 and 1,000 items too: the present rows at the
            /// start, past position 999 and at the end are kept and reported, every absent one is
            /// inserted and counted.
            ConformanceCase("insertNew of more than 1,000 rows keeps and reports every present row") { context in
                let (store, rows) = try openWithManyRows(context)
                let table = LimitFixtures.table.name
                let batch = LimitFixtures.insertNewBatch(rows: rows)
                let stored = Set(rows.map { Array($0.id.utf8) })
                let inserted = batch.filter { !stored.contains(Array($0.id.utf8)) }
                let operation =
                    "insertNew(\(table)) of \(batch.count) rows, present ids at positions 0, 999, 1,000 and \(batch.count - 1)"
                let present = context.attempt(operation) {
                    try store.write { try $0.insertNew(batch, into: table, origin: .local) }
                }
                context.expectEqual(
                    present, batch.map(\.id).filter { stored.contains(Array($0.utf8)) },
                    "\(operation): the ids already there, in order")
                context.expectRows(store, table, rows + inserted, operation)
                context.expectEqual(
                    context.attempt("count(\(table))") { try store.count(table) }, rows.count + inserted.count,
                    "count(\(table)) after \(operation)")
            },
            ConformanceCase("more than 1,000 rows upserted at once are all stored") { context in
                let (store, rows) = try openWithManyRows(context)
                context.expectEqual(
                    context.attempt("count(\(LimitFixtures.table.name))") { try store.count(LimitFixtures.table.name) },
                    rows.count, "count after one upsert of \(rows.count) rows")
                for row in [rows[0], rows[999], rows[1_000], rows[rows.count - 1]] {
                    context.expectLookup(
                        store, LimitFixtures.table.name, row.id, row, "one upsert of \(rows.count) rows")
                }
            },
        ] + thresholdCases)

    /// A store whose `pages` table holds ``LimitFixtures/rows()``.
    static func openWithManyRows(_ context: CaseContext) throws -> (any LocalStore, [Item]) {
        let store = try context.openStore(LimitFixtures.schema)
        let rows = LimitFixtures.rows()
        try store.upsert(rows, into: LimitFixtures.table.name)
        try store.upsert(LimitFixtures.listedRows(), into: LimitFixtures.listed.name)
        return (store, rows)
    }
}

/// The table, rows and queries of the `limits` group.
enum LimitFixtures {
    /// An indexed integer, an unindexed string.
    static let table = TableSchema(
        "pages", columns: [Column("n", .integer), Column("s", .string)], indexes: [TableIndex("pages_n", on: ["n"])],
        synced: false)

    /// The same columns, for the longest `in` lists: few rows, so that a backend answering such
    /// a list by a scan (and the reference evaluator) stays fast.
    static let listed = TableSchema(
        "listed", columns: [Column("n", .integer), Column("s", .string)], indexes: [TableIndex("listed_n", on: ["n"])],
        synced: false)

    static let schema = StoreSchema([table, listed])

    /// The first 40 of ``rows()``, for ``listed``.
    static func listedRows() -> [Item] { Array(rows().prefix(40)) }

    /// ``StoreTierGroups/pageRows`` rows; ids of mixed length and case so that byte order differs
    /// from numeric order, `n` repeating (ties broken by id), some nulls.
    static func rows() -> [Item] {
        (0..<StoreTierGroups.pageRows).map { index in
            var item = Item(id: (index % 2 == 0 ? "r" : "R") + String(index * 7 % 1_009) + "-\(index)")
            if index % 11 != 0 { item["n"] = .int(Int64(index % 37) - 18) }
            if index % 5 != 0 { item["s"] = .string("s\(index % 13)") }
            return item
        }
    }

    /// Windows past 1,000 rows, ordered on ids in both directions and on a column with ties.
    static func pagingQueries() -> [Query] {
        var queries: [Query] = []
        let orderings: [[SortKey]] = [
            [], [SortKey("id", descending: true)], [SortKey("n"), SortKey("id", descending: true)],
            [SortKey("n", descending: true)],
        ]
        let windows: [(Int, Int?)] = [(0, 1_000), (0, 1_001), (0, 5_000), (999, nil), (1_001, 3), (1_234, 10)]
        for orderBy in orderings {
            for (skip, top) in windows {
                queries.append(
                    Query(table: table.name, orderBy: orderBy, skip: skip, top: top, includeTotalCount: top == 1_001))
            }
        }
        queries.append(
            Query(
                table: table.name, filter: .comparison(.column("n"), .ge, .literal(-10)), orderBy: [SortKey("n")],
                skip: 10, top: 1_001, includeTotalCount: true))
        return queries
    }

    /// `in` lists of 1,100 and ``StoreTierGroups/longListLength`` values whose present entries sit
    /// at the start, past position 999 and at the end.
    /// On ``table``, lists of 1,100 values; on ``listed``, lists of
    /// ``StoreTierGroups/longListLength`` values.
    static func listQueries(table: TableSchema, rows: [Item]) -> [Query] {
        let ids = longIdList(rows: rows)
        let numberCount = table == listed ? StoreTierGroups.longListLength : 1_100
        let numbers: [Value] = (0..<numberCount).map { .int(Int64($0) + 1_000) } + [.int(-18), .int(18)]
        guard table == listed else {
            let medium = Array(ids.prefix(1_100)) + [rows[7].id]
            return [
                Query(table: table.name, filter: .isIn(.column("id"), medium.map(Value.string))),
                Query(
                    table: table.name, filter: .isIn(.column("id"), medium.map(Value.string)),
                    orderBy: [SortKey("id", descending: true)], skip: 1, top: 2, includeTotalCount: true),
                Query(table: table.name, filter: .isIn(.column("n"), numbers), orderBy: [SortKey("n")]),
            ]
        }
        return [
            Query(table: table.name, filter: .isIn(.column("id"), ids.map(Value.string)), orderBy: [SortKey("id")]),
            Query(
                table: table.name, filter: .isIn(.column("id"), ids.map(Value.string)),
                orderBy: [SortKey("id", descending: true)], skip: 1, top: 2, includeTotalCount: true),
            Query(table: table.name, filter: .isIn(.column("n"), numbers)),
        ]
    }

    /// The rows a query pinned to `id in (…)` can match, the others dropped: the reference
    /// evaluator then compares a long list with those rows only, which gives the same answer
    /// faster (every other query gets every row).
    static func candidates(_ query: Query, _ rows: [Item]) -> [Item] {
        guard case .isIn(.column("id"), let values)? = query.filter else { return rows }
        let listed = Set(values.compactMap { $0.stringValue.map { Array($0.utf8) } })
        return rows.filter { listed.contains(Array($0.id.utf8)) }
    }

    /// Deletes by query with windows past 1,000 rows.
    static func largeDeletes() -> [Query] {
        [
            Query(table: table.name, orderBy: [SortKey("id", descending: true)], top: 1_001),
            Query(table: table.name, orderBy: [SortKey("n")], skip: 1_000),
        ]
    }

    /// 1,100 rows for `insertNew` into ``table``: new ids, and present ids with other values at
    /// positions 0, 999 and 1,000 and at the end.
    static func insertNewBatch(rows: [Item]) -> [Item] {
        var batch = (0..<1_100).map { Item(id: "new-\($0)", values: ["n": .int(Int64($0 % 37)), "s": "inserted"]) }
        for (position, row) in [(0, 3), (999, 10), (1_000, 11)] {
            batch[position] = Item(id: rows[row].id, values: ["n": 99, "s": "not inserted"])
        }
        batch.append(Item(id: rows[rows.count - 1].id, values: ["s": "not inserted"]))
        return batch
    }

    /// ``StoreTierGroups/longListLength`` ids: three present ones first, then missing ones with
    /// present ids at positions 999, 1,000 and 32,767, and the last three present ones at the end.
    static func longIdList(rows: [Item]) -> [String] {
        var ids = (0..<StoreTierGroups.longListLength).map { "missing-\($0)" }
        for (position, row) in [(0, 3), (1, 4), (2, 5), (999, 10), (1_000, 11), (32_767, 12)] {
            ids[position] = rows[row].id
        }
        ids.append(contentsOf: rows.suffix(3).map(\.id))
        return ids
    }
}
