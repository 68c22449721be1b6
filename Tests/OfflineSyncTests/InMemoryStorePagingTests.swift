import OfflineSync
import Testing

@Suite("InMemoryStore pages ordered by one column exactly as the reference evaluator")
struct InMemoryStorePagingTests {
    static let table = TableSchema(
        "paged", columns: [Column("score", .integer), Column("label", .string)], synced: false)

    /// 3,000 rows with repeated scores, missing scores (nulls) and ids whose byte order differs
    /// from their insertion order.
    static let rows: [Item] = (0..<3_000).map { index in
        var values: [String: Value] = ["label": .string("row \(index % 7)")]
        if index % 11 != 0 { values["score"] = .int(Int64((index * 7_919) % 250) - 100) }
        return Item(id: "id-\((index * 104_729) % 3_000)", values: values)
    }

    static func filledStore() throws -> InMemoryStore {
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([table]))
        try store.upsert(rows, into: table.name)
        return store
    }

    static func expected(_ query: Query) throws -> [Item] {
        try QueryEvaluator(query: query, schema: table).run(over: rows).items
    }

    static let queries: [Query] = [
        Query(table: "paged", orderBy: [SortKey("score")], top: 50),
        Query(table: "paged", orderBy: [SortKey("score"), SortKey("id")], skip: 120, top: 70),
        Query(
            table: "paged", filter: .comparison(.column("score"), .ge, .literal(.int(17))), orderBy: [SortKey("score")],
            top: 40),
        Query(
            table: "paged",
            filter: .and(
                .comparison(.column("label"), .eq, .literal(.string("row 3"))),
                .comparison(.column("score"), .gt, .literal(.int(-5)))),
            orderBy: [SortKey("score"), SortKey("id")], skip: 3, top: 25),
        Query(
            table: "paged", filter: .comparison(.column("id"), .gt, .literal(.string("id-1500"))),
            orderBy: [SortKey("id")], top: 60),
        Query(
            table: "paged", filter: .comparison(.column("score"), .gt, .literal(.int(1_000))),
            orderBy: [SortKey("score")], top: 10),
        Query(table: "paged", orderBy: [SortKey("label")], top: 30, selection: ["label"]),
    ]

    @Test("ordered pages equal the evaluator's pages", arguments: queries)
    func orderedPagesMatchEvaluator(query: Query) throws {
        let store = try Self.filledStore()
        #expect(try store.read(query).items == Self.expected(query))
    }

    @Test("a page read after a write sees the write")
    func pageAfterWriteSeesWrite() throws {
        let store = try Self.filledStore()
        let query = Query(
            table: "paged", filter: .comparison(.column("score"), .ge, .literal(.int(-5_000))),
            orderBy: [SortKey("score")], top: 5)
        _ = try store.read(query)
        let lowest = Item(id: "new", values: ["score": .int(-1_000), "label": "x"])
        try store.upsert([lowest], into: "paged")
        #expect(try store.read(query).items.first == lowest)
        try store.delete(ids: ["new"], from: "paged")
        #expect(try store.read(query).items.contains { $0.id == "new" } == false)
    }

    @Test("a page read inside a rolled-back transaction leaves no trace")
    func rolledBackPageLeavesNoTrace() throws {
        let store = try Self.filledStore()
        let query = Query(
            table: "paged", filter: .comparison(.column("score"), .ge, .literal(.int(-5_000))),
            orderBy: [SortKey("score")], top: 5)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                try transaction.upsert(
                    [Item(id: "temp", values: ["score": .int(-1_000)])], into: "paged", origin: .local)
                #expect(try transaction.read(query).items.first?.id == "temp")
                throw Abort()
            }
        }
        #expect(try store.read(query).items == Self.expected(query))
    }
}
