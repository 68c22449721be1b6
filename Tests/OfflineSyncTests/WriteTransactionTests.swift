import OfflineSync
import OfflineSyncService
import Testing

/// App transactions across tables (``SyncContext/write(_:)``) and upserts, on ``InMemoryStore``.
@Suite struct WriteTransactionTests {
    struct TodoList: SyncModel, Equatable {
        static let tableName = "list"
        var id: String
        var name: String
        var version: String?
    }

    struct TodoItem: SyncModel, Equatable {
        static let tableName = "todo"
        var id: String
        var listId: String
        var text: String
        var complete: Bool
    }

    /// A narrower model of the todo table (an upsert through it keeps the other columns).
    struct TodoText: SyncModel, Equatable {
        static let tableName = "todo"
        var id: String
        var text: String
    }

    static func context() throws -> (SyncContext, InMemoryRemote) {
        let schemas = [try TableSchema(TodoList.self), try TableSchema(TodoItem.self)]
        let remote = try InMemoryRemote(tables: schemas)
        return (try SyncContext(store: InMemoryStore(), remote: remote, tables: schemas), remote)
    }

    @Test func editsOfSeveralTablesCommitTogetherEachWithItsQueuedOperation() async throws {
        let (context, _) = try Self.context()
        try context.table(TodoItem.self).insert(TodoItem(id: "old", listId: "x", text: "old", complete: false))
        try await context.push()
        let list = try context.write { tx in
            let list = try tx.insert(TodoList(id: "", name: "Groceries"))
            try tx.insert(TodoItem(id: "milk", listId: list.id, text: "Buy milk", complete: false))
            try tx.upsert(TodoItem(id: "bread", listId: list.id, text: "Buy bread", complete: false))
            try tx.delete(TodoItem(id: "old", listId: "x", text: "old", complete: false))
            return list
        }
        #expect(!list.id.isEmpty, "a made-up id is returned")
        #expect(try context.table(TodoList.self).read() == [list])
        #expect(try context.table(TodoItem.self).read(.all.order(by: \.id)).map(\.id) == ["bread", "milk"])
        let queued = try context.pendingOperations()
        #expect(queued.map(\.kind) == [.insert, .insert, .insert, .delete])
        #expect(Set(queued.map(\.itemId)) == ["old", list.id, "milk", "bread"])
        #expect(Set(queued.map(\.table)) == ["list", "todo"])
    }

