import Testing

@testable import OfflineSync
@testable import OfflineSyncConformance

/// Pages bounded on their first ordering key are answered by ``RangeScan`` over a sorted copy of
/// the table, and filters pinning the id by lookups; the rows must be exactly what
/// ``QueryEvaluator`` returns over the whole table.
@Suite struct RangeScanTests {
    static let schema = TableSchema(
        "t",
        columns: [
            Column("n", .integer), Column("x", .double), Column("s", .string), Column("d", .date), Column("b", .bool),
        ], synced: false)

    static func row(_ index: Int, _ random: inout SeededRandom) -> Item {
        var values: [String: Value] = [:]
        if random.chance(85) { values["n"] = .int(Int64(random.int(in: -20...20))) }
        if random.chance(85) { values["x"] = .double(Double(random.int(in: -40...40)) / 4) }
        if random.chance(85) { values["s"] = .string(random.pick(["", "a", "ab", "b", "é", "e\u{301}", "z"])) }
        if random.chance(85) { values["d"] = .date(Timestamp(millisecondsSince1970: Int64(random.int(in: -5...30)))) }
        if random.chance(85) { values["b"] = .bool(random.chance(50)) }
        return Item(id: "r\(random.int(in: 0...400))", values: values)
    }

    static func literal(for column: String, _ random: inout SeededRandom) -> Value {
        switch column {
        case "n":
            random.chance(30) ? .double(Double(random.int(in: -42...42)) / 2) : .int(Int64(random.int(in: -21...21)))
        case "x":
            random.chance(30) ? .int(Int64(random.int(in: -11...11))) : .double(Double(random.int(in: -42...42)) / 4)
        case "s": .string(random.pick(["", "a", "aa", "ab", "b", "é", "e", "zz"]))
        case "d": .date(Timestamp(millisecondsSince1970: Int64(random.int(in: -6...31))))
        case "b": .bool(random.chance(50))
        default: .string("r\(random.int(in: 0...400))")
        }
    }

    static func query(_ random: inout SeededRandom) -> Query {
        let column = random.pick(["id", "n", "x", "s", "d", "b"])
        let operators: [ComparisonOperator] = [.eq, .ne, .gt, .ge, .lt, .le]
        var conjuncts: [FilterExpression] = []
        for _ in 0..<random.int(in: 1...2) {
            let value = literal(for: column, &random)
            conjuncts.append(
                random.chance(25)
                    ? .comparison(.literal(value), random.pick(operators), .column(column))
                    : .comparison(.column(column), random.pick(operators), .literal(value)))
        }
        if random.chance(30) { conjuncts.append(.comparison(.column("b"), .ne, .literal(.bool(true)))) }
        if random.chance(15) {
            let ids: [Value] = (0..<random.int(in: 0...4)).map { _ in .string("r\(random.int(in: 0...60))") }
            conjuncts.append(.isIn(.column("id"), ids + (random.chance(30) ? [.null, .json("r1")] : [])))
        }
        if random.chance(15) {
            conjuncts.append(
                .or(
                    .comparison(.column("n"), .gt, .literal(.int(0))),
                    .comparison(.column("id"), .gt, .literal(.string("r2")))))
        }
        let filter = conjuncts.dropFirst().reduce(conjuncts[0]) { .and($0, $1) }
        var orderBy = column == "id" && random.chance(50) ? [] : [SortKey(column)]
        if random.chance(40) { orderBy.append(SortKey(random.pick(["n", "s", "d"]), descending: random.chance(50))) }
        return Query(
            table: "t", filter: filter, orderBy: orderBy, skip: random.chance(30) ? random.int(in: 1...5) : 0,
            top: random.int(in: 0...25), selection: random.chance(20) ? ["n"] : nil)
    }

    static func expectReference(_ store: InMemoryStore, _ query: Query) throws {
        let rows = try store.read(Query(table: "t")).items
        let expected = try QueryEvaluator(query: query, schema: schema).run(over: rows)
        #expect(try store.read(query) == expected, "\(query)")
    }

    @Test func boundedPagesMatchTheEvaluatorAcrossWritesAndRollbacks() throws {
        var random = SeededRandom(seed: 0x5eed_0008)
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([Self.schema]))
        try store.upsert((0..<300).map { Self.row($0, &random) }, into: "t")
        struct Abort: Error {}
        for round in 0..<400 {
            try Self.expectReference(store, Self.query(&random))
            switch round % 40 {
            case 10:
                try store.upsert((0..<5).map { Self.row($0, &random) }, into: "t")
            case 20:
                try store.delete(ids: (0..<5).map { _ in "r\(random.int(in: 0...400))" }, from: "t")
            case 30:
                _ = try? store.write { transaction in
                    try transaction.upsert((0..<5).map { Self.row($0, &random) }, into: "t", origin: .local)
                    throw Abort()
                }
            default:
                break
            }
        }
    }

    @Test func unboundedPagesOverAKeptOrderingMatchTheEvaluator() throws {
        var random = SeededRandom(seed: 0x5eed_0009)
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([Self.schema]))
        try store.upsert((0..<300).map { Self.row($0, &random) }, into: "t")
        for round in 0..<200 {
            let column = random.pick(["id", "n", "s", "d", "b"])
            let orderBy =
                column == "id" && random.chance(50)
                ? [] : [SortKey(column)] + (random.chance(40) ? [SortKey("x", descending: true)] : [])
            // A bounded page first, so the store keeps the table sorted in this order.
            try Self.expectReference(
                store,
                Query(
                    table: "t", filter: .comparison(.column(column), .ge, .literal(Self.literal(for: column, &random))),
                    orderBy: orderBy, top: 5))
            let filters: [FilterExpression?] = [
                nil, .comparison(.column("b"), .ne, .literal(.bool(true))),
                .comparison(.column("x"), .lt, .literal(.double(0))),
            ]
            try Self.expectReference(
                store,
                Query(
                    table: "t", filter: random.pick(filters), orderBy: orderBy,
                    skip: random.chance(30) ? random.int(in: 1...5) : 0, top: random.int(in: 0...40)))
            if round % 50 == 25 { try store.upsert((0..<5).map { Self.row($0, &random) }, into: "t") }
        }
    }

    @Test func readsInsideATransactionSeeItsOwnWrites() throws {
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([Self.schema]))
        try store.upsert((0..<10).map { Item(id: "r\($0)", values: ["n": .int(Int64($0))]) }, into: "t")
        let page = Query(
            table: "t", filter: .comparison(.column("n"), .ge, .literal(.int(5))), orderBy: [SortKey("n")], top: 3)
        #expect(try store.read(page).items.map(\.id) == ["r5", "r6", "r7"])
        let seen = try store.write { transaction in
            try transaction.upsert([Item(id: "new", values: ["n": 5])], into: "t", origin: .local)
            try transaction.delete(ids: ["r6"], from: "t")
            return try transaction.read(page).items.map(\.id)
        }
        #expect(seen == ["new", "r5", "r7"])
        #expect(try store.read(page).items.map(\.id) == ["new", "r5", "r7"])
    }
}
