import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncStores

/// A store with every kind of sync state, made with the real sync engine: a delta token from a
/// pull, an operation error from a conflict, and pending inserts, an update and a delete.
enum SyncStateFixture {
    static let todo = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

    /// Builds the state in a new store at `url` and closes it.
    static func make(at url: String) async throws {
        BuiltInStores.register()
        setenv(CLI.keyVariable, CLI.key, 1)
        let remote = try InMemoryRemote(tables: [todo])
        for (id, text) in [("1", "Buy bread"), ("2", "Call mom"), ("3", "Water the plants")] {
            try remote.service.insert(
                Item(id: id, values: ["text": .string(text), "complete": false]), into: "todoitem")
        }
        let store = try StoreRegistry.shared.makeStore(url)
        let context = try SyncContext(store: store, remote: remote, tables: [todo])
        let table = try context.table("todoitem")
        try await table.pull(queryId: "allTodoItems")

        try remote.changeFromAnotherDevice(table: "todoitem", id: "1") { $0["text"] = "Buy rye bread" }
        var bread = try table.lookup(id: "1") ?? Item(id: "1")
        bread["complete"] = true
        try table.update(bread)
        do { try await context.push() } catch let failure as PushFailure where failure.status == .complete {}

        remote.setOffline(true)
        try table.insert([
            Item(id: "4", values: ["text": "Buy milk", "complete": false]),
            Item(id: "5", values: ["text": "Walk the dog", "complete": false]),
        ])
        try table.delete(id: "2")
        try context.close()
    }
}
