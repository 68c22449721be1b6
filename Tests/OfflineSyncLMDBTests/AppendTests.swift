import OfflineSync
import Testing

@testable import OfflineSyncConformance
@testable import OfflineSyncLMDB

/// Puts whose key sorts after every stored key append (`MDB_APPEND`); these tests mix them with
/// ordinary puts, deletes and emptied tables in one transaction and across transactions, and
/// check against the reference store that every row is still found, in key order, by id and
/// through the index.
@Suite struct AppendTests {
    private let table = TableSchema(
        "rows", columns: [Column("rank", .integer), Column("title", .string)],
        indexes: [TableIndex("rows_rank", on: ["rank"])])

    /// One random step of a transaction; `next` is the next id above every id used so far.
    private func step(
        _ random: inout SeededRandom, next: inout Int, on stores: [any StoreTransaction]
    ) throws {
        func id(_ number: Int) -> String {
            "r" + String(repeating: "0", count: 8 - String(number).count) + String(number)
        }
        func row(_ number: Int, rank: Int) -> Item {
            Item(id: id(number), values: ["rank": .int(Int64(rank)), "title": .string("t\(number)")])
        }
        switch random.next() % 10 {
        case 0...3:
            // Ascending new ids, ranks ascending too: every put can append, in the table and the index.
            let count = Int(random.next() % 40) + 1
            let rows = (0..<count).map { row(next + $0, rank: next + $0) }
            next += count
            var answers: [[String]] = []
            for store in stores { answers.append(try store.insertNew(rows, into: "rows", origin: .local)) }
            #expect(answers.allSatisfy { $0 == answers[0] })
        case 4, 5:
            // Ids anywhere up to the highest so far, some present: ordinary puts between appends.
            let rows = (0..<Int(random.next() % 20 + 1)).map { _ in
                row(Int(random.next() % UInt64(max(next, 1) + 5)), rank: Int(random.next() % 1_000))
            }
            var answers: [[String]] = []
            for store in stores { answers.append(try store.insertNew(rows, into: "rows", origin: .local)) }
            #expect(answers.allSatisfy { $0 == answers[0] })
        case 6:
            let rows = (0..<Int(random.next() % 20 + 1)).map { _ in
                row(Int(random.next() % UInt64(max(next, 1) + 5)), rank: next + Int(random.next() % 3))
            }
            for store in stores { try store.upsert(rows, into: "rows", origin: .local) }
        case 7, 8:
            // Deletes, the highest ids included: the bound stays an upper bound.
            var ids = (0..<Int(random.next() % 15 + 1)).map { _ in id(Int(random.next() % UInt64(max(next, 1)))) }
            ids.append(id(next - 1))
            for store in stores { try store.delete(ids: ids, from: "rows") }
        default:
            if random.next() % 4 == 0 {
                var counts: [Int] = []
                for store in stores { counts.append(try store.delete(matching: Query(table: "rows"))) }
                #expect(counts.allSatisfy { $0 == counts[0] })
            } else {
                for store in stores { try store.upsert([row(next, rank: -1)], into: "rows", origin: .local) }
                next += 1
            }
        }
    }

    private func compare(_ store: LMDBStore, _ reference: InMemoryStore, label: String) throws {
        for query in [
            Query(table: "rows", orderBy: [SortKey("id")], includeTotalCount: true),
            Query(table: "rows", orderBy: [SortKey("rank"), SortKey("id")]),
            Query(table: "rows", filter: .comparison(.column("rank"), .ge, .literal(.int(500)))),
        ] {
            #expect(try store.read(query) == reference.read(query), "\(label): \(query)")
        }
        // Found by id one at a time too: a row appended out of order is walked over but not found.
        for item in try reference.read(Query(table: "rows")).items {
            #expect(try store.lookup(table: "rows", id: item.id) == item, "\(label): lookup \(item.id)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func appendsMixedWithOtherWritesKeepEveryRowFindable(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var store = try openStore(StoreSchema([table]), in: directory)
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([table]))
        var random = SeededRandom(seed: seed)
        var next = 0
        for transaction in 0..<60 {
            try store.write { lmdb in
                try reference.write { memory in
                    for _ in 0..<Int(random.next() % 12 + 1) {
                        try step(&random, next: &next, on: [lmdb, memory])
                    }
                }
            }
            if transaction % 20 == 19 {
                try compare(store, reference, label: "seed \(seed), transaction \(transaction)")
            }
        }
        try store.close()
        store = try openStore(StoreSchema([table]), in: directory)
        defer { try? store.close() }
        try compare(store, reference, label: "seed \(seed), reopened")
    }

    @Test func aRolledBackAppendLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([table]), in: directory)
        defer { try? store.close() }
        let rows = (0..<50).map { Item(id: "a\(1_000 + $0)", values: ["rank": .int(Int64($0))]) }
        try store.upsert(Array(rows[..<10]), into: "rows")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                _ = try transaction.insertNew(Array(rows[10...]), into: "rows", origin: .local)
                throw Abort()
            }
        }
        #expect(try store.read(Query(table: "rows", includeTotalCount: true)).totalCount == 10)
        // The next transaction appends after the committed rows, not after the rolled-back ones.
        #expect(try store.write { try $0.insertNew(Array(rows[10...]), into: "rows", origin: .local) } == [])
        #expect(try store.read(Query(table: "rows", orderBy: [SortKey("rank")])).items == rows)
    }
}
