import Testing

@testable import OfflineSync

@Suite struct InMemoryStoreTests {
    let schema = StoreSchema([TableSchema("t", columns: [Column("n", .integer)], synced: false)])

    @Test func precomposedAndDecomposedIdsAreDifferentRows() throws {
        let store = InMemoryStore()
        try store.open(schema: schema)
        try store.upsert(
            [Item(id: "caf\u{E9}", values: ["n": 1]), Item(id: "cafe\u{301}", values: ["n": 2])], into: "t")
        #expect(try store.count("t") == 2)
        #expect(try store.lookup(table: "t", id: "cafe\u{301}")?["n"] == .int(2))
        try store.delete(ids: ["caf\u{E9}"], from: "t")
        #expect(try store.lookup(table: "t", id: "cafe\u{301}")?["n"] == .int(2))
    }

    @Test func aThrowingTransactionRestoresReplacedAndDeletedRows() throws {
        let store = InMemoryStore()
        try store.open(schema: schema)
        try store.upsert([Item(id: "a", values: ["n": 1]), Item(id: "b", values: ["n": 2])], into: "t")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                try transaction.upsert([Item(id: "a", values: ["n": 10]), Item(id: "c")], into: "t", origin: .local)
                try transaction.delete(ids: ["b"], from: "t")
                throw Abort()
            }
        }
        #expect(
            try store.read(Query(table: "t")).items == [
                Item(id: "a", values: ["n": 1]), Item(id: "b", values: ["n": 2]),
            ])
    }

    /// A table with indexes on `n`, on `s` and on `(b, n)`, and the same rows in a store with
    /// no index: every query must answer alike, before and after writes and rollbacks.
    /// An index that names `id` last (the pull's `updatedAt, id`) serves pages in its order and
    /// stops at the page's end: the answers are those of an unindexed store.
    @Test func anIndexEndingInIdAnswersPagesInItsOrder() throws {
        let columns = [Column("n", .integer)]
        let indexed = InMemoryStore()
        try indexed.open(
            schema: StoreSchema([
                TableSchema("t", columns: columns, indexes: [TableIndex("byNId", on: ["n", "id"])], synced: false)
            ]))
        let plain = InMemoryStore()
        try plain.open(schema: StoreSchema([TableSchema("t", columns: columns, synced: false)]))
        let rows = (0..<200).map { number -> Item in
            var item = Item(id: "r\(number)")
            if number % 7 != 0 { item["n"] = .int(Int64(number % 5)) }
            return item
        }
        for store in [indexed, plain] { try store.upsert(rows, into: "t") }
        let filters: [FilterExpression?] = [
            nil, .comparison(.column("n"), .ge, .literal(2)), .comparison(.column("n"), .eq, .literal(3)),
            .and(
                .comparison(.column("n"), .ge, .literal(1)),
                .or(.comparison(.column("n"), .gt, .literal(1)), .comparison(.column("id"), .gt, .literal("r50")))),
        ]
        let orderings: [[SortKey]] = [
            [SortKey("n"), SortKey("id")], [SortKey("n")], [SortKey("n"), SortKey("id", descending: true)],
        ]
        for filter in filters {
            for orderBy in orderings {
                for (skip, top) in [(0, 10), (5, 7), (0, 0), (3, 0), (190, 20), (0, 500)] {
                    let query = Query(table: "t", filter: filter, orderBy: orderBy, skip: skip, top: top)
                    #expect(try indexed.read(query) == plain.read(query), "\(query)")
                    var selecting = query
                    selecting.selection = [skip % 2 == 0 ? "n" : "id"]
                    #expect(try indexed.read(selecting) == plain.read(selecting), "\(selecting)")
                }
            }
        }
    }

    /// Only range comparisons of the indexed column with literals of its kind spare the walk the
    /// filter: anything else on the way (another column, `ne`, a null or `startswith`) keeps it.
    @Test func onlyRangeBoundsOnTheIndexedColumnSpareTheFilter() throws {
        let table = TableSchema(
            "t", columns: [Column("n", .integer), Column("s", .string)],
            indexes: [TableIndex("byN", on: ["n"]), TableIndex("byS", on: ["s"])], synced: false)
        func covers(_ filter: FilterExpression?, top: Int? = 10) throws -> Bool {
            let scan = try #require(
                InMemoryIndexScan(Query(table: "t", filter: filter, orderBy: [SortKey("n")], top: top), schema: table))
            return scan.coversFilter
        }
        let atLeastOne = FilterExpression.comparison(.column("n"), .ge, .literal(1))
        #expect(try covers(atLeastOne))
        #expect(try covers(.and(atLeastOne, .comparison(.literal(.double(7.5)), .gt, .column("n")))))
        #expect(try covers(nil))
        #expect(try !covers(.and(atLeastOne, .comparison(.column("n"), .ne, .literal(3)))))
        #expect(try !covers(.and(atLeastOne, .comparison(.column("s"), .eq, .literal("a")))))
        #expect(try !covers(.and(atLeastOne, .comparison(.column("n"), .lt, .literal(.null)))))
        #expect(try !covers(.and(atLeastOne, .comparison(.column("n"), .lt, .literal("9")))))
        #expect(try !covers(.function(.startsWith, [.column("s"), .literal("a")])))
        #expect(try !covers(.comparison(.column("n"), .eq, .literal(2))))
    }

    @Test func indexedQueriesAgreeWithAnUnindexedStoreThroughWritesAndRollbacks() throws {
        let columns = [Column("n", .integer), Column("s", .string), Column("b", .bool)]
        let indexed = InMemoryStore()
        try indexed.open(
            schema: StoreSchema([
                TableSchema(
                    "t", columns: columns,
                    indexes: [
                        TableIndex("byN", on: ["n"]), TableIndex("byS", on: ["s"]), TableIndex("byBN", on: ["b", "n"]),
                    ],
                    synced: false)
            ]))
        let plain = InMemoryStore()
        try plain.open(schema: StoreSchema([TableSchema("t", columns: columns, synced: false)]))
        var random = SystemRandomNumberGenerator()
        func row(_ id: Int) -> Item {
            var item = Item(id: "r\(id)")
            if Int.random(in: 0..<6, using: &random) > 0 { item["n"] = .int(Int64.random(in: -5...5, using: &random)) }
            if Int.random(in: 0..<6, using: &random) > 0 {
                item["s"] = .string(
                    ["", "a", "ab", "abc", "b", "B", "\u{0}", "a\u{0}b"].randomElement(using: &random)!)
            }
            if Int.random(in: 0..<6, using: &random) > 0 { item["b"] = .bool(Bool.random(using: &random)) }
            return item
        }
        let filters: [FilterExpression?] = [
            nil, .comparison(.column("n"), .eq, .literal(2)), .comparison(.column("n"), .ge, .literal(.double(-1.5))),
            .and(.comparison(.column("n"), .gt, .literal(-3)), .comparison(.column("n"), .le, .literal(4))),
            .comparison(.literal(0), .lt, .column("n")), .isIn(.column("n"), [3, .null, 1, 3]),
            .comparison(.column("n"), .eq, .literal(.null)), .function(.startsWith, [.column("s"), .literal("a")]),
            .and(
                .function(.startsWith, [.column("s"), .literal("a")]), .comparison(.column("s"), .lt, .literal("abc"))),
            .comparison(.column("s"), .eq, .literal("b")),
            .and(.column("b"), .comparison(.column("n"), .lt, .literal(2))),
            .comparison(.column("b"), .eq, .literal(true)),
            // Bounds on `n` with a conjunct they do not evaluate: the rows walked are checked again.
            .and(.comparison(.column("n"), .ge, .literal(1)), .comparison(.column("n"), .ne, .literal(3))),
            .and(.comparison(.column("n"), .ge, .literal(0)), .comparison(.column("s"), .lt, .literal("b"))),
            .comparison(.column("n"), .gt, .literal(.null)),
            // Bounds alone (`n` between a double and an integer): no row is checked again.
            .and(.comparison(.column("n"), .lt, .literal(.double(2.5))), .comparison(.literal(-2), .le, .column("n"))),
        ]
        let orderings: [[SortKey]] = [
            [], [SortKey("n")], [SortKey("n", descending: true)], [SortKey("s"), SortKey("id")],
            [SortKey("b"), SortKey("n")], [SortKey("id", descending: true)],
        ]
        func compareAll(_ label: String) throws {
            for filter in filters {
                for orderBy in orderings {
                    for (skip, top, count) in [(0, nil, true), (0, 3, false), (2, 4, false), (1, 0, true)]
                        as [(Int, Int?, Bool)]
                    {
                        let query = Query(
                            table: "t", filter: filter, orderBy: orderBy, skip: skip, top: top, includeTotalCount: count
                        )
                        #expect(try indexed.read(query) == plain.read(query), "\(label): \(query)")
                    }
                }
            }
        }
        let first = (0..<300).map(row)
        for store in [indexed, plain] { try store.upsert(first, into: "t") }
        try compareAll("after a bulk load")
        for round in 0..<40 {
            let changed = (0..<3).map { _ in row(Int.random(in: 0..<320, using: &random)) }
            let deleted = (0..<2).map { _ in "r\(Int.random(in: 0..<320, using: &random))" }
            let rollsBack = round % 4 == 3
            struct Abort: Error {}
            for store in [indexed, plain] {
                do {
                    try store.write { transaction in
                        try transaction.upsert(changed, into: "t", origin: .local)
                        try transaction.delete(ids: deleted, from: "t")
                        // A read inside brings the indexes up to date mid-transaction.
                        _ = try transaction.read(Query(table: "t", filter: .comparison(.column("n"), .eq, .literal(1))))
                        if rollsBack { throw Abort() }
                    }
                } catch is Abort {}
            }
        }
        try compareAll("after single-row writes and rollbacks")
        let bulk = (0..<200).map { row($0 * 2) }
        for store in [indexed, plain] { try store.upsert(bulk, into: "t") }
        try compareAll("after a bulk update")
        // Many new rows at once: merged in when they sort among the entries, appended when they
        // all sort after every entry of an index (here of every index).
        let inserted = (0..<40).map { row(1_000 + $0) }
        for store in [indexed, plain] { try store.upsert(inserted, into: "t") }
        try compareAll("after a bulk insert")
        let later = (0..<50).map { number -> Item in
            var item = Item(id: "z\(1_000 + number)")
            item["n"] = .int(Int64(100 + number))
            item["s"] = .string("zz\(1_000 + number)")
            item["b"] = .bool(true)
            return item
        }
        for store in [indexed, plain] { try store.upsert(later, into: "t") }
        try compareAll("after rows sorting last")
    }
}
