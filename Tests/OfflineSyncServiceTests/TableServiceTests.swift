import OfflineSync
import OfflineSyncService
import Testing

/// The server semantics of ``TableService`` (through ``InMemoryRemote``).
@Suite struct TableServiceTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    @Test func everyWriteGetsAStrictlyLaterUpdatedAtAndANewVersion() throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        var stamps: [Timestamp] = []
        var versions: Set<String> = []
        for index in 0..<200 {
            let item = try remote.service.insert(Item(id: "i\(index)", values: ["text": "x"]), into: "todo")
            stamps.append(try #require(item.updatedAt))
            versions.insert(try #require(item.version))
        }
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
        #expect(versions.count == 200)
    }

    @Test func insertWithoutIdGetsOneAndInsertOfAnExistingIdIs409WithTheServerItem() throws {
        let service = try InMemoryRemote(tables: [Self.todo]).service
        let created = try service.insert(Item(id: "", values: ["text": "a"]), into: "todo")
        #expect(created.id.count == 36)
        #expect(created.createdAt == created.updatedAt)
        #expect(created["deleted"] == false)
        let error = try #require(throws: RemoteError.self) { try service.insert(Item(id: created.id), into: "todo") }
        #expect(error.status == 409)
        #expect(error.serverItem?["text"] == "a")
    }

    @Test func aStaleIfMatchIs412WithTheServerItem() throws {
        let service = try InMemoryRemote(tables: [Self.todo]).service
        let first = try service.insert(Item(id: "a", values: ["text": "one"]), into: "todo")
        let second = try service.update(Item(id: "a", values: ["text": "two"]), in: "todo", ifMatch: first.version)
        #expect(second.createdAt == first.createdAt)
        let error = try #require(throws: RemoteError.self) {
            try service.update(Item(id: "a", values: ["text": "three"]), in: "todo", ifMatch: first.version)
        }
        #expect(error.status == 412)
        #expect(error.serverItem?.version == second.version)
        #expect(throws: RemoteError.self) { try service.delete(id: "a", from: "todo", ifMatch: first.version) }
    }

    @Test func deletesAreSoftAndHiddenUnlessAsked() throws {
        let service = try InMemoryRemote(tables: [Self.todo]).service
        try service.insert(Item(id: "a", values: ["text": "one"]), into: "todo")
        let deleted = try service.delete(id: "a", from: "todo", ifMatch: nil)
        #expect(deleted.isDeleted)
        #expect(try service.lookup(id: "a", in: "todo") == nil)
        #expect(try service.readPage(Query(table: "todo"), includeDeleted: false).items.isEmpty)
        #expect(try service.readPage(Query(table: "todo"), includeDeleted: true).items.map(\.id) == ["a"])
        let again = try #require(throws: RemoteError.self) { try service.delete(id: "a", from: "todo", ifMatch: nil) }
        #expect(again.status == 404)
    }

    @Test func readsAreCappedAtThePageSize() throws {
        let service = try InMemoryRemote(tables: [Self.todo], options: TableService.Options(maximumPageSize: 7)).service
        for index in 0..<20 { try service.insert(Item(id: "i\(index)"), into: "todo") }
        #expect(try service.readPage(Query(table: "todo", top: 100), includeDeleted: false).items.count == 7)
        #expect(try service.readPage(Query(table: "todo", top: 3), includeDeleted: false).items.count == 3)
    }

    @Test func unknownColumnsAre400UnlessTheSchemaWidens() throws {
        let strict = try InMemoryRemote(tables: [Self.todo]).service
        let error = try #require(throws: RemoteError.self) {
            try strict.insert(Item(id: "a", values: ["rank": 3]), into: "todo")
        }
        #expect(error.status == 400)
        let dynamic = try InMemoryRemote(tables: [Self.todo], options: TableService.Options(widensSchema: true)).service
        let stored = try dynamic.insert(Item(id: "a", values: ["rank": 3]), into: "todo")
        #expect(stored["rank"] == 3)
        #expect(try dynamic.store.schema.table(named: "todo")?.column(named: "rank")?.type == .integer)
    }

    @Test func aDynamicSchemaCreatesTablesUpToItsLimitAndThenAnswers400() throws {
        let options = TableService.Options(widensSchema: true, maximumTableCount: 3)
        let service = try InMemoryRemote(tables: [Self.todo], options: options).service
        _ = try service.insert(Item(id: "a", values: ["x": 1]), into: "second", creatingTable: true)
        _ = try service.insert(Item(id: "a", values: ["x": 1]), into: "third", creatingTable: true)
        let error = try #require(throws: RemoteError.self) {
            try service.insert(Item(id: "a", values: ["x": 1]), into: "fourth", creatingTable: true)
        }
        #expect(error.status == 400)
        #expect(error.message.contains("'fourth' was not created"), "\(error.message)")
        #expect(error.message.contains("3 tables"), "\(error.message)")
        #expect(try service.store.schema.table(named: "fourth") == nil)
        // The tables there are still written and widened.
        let widened = try service.insert(Item(id: "b", values: ["x": 2, "y": "new"]), into: "third", creatingTable: true)
        #expect(widened["y"] == "new")
        _ = try service.insert(Item(id: "b", values: ["text": "still"]), into: "todo")
    }

    @Test func injectedFaultsFailTheMatchingCallsOnly() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        remote.inject(RemoteFault(.unauthorized, times: 2) { $0.operation == .insert })
        _ = try await remote.readPage(Query(table: "todo"), includeDeleted: false)
        for _ in 0..<2 {
            let error = await #expect(throws: RemoteError.self) { try await remote.insert(Item(id: "a"), into: "todo") }
            #expect(error?.kind == .authentication)
        }
        _ = try await remote.insert(Item(id: "a"), into: "todo")
        #expect(remote.callCount(.insert) == 3)
    }

    @Test("a fault rule's predicate may call the remote it is injected into (it ran under the remote's lock and hung)")
    func faultPredicatesMayCallTheRemote() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        remote.inject(RemoteFault(.network, times: 1) { _ in remote.callCount(.insert) >= 2 })
        _ = try await remote.insert(Item(id: "a"), into: "todo")
        await #expect(throws: RemoteError.self) { try await remote.insert(Item(id: "b"), into: "todo") }
        _ = try await remote.insert(Item(id: "c"), into: "todo")
        #expect(remote.callCount(.insert) == 3)
        #expect(try remote.service.lookup(id: "b", in: "todo") == nil, "the failed call never reached the server")
    }

    @Test func aFaultAfterApplyingLosesOnlyTheAnswer() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        remote.inject(RemoteFault(.timeout, afterApplying: true))
        await #expect(throws: RemoteError.self) { try await remote.insert(Item(id: "a"), into: "todo") }
        #expect(try remote.service.lookup(id: "a", in: "todo") != nil)
    }

    @Test func servingAStoreDeclaresThePullIndexOnItsSyncedTablesAndKeepsTheirRows() throws {
        let store = InMemoryStore()
        let indexed = TableSchema(
            "indexed", columns: [Column("text", .string)], indexes: [TableIndex("byStamp", on: ["updatedAt", "id"])])
        let local = TableSchema("local", columns: [Column("text", .string)], synced: false)
        try store.open(schema: StoreSchema([Self.todo, indexed, local]))
        try store.upsert([Item(id: "a", values: ["text": "kept"])], into: "todo")
        let service = try TableService(store: store)
        let schema = try store.schema
        #expect(schema.table(named: "todo")?.indexes == [TableService.pullIndex])
        #expect(
            schema.table(named: "indexed")?.indexes.map(\.name) == ["byStamp"],
            "an index on (updatedAt, id) already serves")
        #expect(schema.table(named: "local")?.indexes.isEmpty == true, "tables that are not synced are left alone")
        #expect(try service.lookup(id: "a", in: "todo")?["text"] == "kept")
    }
}