    @Test func aFailingEditRollsBackEveryEditOfTheTransaction() throws {
        let (context, _) = try Self.context()
        try context.table(TodoItem.self).insert(TodoItem(id: "milk", listId: "l", text: "Buy milk", complete: false))
        let before = try context.pendingOperations()
        let error = #expect(throws: OfflineSyncError.self) {
            try context.write { tx in
                try tx.insert(TodoList(id: "l", name: "Groceries"))
                try tx.update(TodoItem(id: "milk", listId: "l", text: "Buy 2 milk", complete: false))
                try tx.insert(TodoItem(id: "milk", listId: "l", text: "again", complete: false))  // exists
            }
        }
        #expect(error?.code == .conflict)
        #expect(try context.table(TodoList.self).read().isEmpty, "the list insert rolled back")
        #expect(try context.table(TodoItem.self).lookup(id: "milk")?.text == "Buy milk", "the update rolled back")
        #expect(try context.pendingOperations() == before, "the queue is unchanged")
    }

    @Test func editsOfOneItemInOneTransactionCollapseAsSeparateEditsDo() throws {
        let (context, _) = try Self.context()
        try context.write { tx in
            try tx.insert(TodoItem(id: "a", listId: "l", text: "one", complete: false))
            try tx.update(TodoItem(id: "a", listId: "l", text: "two", complete: true))
            try tx.insert(TodoItem(id: "b", listId: "l", text: "gone", complete: false))
            try tx.delete(TodoItem.self, ids: ["b"])
            #expect(try tx.lookup(TodoItem.self, id: "a")?.text == "two", "reads see the transaction's edits")
            #expect(try tx.lookup(TodoItem.self, id: "b") == nil)
        }
        let queued = try context.pendingOperations()
        #expect(queued.map(\.itemId) == ["a"], "insert + delete leaves nothing")
        #expect(queued.map(\.kind) == [.insert], "insert + update stays an insert")
    }

    @Test func observersAreWokenOnceAtCommitAndFeedsGetOneChangeSet() async throws {
        let (context, _) = try Self.context()
        let todos = try context.table(TodoItem.self)
        let lists = try context.table(TodoList.self)
        var todoResults = try todos.observe().makeAsyncIterator()
        var listResults = try lists.observe().makeAsyncIterator()
        #expect(try await todoResults.next() == [])
        #expect(try await listResults.next() == [])
        let feed = context.changes()
        let wakes = context.observerWakeCount
        try context.write { tx in
            try tx.insert(TodoList(id: "l", name: "Groceries"))
            for index in 0..<5 {
                try tx.insert(TodoItem(id: "t\(index)", listId: "l", text: "item \(index)", complete: false))
            }
        }
        #expect(context.observerWakeCount - wakes == 2, "one wake per observer of a changed table")
        #expect(try await todoResults.next()?.count == 5, "the todo observer sees the whole transaction")
        #expect(try await listResults.next()?.map(\.id) == ["l"])
        var changes = feed.makeAsyncIterator()
        let change = await changes.next()
        #expect(change?.tables == ["list", "todo"])
        #expect(change?.ids(in: "todo")?.count == 5)
    }

    @Test func upsertInsertsAMissingModelAndUpdatesAnExistingOneKeepingWhatTheModelDoesNotHold() throws {
        let (context, _) = try Self.context()
        let todos = try context.table(TodoItem.self)
        let texts = try context.table(TodoText.self)
        let added = try todos.upsert(TodoItem(id: "", listId: "l", text: "Buy milk", complete: true))
        #expect(!added.id.isEmpty)
        try texts.upsert(TodoText(id: added.id, text: "Buy 2 milk"))
        #expect(
            try todos.lookup(id: added.id) == TodoItem(id: added.id, listId: "l", text: "Buy 2 milk", complete: true),
            "columns the narrow model does not hold are kept")
        #expect(try context.pendingOperations().map(\.kind) == [.insert], "insert + update collapse to an insert")
        try todos.untyped.upsert(Item(id: "raw", values: ["listId": "l", "text": "raw", "complete": false]))
        #expect(try todos.count() == 2)
    }

    @Test func upsertOfAnItemWhoseDeleteIsQueuedIsRefused() throws {
        let (context, remote) = try Self.context()
        let todos = try context.table(TodoItem.self)
        _ = try remote.service.insert(
            Item(id: "a", values: ["listId": "l", "text": "server", "complete": false]), into: "todo")
        try context.store.upsert(
            [Item(id: "a", values: ["listId": "l", "text": "server", "complete": false])], into: "todo")
        try todos.delete(ids: ["a"])
        #expect(throws: OfflineSyncError.self) {
            try todos.upsert(TodoItem(id: "a", listId: "l", text: "back", complete: false))
        }
        #expect(try context.pendingOperations().map(\.kind) == [.delete])
    }

    @Test func aTableWriteInsideTheBodyIsRefusedInsteadOfWaitingForever() throws {
        let (context, _) = try Self.context()
        let todos = try context.table(TodoItem.self)
        let error = #expect(throws: OfflineSyncError.self) {
            try context.write { _ in
                try todos.insert(TodoItem(id: "a", listId: "l", text: "x", complete: false))
            }
        }
        #expect(error?.code == .invalidOperation)
        #expect(try todos.count() == 0)
    }

    @Test func aTransactionUsedAfterItsBodyReturnedIsRefused() throws {
        let (context, _) = try Self.context()
        let escaped = try context.write { tx in tx }
        #expect(throws: OfflineSyncError.self) {
            try escaped.insert(TodoList(id: "l", name: "late"))
        }
        #expect(try context.table(TodoList.self).count() == 0)
    }

    @Test func typedCountAndFirstFollowTheQuery() throws {
        let (context, _) = try Self.context()
        let todos = try context.table(TodoItem.self)
        try todos.insert((0..<10).map { TodoItem(id: "t\($0)", listId: "l", text: "item \($0)", complete: $0 % 2 == 0) })
        #expect(try todos.count() == 10)
        #expect(try todos.count(.filter(\.complete == true)) == 5)
        #expect(try todos.count(.filter(\.complete == true).skip(2).top(2)) == 2)
        #expect(try todos.count(.all.skip(8)) == 2)
        #expect(try todos.first(.all.order(by: \.text, descending: true))?.id == "t9")
        #expect(try todos.first(.filter(\.text == "none")) == nil)
    }
}
