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
}
