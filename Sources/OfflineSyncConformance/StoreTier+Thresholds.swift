import OfflineSync

extension StoreTierGroups {
    /// Rule 4 past the thresholds the other limits cases do not cross: strings longer than 64 KiB
    /// in indexed columns and as arguments of string functions, `in` lists of more than a few
    /// dozen values mixing null, integers and doubles, and transactions reading back more than a
    /// thousand rows of their own.
    static let thresholdCases: [ConformanceCase] = [
        ConformanceCase("strings past 64 KiB in indexed columns and in string functions agree with the reference") {
            context in
            let table = ThresholdFixtures.longStrings
            let store = try context.openStore(StoreSchema([table]))
            let rows = ThresholdFixtures.longStringRows()
            try store.upsert(rows, into: table.name)
            for query in ThresholdFixtures.longStringQueries(rows) {
                context.expectReference(store, query, rows: rows, schema: table)
            }
            for row in rows { context.expectLookup(store, table.name, row.id, row, "upsert of strings past 64 KiB") }
            context.attempt("write(_:) reading strings past 64 KiB it wrote") {
                try store.write { transaction in
                    try transaction.delete(matching: Query(table: table.name))
                    try transaction.upsert(rows, into: table.name, origin: .server)
                    for query in ThresholdFixtures.longStringQueries(rows) {
                        if let difference = Reference.difference(
                            query, rows: rows, schema: table, answer: { try transaction.read(query) })
                        {
                            context.fail(
                                "transaction.read(\(table.name)) \(RandomText.clipped(query.description)): \(difference)"
                            )
                        }
                    }
                }
            }
        },
        ConformanceCase(
            "in lists of more than a few dozen values mixing null, integers and doubles agree with the reference"
        ) {
            context in
            let table = ThresholdFixtures.numbers
            let store = try context.openStore(StoreSchema([table]))
            let rows = ThresholdFixtures.numberRows()
            try store.upsert(rows, into: table.name)
            for query in ThresholdFixtures.listQueries() {
                context.expectReference(store, query, rows: rows, schema: table)
            }
            for query in ThresholdFixtures.listQueries().prefix(12) {
                context.rollingBack(store, "write(_:) deleting by \(RandomText.clipped(query.description, limit: 120))")
                { transaction in
                    let expected = try QueryEvaluator(query: query, schema: table).run(over: rows).items.count
                    let deleted = try transaction.delete(matching: Query(table: table.name, filter: query.filter))
                    if deleted != expected {
                        context.fail(
                            "delete(matching:) \(RandomText.clipped(query.description, limit: 200)) answered \(deleted); expected \(expected)"
                        )
                    }
                }
            }
        },
        ConformanceCase("more than 1,000 rows written in a transaction are read back inside it") { context in
            let table = LimitFixtures.table
            let store = try context.openStore(LimitFixtures.schema)
            let all = LimitFixtures.rows()
            let committed = Array(all.prefix(200))
            try store.upsert(committed, into: table.name)
            // 1,034 rows of the transaction's own: new ones, and replacements of committed ones.
            var pending = Array(all.dropFirst(200))
            pending += committed.prefix(50).map { row in
                var row = row
                row["s"] = .string("replaced")
                return row
            }
            var expected = Dictionary(uniqueKeysWithValues: committed.map { ($0.id, $0) })
            for row in pending { expected[row.id] = row }
            let queries = [
                Query(table: table.name), Query(table: table.name, includeTotalCount: true),
                Query(table: table.name, top: 0, includeTotalCount: true),
                Query(
                    table: table.name, filter: .comparison(.column("s"), .eq, .literal("replaced")),
                    includeTotalCount: true),
                Query(
                    table: table.name, filter: .comparison(.column("n"), .ge, .literal(3)),
                    orderBy: [SortKey("n", descending: true)], skip: 999, top: 3),
                Query(table: table.name, orderBy: [SortKey("id", descending: true)], top: 1_001),
                Query(table: table.name, orderBy: [SortKey("n")], skip: 1_000),
            ]
            context.rollingBack(store, "write(_:) of \(pending.count) rows read back inside") { transaction in
                try transaction.upsert(Array(pending.prefix(600)), into: table.name, origin: .local)
                try transaction.upsert(Array(pending.dropFirst(600)), into: table.name, origin: .server)
                let rows = Array(expected.values)
                for query in queries {
                    if let difference = Reference.difference(
                        query, rows: rows, schema: table, answer: { try transaction.read(query) })
                    {
                        context.fail(
                            "transaction.read(\(table.name)) \(query) with \(pending.count) pending rows: \(difference)"
                        )
                    }
                }
                for row in [pending[0], pending[999], pending[1_000], pending.last!] {
                    let found = try transaction.lookup(table: table.name, id: row.id)
                    if let difference = RowDifference.first(expected: [row], actual: found.map { [$0] } ?? []) {
                        context.fail(
                            "transaction.lookup(\(table.name), id '\(row.id)') with \(pending.count) pending rows: \(difference)"
                        )
                    }
                }
                let probe = [pending[1_010].id, pending[20].id, "absent"]
                let present = try transaction.insertNew(probe.map { Item(id: $0) }, into: table.name, origin: .local)
                if present != Array(probe.prefix(2)) {
                    context.fail(
                        "transaction.insertNew(\(table.name)) of \(probe) with \(pending.count) pending rows reported \(present) present"
                    )
                }
                let deleted = try transaction.delete(
                    matching: Query(table: table.name, filter: .comparison(.column("s"), .eq, .literal("replaced"))))
                if deleted != 50 {
                    context.fail(
                        "transaction.delete(matching:) of the 50 replaced rows among \(pending.count) pending answered \(deleted)"
                    )
                }
                let left = try transaction.read(Query(table: table.name, top: 0, includeTotalCount: true)).totalCount
                if left != expected.count - 50 + 1 {
                    context.fail(
                        "transaction count after deleting 50 of its rows: \(left.map(String.init) ?? "nil"), expected \(expected.count - 49)"
                    )
                }
            }
            context.expectRows(store, table.name, committed, "after rolling back \(pending.count) pending rows")
        },
    ]
}

