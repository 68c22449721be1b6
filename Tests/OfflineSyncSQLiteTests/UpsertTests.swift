import Dispatch
import OfflineSync
import Testing

/// Upsert semantics of the shared engine (insert, or update every column of an existing id).
@Suite struct UpsertTests {
    private func withStore(
        _ backend: SQLBackend, schema: StoreSchema = Corpus.schema,
        _ body: (any LocalStore) throws -> Void
    ) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        try store.open(schema: schema)
        defer { try? store.close() }
        try body(store)
    }

    @Test(arguments: SQLBackend.all)
    func anUpsertReplacesTheWholeRow(backend: SQLBackend) throws {
        try withStore(backend) { store in
            try store.upsert([Item(id: "x", values: ["s": "first", "i": 1, "d": 2.5])], into: "t")
            try store.upsert([Item(id: "x", values: ["i": 2])], into: "t")
            #expect(try store.lookup(table: "t", id: "x") == Item(id: "x", values: ["i": 2]))
            #expect(try store.count("t") == 1)
        }
    }

    @Test(arguments: SQLBackend.all)
    func theLastCopyOfAnIdInOneBatchWins(backend: SQLBackend) throws {
        try withStore(backend) { store in
            try store.upsert(
                [Item(id: "x", values: ["s": "a"]), Item(id: "y", values: [:]), Item(id: "x", values: ["s": "b"])],
                into: "t")
            #expect(try store.lookup(table: "t", id: "x")?["s"] == "b")
            #expect(try store.count("t") == 2)
        }
    }

    @Test(arguments: SQLBackend.all)
    func aTableWithoutColumnsAcceptsTheSameIdTwice(backend: SQLBackend) throws {
        let schema = StoreSchema([TableSchema("ids", columns: [], synced: false)])
        try withStore(backend, schema: schema) { store in
            try store.upsert([Item(id: "x"), Item(id: "x")], into: "ids")
            #expect(try store.lookup(table: "ids", id: "x") == Item(id: "x"))
        }
    }

    @Test(arguments: SQLBackend.all)
    func idsDifferingOnlyInCaseOrNormalisationAreDifferentRows(backend: SQLBackend) throws {
        try withStore(backend) { store in
            let ids = ["a", "A", "\u{e9}", "e\u{301}"]
            try store.upsert(ids.map { Item(id: $0) }, into: "t")
            #expect(try store.count("t") == 4)
            #expect(try store.lookup(table: "t", id: "e\u{301}")?.id.unicodeScalars.count == 2)
        }
    }

    @Test(arguments: SQLBackend.all)
    func concurrentReadModifyWriteTransactionsAreSerialised(backend: SQLBackend) throws {
        try withStore(backend) { store in
            try store.upsert([Item(id: "counter", values: ["i": 0])], into: "t")
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for step in 0..<50 {
                    do {
                        try store.write { transaction in
                            let current = try transaction.lookup(table: "t", id: "counter")?["i"].intValue ?? 0
                            try transaction.upsert(
                                [Item(id: "counter", values: ["i": .int(current + 1)])], into: "t", origin: .local)
                        }
                        _ = try store.read(
                            Query(
                                table: "t", filter: .comparison(.column("i"), .ge, .literal(.int(Int64(step)))),
                                includeTotalCount: true))
                    } catch {
                        Issue.record("worker \(worker) step \(step): \(error)")
                    }
                }
            }
            #expect(try store.lookup(table: "t", id: "counter")?["i"] == 200)
        }
    }
}
