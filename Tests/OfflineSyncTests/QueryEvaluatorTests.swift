import Testing

@testable import OfflineSync

@Suite struct QueryEvaluatorTests {
    let table = TableSchema(
        "t",
        columns: [
            Column("s", .string), Column("n", .integer), Column("d", .double),
            Column("b", .bool), Column("at", .date),
        ])
    let rows = [
        Item(id: "1", values: ["s": "apple", "n": 3, "d": -0.0, "b": true]),
        Item(id: "2", values: ["s": "Banana", "n": 1]),
        Item(id: "3", values: ["n": 2, "at": .date(Timestamp(millisecondsSince1970: -1))]),
        Item(id: "4", values: ["s": "banana", "d": 2.5, "b": false]),
    ]

    func ids(_ query: Query) throws -> [String] {
        try QueryEvaluator(query: query, schema: table).run(over: rows).items.map(\.id)
    }

    @Test("a NaN or infinite literal is refused, typed or parsed, instead of matching every row or none")
    func nonFiniteLiteralsAreRefused() throws {
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([table]))
        try store.upsert(rows, into: "t")
        for number in [Double.nan, .infinity, -.infinity] {
            let query = Query(table: "t", filter: .comparison(.column("d"), .eq, .literal(.double(number))))
            let error = try #require(throws: OfflineSyncError.self) { try store.read(query) }
            #expect(error.code == .invalidQuery && error.message.contains("finite"), "\(error)")
        }
        let parsed = Query(table: "t", filter: try ODataParser.filter("d ne NaN"))
        #expect(throws: OfflineSyncError.self) { try store.read(parsed) }
    }

    @Test func nullsSortFirstAscendingAndLastDescending() throws {
        #expect(try ids(Query(table: "t", orderBy: [SortKey("s")])) == ["3", "2", "1", "4"])
        #expect(try ids(Query(table: "t", orderBy: [SortKey("s", descending: true)])) == ["4", "1", "2", "3"])
    }

    @Test func equalityIsNullSafe() throws {
        #expect(try ids(Query(table: "t", filter: .comparison(.column("s"), .eq, .literal(.null)))) == ["3"])
        #expect(
            try ids(Query(table: "t", filter: .comparison(.column("s"), .ne, .literal("apple")))) == ["2", "3", "4"])
    }

    @Test func orderingComparisonsWithNullAreFalse() throws {
        #expect(try ids(Query(table: "t", filter: .comparison(.column("n"), .gt, .literal(0)))) == ["1", "2", "3"])
        #expect(try ids(Query(table: "t", filter: .not(.comparison(.column("n"), .gt, .literal(1))))) == ["2", "4"])
    }

    @Test func negativeZeroEqualsZero() throws {
        #expect(try ids(Query(table: "t", filter: .comparison(.column("d"), .eq, .literal(0)))) == ["1"])
    }

    @Test func stringsCompareByBytes() throws {
        #expect(try ids(Query(table: "t", filter: .comparison(.column("s"), .lt, .literal("a")))) == ["2"])
        #expect(
            try ids(
                Query(table: "t", filter: .comparison(.function(.toLower, [.column("s")]), .eq, .literal("banana"))))
                == ["2", "4"])
    }

    @Test func datePartsUseUTCBefore1970() throws {
        #expect(
            try ids(Query(table: "t", filter: .comparison(.function(.year, [.column("at")]), .eq, .literal(1969)))) == [
                "3"
            ])
    }

    @Test func pagingAppliesAfterOrderingAndCountIgnoresIt() throws {
        let result = try QueryEvaluator(
            query: Query(table: "t", orderBy: [SortKey("n")], skip: 1, top: 2, includeTotalCount: true),
            schema: table
        ).run(over: rows)
        #expect(result.items.map(\.id) == ["2", "3"])
        #expect(result.totalCount == 4)
    }

    @Test func theLargestTopAndSkipDoNotOverflow() throws {
        #expect(try ids(Query(table: "t", skip: 1, top: Int.max)) == ["2", "3", "4"])
        #expect(try ids(Query(table: "t", skip: Int.max, top: Int.max)) == [])
    }

    @Test func illTypedFiltersAreRejected() {
        #expect(throws: OfflineSyncError.self) {
            try QueryEvaluator(
                query: Query(table: "t", filter: .comparison(.column("s"), .eq, .literal(1))), schema: table)
        }
        #expect(throws: OfflineSyncError.self) {
            try QueryEvaluator(query: Query(table: "t", filter: .column("n")), schema: table)
        }
        #expect(throws: OfflineSyncError.self) {
            try QueryEvaluator(query: Query(table: "t", orderBy: [SortKey("missing")]), schema: table)
        }
    }
}
