import OfflineSync
import OfflineSyncService
import Testing

/// Items kept inside the system tables (deleted items, error copies) come back with their types.
@Suite struct QueuedItemTests {
    static let events = TableSchema(
        "event",
        columns: [
            Column("title", .string), Column("due", .date), Column("weight", .double), Column("count", .integer),
            Column("tags", .json), Column("done", .bool),
        ])

    @Test func aDeletedItemKeepsEveryValueExactly() async throws {
        let remote = try InMemoryRemote(tables: [Self.events])
        let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Self.events])
        let table = try context.table("event")
        try table.insert(
            Item(
                id: "e1",
                values: [
                    "title": "2026-01-02T03:04:05.678Z", "due": .date(Timestamp(millisecondsSince1970: -1)),
                    "weight": .double(3), "count": .int(Int64.min), "tags": .json("[\"a\",{\"b\":null}]"), "done": true,
                ]))
        try await context.push()
        let stored = try #require(try table.lookup(id: "e1"))
        try table.delete(id: "e1")
        let queued = try #require(try context.pendingOperations().first?.item)
        #expect(queued == stored)
        #expect(queued["weight"] == .double(3))
        #expect(queued["title"] == .string("2026-01-02T03:04:05.678Z"))
        #expect(queued["due"] == .date(Timestamp(millisecondsSince1970: -1)))
    }
}
