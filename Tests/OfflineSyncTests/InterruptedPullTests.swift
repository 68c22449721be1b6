import OfflineSync
import OfflineSyncService
import OfflineSyncConformance
import Testing

/// A store that fails in the middle of a pull loses nothing, and the next pull completes it.
@Suite struct InterruptedPullTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    static func seed(_ remote: InMemoryRemote, count: Int, prefix: String, at stamp: Timestamp) throws {
        let items = (0..<count).map { index in
            Item(
                id: "\(prefix)\(1000 + index)",
                values: [
                    "text": .string("\(index)"), "updatedAt": .date(stamp),
                    "createdAt": .date(stamp), "version": "v", "deleted": false,
                ])
        }
        try remote.service.store.upsert(items, into: "todo")
    }

    @Test func failureOnTheNthPageWriteKeepsCommittedPagesAndRepullsTheRest() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        try Self.seed(remote, count: 230, prefix: "a", at: Timestamp(year: 2024, month: 1, day: 1)!)
        try Self.seed(remote, count: 70, prefix: "b", at: Timestamp(year: 2024, month: 2, day: 1)!)
        let store = ThrowingStore(wrapping: InMemoryStore())
        let context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        let table = try context.table("todo")

        store.failWrite(3)
        await #expect(throws: OfflineSyncError.self) { try await table.pull(queryId: "all") }
        #expect(try store.count("todo") == 100)
        #expect(
            try table.deltaToken(queryId: "all")
                == DeltaToken(updatedAt: Timestamp(year: 2024, month: 1, day: 1)!, itemId: "a1099"))

        let retry = try await table.pull(queryId: "all")
        #expect(retry.received == 200)
        #expect(try store.count("todo") == 300)
        #expect(try table.deltaToken(queryId: "all")?.itemId == "b1069")
    }
}