/// The tables, rows and queries of the threshold cases.
enum ThresholdFixtures {
    /// An indexed string, an unindexed one, a composite index led by a string.
    static let longStrings = TableSchema(
        "long_strings", columns: [Column("s", .string), Column("u", .string), Column("n", .integer)],
        indexes: [TableIndex("long_strings_s", on: ["s"]), TableIndex("long_strings_u_n", on: ["u", "n"])],
        synced: false)

    /// Strings of 65,535, 65,536, 65,537 and 70,000 bytes of one stem (ASCII, or two-byte letters
    /// so that a cut at 65,535 bytes falls inside one), differing only after their first 64 KiB.
    static func longStringRows() -> [Item] {
        var rows: [Item] = []
        let tails = ["", "a", "b", "B", " ", "\u{FEFF}", "\u{E9}"]
        for stem in 0...1 {
            for length in [65_535, 65_536, 65_537, 70_000] {
                for (position, tail) in tails.enumerated() where (length + position) % 2 == 0 || position < 2 {
                    let body = RandomValues.sized(length, stem: stem, tail: 0, lead: 0)
                    rows.append(
                        Item(
                            id: "r\(stem)-\(length)-\(position)",
                            values: ["s": .string(body + tail), "u": .string(tail + body), "n": .int(Int64(position))]))
                }
            }
        }
        rows.append(Item(id: "short", values: ["s": "a", "u": "b", "n": 0]))
        rows.append(Item(id: "none", values: ["n": 1]))
        return rows
    }

