import OfflineSync
import OfflineSyncService
import Testing

/// Per-user data in ``TableService``: every call with a ``RowOwner`` sees and changes only that
/// user's rows.
@Suite struct TableServiceOwnerTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string), Column("userId", .string)])
    static let alice = RowOwner(userId: "alice")
    static let bob = RowOwner(userId: "bob")

    func service() throws -> TableService {
        let service = try InMemoryRemote(tables: [Self.todo]).service
        try service.insert(
            Item(id: "a1", values: ["text": "alice's", "userId": "bob"]), into: "todo", owner: Self.alice)
        try service.insert(Item(id: "b1", values: ["text": "bob's"]), into: "todo", owner: Self.bob)
        return service
    }

    @Test func insertsAreStampedWithTheOwnerWhateverTheItemSays() throws {
        let service = try service()
        #expect(try service.lookup(id: "a1", in: "todo")?["userId"] == "alice")
        #expect(try service.lookup(id: "b1", in: "todo")?["userId"] == "bob")
    }

    @Test func readsAreLimitedToTheOwnerWhateverTheFilter() throws {
        let service = try service()
        let filters: [FilterExpression?] = [
            nil, try ODataParser.filter("userId ne 'x'"), try ODataParser.filter("true or true"),
            try ODataParser.filter("userId eq 'alice' or text ne null"),
        ]
        for filter in filters {
            let page = try service.readPage(Query(table: "todo", filter: filter), includeDeleted: true, owner: Self.bob)
            #expect(page.items.map(\.id) == ["b1"], "\(String(describing: filter))")
        }
    }

    @Test func anotherUsersRowIsMissingForEveryCallNever412Or409WithIt() throws {
        let service = try service()
        let stored = try #require(try service.lookup(id: "a1", in: "todo"))
        #expect(try service.lookup(id: "a1", in: "todo", owner: Self.bob) == nil)
        #expect(try service.lookup(id: "a1", in: "todo", includeDeleted: true, owner: Self.bob) == nil)
        for version in [nil, stored.version, "stale"] {
            let update = try #require(throws: RemoteError.self) {
                try service.merge(
                    Item(id: "a1", values: ["text": "bob's now"]), in: "todo", ifMatch: version, owner: Self.bob)
            }
            #expect(update.status == 404)
            #expect(update.serverItem == nil)
            let delete = try #require(throws: RemoteError.self) {
                try service.delete(id: "a1", from: "todo", ifMatch: version, owner: Self.bob)
            }
            #expect(delete.status == 404)
            let undelete = try #require(throws: RemoteError.self) {
                try service.undelete(id: "a1", in: "todo", ifMatch: version, owner: Self.bob)
            }
            #expect(undelete.status == 404)
        }
        let duplicate = try #require(throws: RemoteError.self) {
            try service.insert(Item(id: "a1", values: ["text": "bob's"]), into: "todo", owner: Self.bob)
        }
        #expect(duplicate.status == 409)
        #expect(duplicate.serverItem == nil)
        #expect(try service.lookup(id: "a1", in: "todo") == stored)
    }

    @Test func anUpdateNeverChangesTheOwner() throws {
        let service = try service()
        let updated = try service.merge(
            Item(id: "b1", values: ["text": "moved?", "userId": "alice", "USERID": "alice"]), in: "todo", ifMatch: nil,
            owner: Self.bob)
        #expect(updated["userId"] == "bob")
        #expect(updated["text"] == "moved?")
        // A full update (not a merge) replaces the row; the owner column keeps its owner although
        // the item names another one, in another letter case, or none.
        for values: [String: Value] in [["text": "replaced"], ["text": "replaced", "USERID": "alice"]] {
            let replaced = try service.update(Item(id: "b1", values: values), in: "todo", ifMatch: nil, owner: Self.bob)
            #expect(replaced["userId"] == "bob", "\(values)")
            #expect(try service.lookup(id: "b1", in: "todo", owner: Self.bob)?["text"] == "replaced")
        }
        let own = try service.insert(Item(id: "a2", values: ["text": "x"]), into: "todo", owner: Self.alice)
        let duplicate = try #require(throws: RemoteError.self) {
            try service.insert(Item(id: "a2", values: ["text": "y"]), into: "todo", owner: Self.alice)
        }
        #expect(duplicate.serverItem == own, "the owner's own duplicate carries the row")
    }
}
