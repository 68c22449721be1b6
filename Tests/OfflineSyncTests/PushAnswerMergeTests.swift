import OfflineSync
import OfflineSyncService
import Testing

/// A server whose answers to pushed writes leave a column out (it stores fewer columns than the
/// app, or answers with some of them): the local row keeps that column's value, as the Azure
/// SDKs' stores merge such answers, instead of losing it once the push succeeds.
@Suite struct PushAnswerMergeTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string), Column("note", .string)])

    /// An in-memory remote that drops `note` from its answers to inserts and updates.
    struct ForgetfulRemote: ForwardingRemote {
        let memory: InMemoryRemote
        var base: any RemoteService { memory }

        static func forgetting(_ item: Item) -> Item {
            var answer = Item(id: item.id)
            item.forEachValue { column, value in
                if column != "note" { answer[column] = value }
            }
            return answer
        }

        func insert(_ item: Item, into table: String) async throws -> Item {
            Self.forgetting(try await base.insert(item, into: table))
        }
        func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
            Self.forgetting(try await base.update(item, in: table, ifMatch: version))
        }
        /// One write at a time, so that each answer passes through `insert` and `update` above.
        func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
            await sendOneAfterAnother(writes)
        }
    }

    @Test func aColumnTheAnswerLeavesOutKeepsItsLocalValue() async throws {
        let remote = ForgetfulRemote(memory: try InMemoryRemote(tables: [Self.todo]))
        let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Self.todo])
        let table = try context.table("todo")
        try table.insert(Item(id: "a", values: ["text": "first", "note": "keep me"]))
        #expect(try await context.push().errors.isEmpty)
        var local = try #require(try table.lookup(id: "a"))
        #expect(local["note"].stringValue == "keep me", "the insert's answer erased it")
        #expect(local.version != nil, "the server's version is taken")

        local["text"] = "second"
        try table.update(local)
        #expect(try await context.push().errors.isEmpty)
        let updated = try #require(try table.lookup(id: "a"))
        #expect(updated["note"].stringValue == "keep me", "the update's answer erased it")
        #expect(updated["text"].stringValue == "second")
        #expect(updated.version != local.version)
        #expect(try context.pendingOperationCount() == 0)
    }
}