    static func longStringQueries(_ rows: [Item]) -> [Query] {
        let s = FilterExpression.column("s")
        let u = FilterExpression.column("u")
        let picked = stride(from: 0, to: rows.count, by: 5).map { rows[$0] }
        var filters: [FilterExpression] = []
        for row in picked {
            guard case .string(let text) = row["s"] else { continue }
            filters.append(.comparison(s, .eq, .literal(.string(text))))
            filters.append(.comparison(s, .lt, .literal(.string(text))))
            filters.append(.comparison(u, .ge, .literal(.string(text))))
            filters.append(.isIn(s, [.string(text), "a", .null]))
            filters.append(
                .function(
                    .startsWith, [s, .literal(.string(String(text.unicodeScalars.prefix(65_536).map(Character.init))))])
            )
            filters.append(
                .and(
                    .comparison(u, .eq, row["u"].isNull ? .literal(.null) : .literal(row["u"])),
                    .comparison(.column("n"), .ge, .literal(0))))
        }
        let functions: [FilterExpression] = [
            .comparison(.function(.length, [s]), .gt, .literal(65_535)),
            .comparison(.function(.length, [u]), .eq, .literal(65_537)),
            .comparison(.function(.length, [s]), .eq, .literal(70_000)),
            .comparison(.function(.substring, [s, .literal(65_535)]), .eq, .literal("a")),
            .comparison(.function(.substring, [s, .literal(65_534), .literal(2)]), .eq, .literal("ab")),
            .comparison(.function(.indexOf, [s, .literal("b")]), .gt, .literal(65_000)),
            .comparison(.function(.indexOf, [u, .literal("a")]), .eq, .literal(0)),
            .function(.endsWith, [s, .literal("B")]), .function(.contains, [s, .literal("a\u{FEFF}")]),
            .function(.contains, [u, .literal("\u{E9}\u{E9}a")]),
            .comparison(.function(.trim, [u]), .eq, s),
            .comparison(.function(.length, [.function(.trim, [s])]), .lt, .function(.length, [s])),
            .comparison(.function(.toUpper, [s]), .eq, .function(.toUpper, [u])),
            .comparison(.function(.toLower, [u]), .gt, .literal("a")),
            .comparison(.function(.replace, [s, .literal("b"), .literal("a")]), .eq, u),
            .comparison(.function(.concat, [s, .literal("x")]), .gt, .function(.concat, [u, .literal("x")])),
            .comparison(s, .eq, u), .comparison(s, .gt, u),
        ]
        var queries = (filters + functions).map { Query(table: longStrings.name, filter: $0, selection: ["n"]) }
        queries += [
            Query(table: longStrings.name, orderBy: [SortKey("s")], selection: ["n"]),
            Query(table: longStrings.name, orderBy: [SortKey("u", descending: true), SortKey("n")], selection: ["n"]),
            Query(table: longStrings.name, orderBy: [SortKey("s", descending: true)], top: 5),
        ]
        return queries
    }

    /// Integer and double columns, indexed and not.
    static let numbers = TableSchema(
        "list_numbers",
        columns: [Column("i", .integer), Column("j", .integer), Column("d", .double), Column("s", .string)],
        indexes: [TableIndex("list_numbers_i", on: ["i"]), TableIndex("list_numbers_d", on: ["d"])], synced: false)

    static func numberRows() -> [Item] {
        let integers: [Int64?] = [
            nil, 0, 1, 2, -2, 3, 50, 64, 65, 99, 100, 101, 999, 1_000, 1_001, .max, .min, 9_007_199_254_740_993,
        ]
        let doubles: [Double?] = [
            nil, 0, -0.0, 2, 2.5, -2.5, 0.5, 64, 100.5, 1e300, 9_223_372_036_854_775_808.0, .leastNonzeroMagnitude,
        ]
        return (0..<60).map { position in
            var item = Item(id: "n\(position)")
            if let value = integers[position % integers.count] {
                item["i"] = .int(value)
                item["j"] = .int(value)
            }
            if let value = doubles[position % doubles.count] { item["d"] = .double(value) }
            if position % 4 != 0 { item["s"] = .string(String(position % 7)) }
            return item
        }
    }

    /// `in` lists of 65 to 1,001 values: integers then doubles, doubles then integers, a null
    /// at the front, the middle or the end, on indexed and unindexed columns.
    static func listQueries() -> [Query] {
        var queries: [Query] = []
        for count in [65, 100, 101, 999, 1_000, 1_001] {
            let integers: [Value] = (0..<count).map { .int(Int64($0 * 3 - 60)) }
            let doubles: [Value] = (0..<count).map { .double(Double($0) / 2 - 3) }
            let mixed: [[Value]] = [
                integers.prefix(count - 3) + [.double(2.5), .double(-0.0), .null],
                [.null] + integers.dropFirst(),
                [.double(2.5)] + integers.dropFirst(2) + [.double(9_223_372_036_854_775_808.0)],
                doubles.prefix(count / 2) + [.null] + integers.prefix(count - count / 2 - 1),
                integers.prefix(count - 2) + [.int(.max), .double(1e300)],
                [.int(.min)] + doubles.dropFirst(),
            ]
            for list in mixed {
                for column in ["i", "j", "d"] {
                    queries.append(
                        Query(table: numbers.name, filter: .isIn(.column(column), list), includeTotalCount: true))
                }
                queries.append(Query(table: numbers.name, filter: .not(.isIn(.column("i"), list))))
            }
            let strings: [Value] = (0..<count).map { .string(String($0 % 11)) }
            queries.append(Query(table: numbers.name, filter: .isIn(.column("s"), strings.dropLast() + [.null])))
            queries.append(
                Query(table: numbers.name, filter: .isIn(.column("id"), (0..<count).map { .string("n\($0 * 2)") })))
        }
        return queries
    }
}
