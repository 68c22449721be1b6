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
            /// The corners of the semantics that only the seeded generated queries reached before,
            /// pinned so that every run with any seed checks them: modulo of negatives, `in` lists
            /// holding null, `length` in scalars, `not` of null, `trim` of Unicode white space,
            /// calendar functions of dates before 1970, integers past 2^53 against doubles, null-safe
            /// `ne`, and orderings by several keys, by doubles and by dates (ties by id ascending).
            /// Also the functions an SQL dialect computes otherwise: case-sensitive `startswith`,
            /// `endswith` and `contains` (SQLite's `LIKE` is not), ASCII-only `tolower` and `toupper`
            /// (PostgreSQL's fold every letter), `round` of halves away from zero (PostgreSQL's
            /// `round(double precision)` takes them to even), integer `div`, null from `concat`
            /// with a null (SQL's `CONCAT()` skips it) and `indexof` in scalars. And `in` lists of doubles
            /// on an integer column, integer overflow and negative `substring` starts.
            ConformanceCase(Pinned.caseName) { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert(Pinned.rows, into: "notes")
                for query in Pinned.queries() {
                    context.expectReference(store, query, rows: Pinned.rows, schema: Fixtures.notes)
                }
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
                // And the empty needle, which every string (the empty one too) starts with, ends with
                // and contains (SQLite's substr(s, -0) is the whole string, not its empty end).
                let needles = [
                    "\\", "\\\\", "a\\b", "a\\", "\\b", "\\%", "\\_", "_", "%", "a_", "a%", "_b", "%b", "\\x",
                    "x\\", "",
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
                // "apple " and "Banana ": a PAD SPACE collation (trailing spaces ignored) is not bytes either;
                // "apple\u{0}" and "apple\u{0}z": nor is a C string's, which U+0000 ends.
                let titles = [
                    "apple", "Apple", "APPLE", "banana", "Banana", "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "", "z",
                    "é", "日本", "apple ", "Banana ", "apple\u{0}", "apple\u{0}z",
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
        ] + cornerCases)

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
            if context.suite.stopsAtFirstDifference { return }
        }
        if failing > reportedQueries {
            context.fail(
                "\(operation)(\(schema.name)): \(failing - reportedQueries) more of \(queries.count) generated queries disagree with the reference evaluator"
            )
        }
    }
}

/// The fixture and the hand-written queries of the query group's pinned semantics case.
enum Pinned {
    static let caseName = "pinned filter and ordering semantics agree with the reference evaluator"

    /// Notes whose values sit at the corners the queries probe.
    static let rows: [Item] = {
        func note(
            _ id: String, _ title: String?, _ priority: Int64?, _ score: Double?, _ done: Bool?, _ due: Int64?
        ) -> Item {
            var item = Fixtures.note(id, title: title, priority: priority, score: score, done: done)
            if let due { item["due"] = .date(Timestamp(millisecondsSince1970: due)) }
            return item
        }
        return [
            note("n1", "\u{1F600}", -7, -7.5, nil, -1),
            note("n2", "\u{3000}x\u{A0}", 9_007_199_254_740_993, 10.5, true, -2_208_988_800_001),
            note("n3", nil, nil, nil, false, nil),
            note("n4", "x", 2, 2.5, true, 1_000),
            note("n5", "", 3, -0.5, nil, 86_399_999),
            note("n6", "a", -9_007_199_254_740_993, 100, false, -86_400_000),
            note("n7", "x", 2, 2.5, true, 1_000),
            note("N8", "x", 2, 9, true, 1_000),
            note("n9", "\u{2003}\u{2003}", -2, nil, true, -62_135_596_800_000),
            note("n10", "\u{C9}lan X", -3, 0.5, false, 1_500),
        ]
    }()

