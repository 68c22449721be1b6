import OfflineSync

extension StoreTierGroups {
    /// Rows in the generated corpus.
    static let corpusRows = 200
    /// Generated queries compared with the reference evaluator.
    static let corpusQueries = 400
    /// Failing queries reported in full before the rest are only counted.
    static let reportedQueries = 8

    /// Queries compared row for row with the reference evaluator: a seeded random corpus and
    /// hand-written corner cases of ordering and string comparison.
    static let query = ConformanceGroup(
        "query", tier: .store,
        cases: [
            ConformanceCase("generated queries agree with the reference evaluator") { context in
                let store = try context.openStore(StoreSchema([QueryCorpus.table]))
                var corpus = QueryCorpus(seed: context.suite.seed)
                let rows = corpus.rows(count: corpusRows)
                try store.upsert(rows, into: QueryCorpus.table.name)
                let queries = (0..<corpusQueries).map { _ in corpus.query() }
                compare(context, queries: queries, rows: rows, operation: "read") { try store.read($0) }
            },
            ConformanceCase("generated queries on indexed columns agree with the reference evaluator") { context in
                let store = try context.openStore(StoreSchema([QueryCorpus.indexedTable]))
                var corpus = QueryCorpus(seed: context.suite.seed &+ 3)
                let rows = corpus.rows(count: corpusRows)
                try store.upsert(rows, into: QueryCorpus.indexedTable.name)
                let queries = (0..<corpusQueries).map { _ in corpus.plannerQuery() }
                compare(
                    context, queries: queries, rows: rows, schema: QueryCorpus.indexedTable, operation: "read"
                ) { try store.read($0) }
                // The same after updates and deletes, which the indexes must follow.
                let replaced = corpus.rows(count: corpusRows / 4).enumerated().map { position, row in
                    Item(id: rows[position * 3].id, values: row.values)
                }
                let deleted = rows.enumerated().filter { $0.offset % 7 == 1 }.map(\.element.id)
                try store.write { transaction in
                    try transaction.upsert(replaced, into: QueryCorpus.indexedTable.name, origin: .local)
                    try transaction.delete(ids: deleted, from: QueryCorpus.indexedTable.name)
                }
                let replacedIds = Set(replaced.map { Array($0.id.utf8) })
                let deletedIds = Set(deleted.map { Array($0.utf8) })
                let remaining =
                    rows.filter { !replacedIds.contains(Array($0.id.utf8)) && !deletedIds.contains(Array($0.id.utf8)) }
                    + replaced.filter { !deletedIds.contains(Array($0.id.utf8)) }
                let moreQueries = (0..<corpusQueries / 2).map { _ in corpus.plannerQuery() }
                compare(
                    context, queries: moreQueries, rows: remaining, schema: QueryCorpus.indexedTable,
                    operation: "read after updates"
                ) { try store.read($0) }
            },
            ConformanceCase("the Azure clients' filter forms agree with the reference evaluator") { context in
                let store = try context.openStore(StoreSchema([QueryCorpus.table]))
                var corpus = QueryCorpus(seed: context.suite.seed &+ 2)
                let rows = corpus.rows(count: corpusRows)
                try store.upsert(rows, into: QueryCorpus.table.name)
                compare(context, queries: try QueryCorpus.clientQueries(), rows: rows, operation: "read") {
                    try store.read($0)
                }
            },
            ConformanceCase("generated queries inside a transaction see its writes") { context in
                let store = try context.openStore(StoreSchema([QueryCorpus.table]))
                var corpus = QueryCorpus(seed: context.suite.seed &+ 1)
                let committed = corpus.rows(count: corpusRows / 2)
                try store.upsert(committed, into: QueryCorpus.table.name)
                let pending = corpus.rows(count: corpusRows / 2).map { Item(id: "tx-" + $0.id, values: $0.values) }
                let replaced = committed.prefix(20).map { Item(id: $0.id, values: corpus.rows(count: 1)[0].values) }
                let queries = (0..<corpusQueries / 5).map { _ in corpus.query() }
                let replacedIds = Set(replaced.map { Array($0.id.utf8) })
                let visible = committed.filter { !replacedIds.contains(Array($0.id.utf8)) } + pending + replaced
                let error = context.expectThrows("write(_:) that upserts, reads and then throws") {
                    try store.write { transaction in
                        try transaction.upsert(pending + replaced, into: QueryCorpus.table.name, origin: .local)
                        compare(context, queries: queries, rows: visible, operation: "transaction.read") {
                            try transaction.read($0)
                        }
                        throw RollBack()
                    }
                }
                context.expect(
                    error is RollBack,
                    "write(_:) must rethrow the body's own error, got \(error.map { CaseContext.describe($0) } ?? "nothing")"
                )
            },
            /// A backend translating the string functions into `LIKE` patterns must escape `%`,
            /// `_` and its escape character; one that forgets one of them, or that reads `\` as an
            /// escape of its own, matches other rows.
            ConformanceCase("startswith, endswith and contains take %, _ and \\ literally") { context in
                let store = try context.openStore(Fixtures.schema)
                let titles = [
                    "a\\b", "ab", "a_b", "axb", "a%b", "50%", "50", "\\", "\\\\", "_", "%", "a\\%b", "a\\_b",
                    "x\\", "\\x", "x", "",
                ]
                let rows = titles.enumerated().map { Fixtures.note("t\($0.offset)", title: $0.element) }
                try store.upsert(rows, into: "notes")
                let needles = [
                    "\\", "\\\\", "a\\b", "a\\", "\\b", "\\%", "\\_", "_", "%", "a_", "a%", "_b", "%b", "\\x",
                    "x\\",
                ]
                for needle in needles {
                    for function in [Function.startsWith, .endsWith, .contains] {
                        context.expectReference(
                            store,
                            Query(
                                table: "notes",
                                filter: .function(function, [.column("title"), .literal(.string(needle))])),
                            rows: rows, schema: Fixtures.notes)
                    }
                }
            },
            /// A backend that seeks once per listed value (an index lookup per id, a union of
            /// equalities) answers a row as often as its value is listed, and may count or delete it
            /// that often.
            ConformanceCase("in lists with repeated values answer each row once") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = [
                    Fixtures.note("a", title: "x", priority: 1), Fixtures.note("b", title: "y", priority: 2),
                    Fixtures.note("c", title: "x", priority: 1),
                ]
                try store.upsert(rows, into: "notes")
                let filters: [FilterExpression] = [
                    .isIn(.column("id"), ["a", "a", "b"]),
                    .isIn(.column("id"), ["c", "a", "c", "a"]),
                    .and(.isIn(.column("id"), ["a", "a"]), .comparison(.column("priority"), .eq, .literal(1))),
                    .isIn(.column("title"), ["x", "x", "y"]),
                    .isIn(.column("priority"), [1, 1, .double(1.0)]),
                ]
                for filter in filters {
                    context.expectReference(
                        store, Query(table: "notes", filter: filter, includeTotalCount: true), rows: rows,
                        schema: Fixtures.notes)
                    context.expectReference(
                        store,
                        Query(
                            table: "notes", filter: filter, orderBy: [SortKey("title", descending: true)], skip: 1,
                            top: 1, includeTotalCount: true), rows: rows, schema: Fixtures.notes)
                }
                let doomed = Query(table: "notes", filter: .isIn(.column("id"), ["a", "a", "b", "a"]))
                context.expectEqual(
                    context.attempt("delete(matching: \(doomed))") { try store.delete(matching: doomed) }, 2,
                    "delete(matching: \(doomed)) count")
                context.expectRows(store, "notes", [rows[2]], "delete(matching: \(doomed))")
            },
            ConformanceCase("nulls sort first ascending and last descending, ties by id") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = [
                    Fixtures.note("c", priority: 2), Fixtures.note("a"), Fixtures.note("d", priority: 1),
                    Fixtures.note("b"), Fixtures.note("e", priority: 2), Fixtures.note("B", priority: 1),
                ]
                try store.upsert(rows, into: "notes")
                for descending in [false, true] {
                    context.expectReference(
                        store, Query(table: "notes", orderBy: [SortKey("priority", descending: descending)]),
                        rows: rows, schema: Fixtures.notes)
                    context.expectReference(
                        store,
                        Query(
                            table: "notes", orderBy: [SortKey("title", descending: descending), SortKey("priority")]),
                        rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("strings compare by UTF-8 bytes, case-sensitively") { context in
                let store = try context.openStore(Fixtures.schema)
                let titles = [
                    "apple", "Apple", "APPLE", "banana", "Banana", "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "", "z",
                    "é", "日本",
                ]
                let rows = titles.enumerated().map { Fixtures.note("t\($0.offset)", title: $0.element) }
                try store.upsert(rows, into: "notes")
                let queries: [Query] = [
                    Query(table: "notes", orderBy: [SortKey("title")]),
                    Query(table: "notes", orderBy: [SortKey("title", descending: true)]),
                    Query(table: "notes", filter: .comparison(.column("title"), .eq, .literal("apple"))),
                    Query(table: "notes", filter: .comparison(.column("title"), .gt, .literal("Banana"))),
                    Query(table: "notes", filter: .comparison(.column("title"), .lt, .literal("b"))),
                    Query(table: "notes", filter: .function(.startsWith, [.column("title"), .literal("A")])),
                    Query(table: "notes", filter: .function(.contains, [.column("title"), .literal("PP")])),
                    Query(
                        table: "notes",
                        filter: .comparison(.function(.toLower, [.column("title")]), .eq, .literal("caf\u{E9}"))),
                    Query(
                        table: "notes", filter: .comparison(.function(.length, [.column("title")]), .eq, .literal(5))),
                    Query(table: "notes", filter: .isIn(.column("title"), ["APPLE", "cafe\u{301}"])),
                ]
                for query in queries {
                    context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("numbers compare numerically and negative zero equals zero") { context in
                let store = try context.openStore(Fixtures.schema)
                let scores: [Double] = [
                    -0.0, 0.0, 0.1, -1.5, 2.0, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude, 1e300,
                ]
                let rows = scores.enumerated().map {
                    Fixtures.note("s\($0.offset)", priority: Int64($0.offset) - 3, score: $0.element)
                }
                try store.upsert(rows, into: "notes")
                let queries: [Query] = [
                    Query(table: "notes", filter: .comparison(.column("score"), .eq, .literal(0))),
                    Query(table: "notes", filter: .comparison(.column("score"), .eq, .literal(.double(-0.0)))),
                    Query(table: "notes", filter: .comparison(.column("score"), .gt, .literal(0))),
                    Query(table: "notes", filter: .comparison(.column("priority"), .lt, .literal(.double(-0.5)))),
                    Query(table: "notes", filter: .comparison(.column("priority"), .lt, .column("score"))),
                    Query(table: "notes", orderBy: [SortKey("score", descending: true)]),
                ]
                for query in queries {
                    context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("bounds at the edges of ids and indexed columns") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = [
                    Fixtures.note("a", title: "", priority: .min, score: -0.0),
                    Fixtures.note("b", title: "b", priority: .max),
                    Fixtures.note("\u{10FFFF}", title: "\u{10FFFF}", priority: 0, score: 0.0), Fixtures.note("A"),
                ]
                try store.upsert(rows, into: "notes")
                let bounds: [FilterExpression] =
                    ComparisonOperator.allCases.flatMap { op -> [FilterExpression] in
                        [
                            .comparison(.column("id"), op, .literal("")),
                            .comparison(.column("id"), op, .literal("\u{10FFFF}\u{10FFFF}")),
                            .comparison(.column("title"), op, .literal("")),
                            .comparison(.column("priority"), op, .literal(.int(.min))),
                            .comparison(.column("priority"), op, .literal(.int(.max))),
                            .comparison(.column("priority"), op, .literal(.double(9.3e18))),
                            .comparison(.column("priority"), op, .literal(.double(-0.5))),
                            .comparison(.column("score"), op, .literal(.double(-0.0))),
                        ]
                    } + [
                        .function(.startsWith, [.column("id"), .literal("")]), .isIn(.column("id"), []),
                        .isIn(.column("id"), [""]),
                        .and(
                            .comparison(.column("title"), .eq, .literal("")),
                            .comparison(.column("score"), .eq, .literal(0))),
                    ]
                for filter in bounds {
                    for orderBy in [[], [SortKey("title", descending: true)]] {
                        context.expectReference(
                            store, Query(table: "notes", filter: filter, orderBy: orderBy), rows: rows,
                            schema: Fixtures.notes)
                    }
                }
            },
        ])

    /// Compares every query's answer with the reference evaluator, reporting the first few failing
    /// queries in OData form with the seed that reproduces them.
    private static func compare(
        _ context: CaseContext, queries: [Query], rows: [Item], schema: TableSchema = QueryCorpus.table,
        operation: String, answer: (Query) throws -> QueryResult
    ) {
        let stored = rows.compactMap { try? schema.normalize($0, origin: .local) }
        var failing = 0
        for (number, query) in queries.enumerated() {
            guard
                let difference = Reference.difference(
                    query, rows: stored, schema: schema, answer: { try answer(query) })
            else { continue }
            failing += 1
            if failing <= reportedQueries {
                context.fail(
                    "\(operation)(\(query.table)) generated query #\(number) of seed 0x\(String(context.suite.seed, radix: 16)): \(query): \(difference)"
                )
            }
        }
        if failing > reportedQueries {
            context.fail(
                "\(operation)(\(schema.name)): \(failing - reportedQueries) more of \(queries.count) generated queries disagree with the reference evaluator"
            )
        }
    }
}

/// The error a case throws to roll a transaction back on purpose.
struct RollBack: Error, CustomStringConvertible {
    var description: String { "deliberate rollback" }
}
