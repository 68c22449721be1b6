import Foundation
import OfflineSync
import OfflineSyncConformance
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// A store implementation the conformance tests run against.
struct Backend: Sendable, CustomTestStringConvertible {
    /// The name shown in test results, e.g. `memory`.
    let name: String
    /// What the backend can do; cases needing more are reported as skipped.
    let capabilities: StoreCapabilities
    /// Makes a new, empty, unopened store at a fresh location.
    let makeStore: @Sendable () throws -> any LocalStore
    /// Makes another unopened store over the location of one `makeStore` returned (`nil` for a
    /// store confined to its instance).
    let sharing: (@Sendable (any LocalStore) throws -> any LocalStore)?

    init(
        _ name: String, _ capabilities: StoreCapabilities,
        sharing: (@Sendable (any LocalStore) throws -> any LocalStore)? = nil,
        makeStore: @escaping @Sendable () throws -> any LocalStore
    ) {
        self.name = name
        self.capabilities = capabilities
        self.sharing = sharing
        self.makeStore = makeStore
    }

    var suite: ConformanceSuite {
        var suite = ConformanceSuite(storeName: name, capabilities: capabilities, makeStore: makeStore)
        suite.makeStoreSharingLocation = sharing
        return suite
    }

    var testDescription: String { name }
}

/// Every backend the conformance tests cover. A backend joins by appending one line with its name,
/// its capabilities and a factory returning a new, unopened store at a fresh location, e.g.
/// `Backend("sqlite", .all) { try SQLiteStore(path: <a new temporary file>) }`; every group's test
/// then runs on it too.
enum Backends {
    static let all: [Backend] = [
        Backend("memory", .all) { InMemoryStore() },
        Backend("sqlite", .all, sharing: { SQLiteStore(path: try sharedLocation(of: $0, as: SQLiteStore.self).path) }) {
            SQLiteStore(path: try freshDatabasePath())
        },
        Backend(
            "sqlcipher", .all,
            sharing: { try SQLCipherStore(path: try sharedLocation(of: $0, as: SQLCipherStore.self).path, key: cipherKey) }
        ) {
            try SQLCipherStore(path: try freshDatabasePath(), key: cipherKey)
        },
        // No second instance: LMDB forbids two handles on one environment in a process, and the
        // store refuses one (two processes over one LMDB store: ServeSharedStoreTests).
        Backend("lmdb", .all) { try LMDBStore(path: try freshDatabasePath()) },
    ].filter { $0.name != "sqlcipher" || SQLCipherLibrary.activeSanitizer == nil }  // a sanitizer cannot load SQLCipher

    static let cipherKey = SQLCipherKey.raw(Array(repeating: 0x5c, count: 32))

    /// `store` as the backend's type, to make another instance over its location.
    static func sharedLocation<Store: LocalStore>(of store: any LocalStore, as type: Store.Type) throws -> Store {
        guard let store = store as? Store else {
            throw OfflineSyncError(.invalidOperation, "expected a \(Store.self), got \(Swift.type(of: store))")
        }
        return store
    }

    /// This process's own temporary directory (named after the process so runs never share one),
    /// removed with everything in it when the test process exits.
    static let directory: String = {
        atexit { try? FileManager.default.removeItem(atPath: Backends.directory) }
        return NSTemporaryDirectory() + "offline-sync-conformance-\(ProcessInfo.processInfo.processIdentifier)"
    }()

    /// A new file path in ``directory``.
    static func freshDatabasePath() throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/" + UUID().uuidString + ".db"
    }
}
