import OfflineSync
import OfflineSyncService
import Testing

/// An operation whose first send the server applied but whose answer was lost is sent again by
/// the next push and meets its own copy on the server (409 for an insert, 412 for an update):
/// that counts as done. A conflict with a copy that differs stays an operation error.
@Suite struct ResentOperationTests {
    static let events = TableSchema(
        "event", columns: [Column("title", .string), Column("due", .date), Column("weight", .double)])

    static func event(_ id: String, _ title: String) -> Item {
        Item(
            id: id,
            values: [
                "title": .string(title), "due": .date(Timestamp(millisecondsSince1970: 1_700_000_000_123)),
                "weight": .double(2.5),
            ])
    }

    static func context() throws -> (SyncContext, SyncTable, InMemoryRemote) {
        let remote = try InMemoryRemote(tables: [events])
        let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [events])
        return (context, try context.table("event"), remote)
    }

    @Test("an insert applied on the server whose answer was lost is done when sent again")
    func resentInsert() async throws {
        let (context, table, remote) = try Self.context()
        try table.insert([Self.event("a", "one"), Self.event("b", "two")])
        remote.inject(RemoteFault(.network, afterApplying: true) { $0.itemId == "a" })
        await #expect(throws: PushFailure.self) { try await context.push() }
        #expect(try remote.service.lookup(id: "a", in: "event") != nil, "the server applied the insert")

        let resumed = try await context.push()
        #expect(resumed.errors.isEmpty, "\(resumed.errors)")
        #expect(try context.pendingOperationCount() == 0)
        #expect(try context.operationErrors().isEmpty)
        for id in ["a", "b"] {
            let server = try #require(try remote.service.lookup(id: id, in: "event"))
            #expect(try table.lookup(id: id)?.version == server.version, "'\(id)' at the server's version")
        }
        #expect(try remote.items(in: "event", includeDeleted: true).count == 2, "each item once on the server")
    }

    @Test("an update applied on the server whose answer was lost is done when sent again")
    func resentUpdate() async throws {
        let (context, table, remote) = try Self.context()
        try table.insert(Self.event("a", "one"))
        try await context.push()
        var item = try #require(try table.lookup(id: "a"))
        item["title"] = "two"
        try table.update(item)
        remote.inject(RemoteFault(.network, afterApplying: true))
        await #expect(throws: PushFailure.self) { try await context.push() }
        let server = try #require(try remote.service.lookup(id: "a", in: "event"))
        #expect(server["title"] == "two" && server.version != item.version, "the server applied the update")

        let resumed = try await context.push()
        #expect(resumed.errors.isEmpty && resumed.completedCount == 1, "\(resumed)")
        #expect(try context.pendingOperationCount() == 0)
        #expect(try table.lookup(id: "a")?.version == server.version)
    }

    @Test("a conflict with a server copy that differs is still an operation error")
    func differentCopyIsAConflict() async throws {
        let (context, table, remote) = try Self.context()
        try table.insert([Self.event("a", "one"), Self.event("b", "one")])
        try await context.push()
        _ = try remote.changeFromAnotherDevice(table: "event", id: "a") { $0["title"] = "theirs" }
        _ = try remote.changeFromAnotherDevice(table: "event", id: "b") { $0["weight"] = .double(3) }
        for id in ["a", "b"] {
            var item = try #require(try table.lookup(id: id))
            item["title"] = "mine"
            try table.update(item)
        }
        let result = try await context.push()
        #expect(result.errors.map(\.itemId).sorted() == ["a", "b"], "\(result.errors)")
        #expect(result.errors.allSatisfy { $0.isConflict })
        #expect(try context.pendingOperationCount() == 2)
    }

    @Test("the same edit made on two devices is no conflict")
    func sameEditOnTwoDevices() async throws {
        let (context, table, remote) = try Self.context()
        try table.insert(Self.event("a", "one"))
        try await context.push()
        _ = try remote.changeFromAnotherDevice(table: "event", id: "a") { $0["title"] = "agreed" }
        var item = try #require(try table.lookup(id: "a"))
        item["title"] = "agreed"
        try table.update(item)
        let result = try await context.push()
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(try table.lookup(id: "a")?.version == (try remote.service.lookup(id: "a", in: "event"))?.version)
    }

    @Test("a server copy that was deleted meanwhile is a conflict even with the same values")
    func softDeletedCopyIsAConflict() async throws {
        let (context, table, remote) = try Self.context()
        try table.insert(Self.event("a", "one"))
        try await context.push()
        var item = try #require(try table.lookup(id: "a"))
        _ = try remote.service.delete(id: "a", from: "event", ifMatch: nil)
        item["weight"] = .double(2.5)
        try table.update(item)
        let result = try await context.push()
        #expect(result.errors.count == 1, "\(result.errors)")
        #expect(try context.pendingOperationCount() == 1)
    }
}
