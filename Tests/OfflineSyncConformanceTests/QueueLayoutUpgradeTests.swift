import OfflineSync
import OfflineSyncService
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// Stores made before the operation queue lost its (table, item id) index keep that index (a
/// reopen never drops one) and keep working: edits, counts by table, push, pull and purge.
@Suite("a store made with the earlier queue layout keeps working")
struct QueueLayoutUpgradeTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    enum FileBackend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, sqlcipher, lmdb

        func makeStore(at path: String) throws -> any LocalStore {
            switch self {
            case .sqlite: return SQLiteStore(path: path)
            case .sqlcipher: return try SQLCipherStore(path: path, key: .raw(Array(repeating: 0x2d, count: 32)))
            case .lmdb: return try LMDBStore(path: path)
            }
        }

        var testDescription: String { rawValue }
    }

    /// The queue's declaration as it was: with an index on (table, item id).
    static var earlierOperationsSchema: TableSchema {
        var schema = SystemTables.operationsSchema
        schema.indexes.append(TableIndex("operations_item", on: ["tableName", "itemId"]))
        return schema
    }

    @Test(arguments: FileBackend.allCases.filter { $0 != .sqlcipher || SQLCipherLibrary.activeSanitizer == nil })
    func reopenedWithTheCurrentLayout(_ backend: FileBackend) async throws {
        let path = try Backends.freshDatabasePath()
        let remote = try InMemoryRemote(tables: [Self.todo])
        _ = try remote.service.insert(Item(id: "server-1", values: ["text": .string("from the server")]), into: "todo")

        // The store as an earlier version made it, with an operation queued in it.
        let earlier = try backend.makeStore(at: path)
        try earlier.open(
            schema: StoreSchema(
                [Self.todo, Self.earlierOperationsSchema, SystemTables.errorsSchema, SystemTables.configSchema]))
        try earlier.close()
        do {
            let context = try SyncContext(store: try backend.makeStore(at: path), remote: remote, tables: [Self.todo])
            try context.table("todo").insert(Item(id: "local-1", values: ["text": .string("written before")]))
            try context.close()
        }

        let store = try backend.makeStore(at: path)
        let context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        defer { try? context.close() }
        let kept = try store.schema.table(named: SystemTables.operations)
        #expect(kept?.indexes.map(\.name).sorted() == ["operations_item", "operations_sequence"])

        let todo = try context.table("todo")
        try todo.insert(Item(id: "local-2", values: ["text": .string("written after")]))
        #expect(try context.pendingOperationCount(table: "todo") == 2)
        #expect(try context.pendingOperationCount() == 2)
        let pushed = try await context.push()
        #expect(pushed.completedCount == 2)
        let pulled = try await todo.pull(queryId: "all")
        #expect(pulled.received == 3)
        #expect(try todo.lookup(id: "server-1")?["text"] == .string("from the server"))
        #expect(try await todo.purge() == 3)
        #expect(try context.pendingOperationCount() == 0)
    }
}
