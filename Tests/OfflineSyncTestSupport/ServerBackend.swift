package import OfflineSync
package import OfflineSyncLMDB
package import OfflineSyncSQLCipher
package import OfflineSyncSQLite
package import Testing

/// A backend a served store can be: tests that must hold on every backend take these as arguments.
package enum ServerBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite, sqlcipher, lmdb

    /// Every backend, without SQLCipher in a process built with a sanitizer (which cannot load it).
    package static var allCases: [ServerBackend] {
        [.memory, .sqlite, .sqlcipher, .lmdb].filter { $0 != .sqlcipher || SQLCipherLibrary.activeSanitizer == nil }
    }

    /// A new, unopened store of this backend in `directory`.
    package func makeStore(in directory: TemporaryDirectory) throws -> any LocalStore {
        switch self {
        case .memory: return InMemoryStore()
        case .sqlite: return SQLiteStore(path: directory.path("server.sqlite"))
        case .sqlcipher:
            return try SQLCipherStore(
                path: directory.path("server.sqlcipher"), key: .raw(Array(repeating: 0x3a, count: 32)))
        case .lmdb: return try LMDBStore(path: directory.path("server.lmdb"))
        }
    }

    package var testDescription: String { rawValue }
}

/// Everything a store holds for its user tables: the schema and every row (soft-deleted included).
package struct StoreSnapshot: Hashable {
    var schema: StoreSchema
    var rows: [String: [Item]]

    package init(_ store: any LocalStore) throws {
        schema = try store.schema
        rows = [:]
        for table in schema.tables where !table.isSystem {
            rows[table.name] = try store.read(Query(table: table.name)).items
        }
    }
}