    static func queries() -> [Query] {
        func compare(_ lhs: FilterExpression, _ op: ComparisonOperator, _ rhs: Value) -> FilterExpression {
            .comparison(lhs, op, .literal(rhs))
        }
        let title = FilterExpression.column("title")
        let priority = FilterExpression.column("priority")
        let score = FilterExpression.column("score")
        let due = FilterExpression.column("due")
        let done = FilterExpression.column("done")
        let twoTo53 = Value.double(9_007_199_254_740_992)
        var filters: [FilterExpression] = [
            // Modulo truncates toward zero: -7 mod 3 is -1, not 2.
            compare(.arithmetic(priority, .mod, .literal(3)), .eq, -1),
            compare(.arithmetic(priority, .mod, .literal(3)), .lt, 0),
            compare(.arithmetic(priority, .mod, .literal(-3)), .eq, 1),
            compare(.arithmetic(score, .mod, .literal(2)), .eq, .double(-1.5)),
            // A null in an `in` list matches null.
            .isIn(title, ["x", .null]), .isIn(priority, [.null]), .not(.isIn(title, ["x", .null])),
            // `length` counts Unicode scalars: an emoji is one.
            compare(.function(.length, [title]), .eq, 1), compare(.function(.length, [title]), .eq, 2),
            // `not` of null is true.
            .not(done), .not(.function(.startsWith, [title, .literal("x")])),
            .not(compare(title, .eq, "x")),
            // `trim` removes Unicode white space.
            compare(.function(.trim, [title]), .eq, "x"), compare(.function(.trim, [title]), .eq, ""),
            compare(.function(.length, [.function(.trim, [title])]), .eq, 0),
            // `ne` is null-safe: null ne 'x' is true.
            compare(title, .ne, "x"), compare(priority, .ne, 2), compare(done, .ne, true),
            compare(title, .ne, .null),
            // `startswith`, `endswith` and `contains` keep letter case; `tolower` and `toupper`
            // change ASCII letters only.
            .function(.startsWith, [title, .literal("X")]), .function(.endsWith, [title, .literal("x")]),
            .function(.contains, [title, .literal("A")]), .function(.contains, [title, .literal("lan x")]),
            compare(.function(.toLower, [title]), .eq, "\u{E9}lan x"),
            compare(.function(.toLower, [title]), .eq, "\u{C9}lan x"),
            compare(.function(.toUpper, [title]), .eq, "\u{C9}LAN X"),
            // `round` takes halves away from zero.
            compare(.function(.round, [score]), .eq, .double(3)), compare(.function(.round, [score]), .eq, .double(11)),
            compare(.function(.round, [score]), .eq, .double(-1)), compare(.function(.round, [score]), .eq, .double(1)),
            // `div` of two integers truncates toward zero and stays an integer.
            compare(.arithmetic(priority, .div, .literal(2)), .eq, 1),
            compare(.arithmetic(priority, .div, .literal(2)), .eq, -3),
            compare(.arithmetic(priority, .div, .literal(2)), .lt, .double(-3.2)),
            // `concat` with a null is null.
            compare(.function(.concat, [title, .literal("y")]), .eq, "y"),
            compare(.function(.concat, [.literal("y"), title]), .ne, .null),
            // `in` lists compare as numbers: 2.5 does not match the integer 2 (nor -2.5 the integer -2).
            .isIn(priority, [.double(2.5), -7]), .isIn(priority, [.double(-2.5), .double(-3)]),
            // Integer arithmetic past Int64 goes on in doubles instead of wrapping around.
            compare(.arithmetic(priority, .mul, .literal(1024)), .gt, 0),
            compare(.arithmetic(priority, .add, .literal(.int(.max))), .lt, 0),
            compare(.negate(.arithmetic(priority, .sub, .literal(.int(.max)))), .lt, 0),
            // A negative `substring` start counts as 0, not from the end.
            compare(.function(.substring, [title, .literal(.int(-1)), .literal(2)]), .eq, "\u{C9}l"),
            compare(.function(.substring, [title, .literal(.int(-2))]), .eq, "\u{3000}x\u{A0}"),
            // `indexof` counts Unicode scalars.
            compare(.function(.indexOf, [title, .literal("x")]), .eq, 1),
            compare(.function(.indexOf, [title, .literal("X")]), .eq, 5),
            compare(.function(.indexOf, [title, .literal("x")]), .eq, 3),
        ]
        // Calendar functions of dates before 1970 (and at midnight, and in year 1).
        let calendar: [(Function, Int64)] = [
            (.year, 1969), (.month, 12), (.day, 31), (.hour, 23), (.minute, 59), (.second, 59), (.year, 1899),
            (.year, 1), (.day, 1), (.hour, 0), (.second, 0),
        ]
        filters += calendar.map { compare(.function($0.0, [due]), .eq, .int($0.1)) }
        // Integers past 2^53 compare exactly with doubles.
        for op in ComparisonOperator.allCases {
            filters.append(compare(priority, op, twoTo53))
            filters.append(compare(priority, op, .double(-9_007_199_254_740_992)))
        }
        // Integers compare with fractional doubles as numbers, not truncated.
        for op in ComparisonOperator.allCases {
            filters.append(compare(priority, op, .double(2.5)))
            filters.append(compare(priority, op, .double(-2.5)))
        }
        var queries = filters.map { Query(table: "notes", filter: $0, includeTotalCount: true) }
        // Orderings by several keys, by doubles, dates and booleans, with ties broken by id ascending.
        let orderings: [[SortKey]] = [
            [SortKey("score")], [SortKey("score", descending: true)], [SortKey("due")],
            [SortKey("due", descending: true)], [SortKey("done")], [SortKey("done", descending: true)],
            [SortKey("done"), SortKey("title", descending: true)],
            [SortKey("done", descending: true), SortKey("title"), SortKey("score", descending: true)],
            [SortKey("title"), SortKey("priority", descending: true)],
            [SortKey("priority"), SortKey("score", descending: true)],
            [SortKey("due", descending: true), SortKey("priority", descending: true)],
        ]
        queries += orderings.map { Query(table: "notes", orderBy: $0) }
        queries += orderings.map { Query(table: "notes", orderBy: $0, skip: 2, top: 4, includeTotalCount: true) }
        return queries
    }
}

/// The error a case throws to roll a transaction back on purpose.
struct RollBack: Error, CustomStringConvertible {
    var description: String { "deliberate rollback" }
}
