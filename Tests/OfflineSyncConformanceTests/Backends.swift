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

    init(_ name: String, _ capabilities: StoreCapabilities, makeStore: @escaping @Sendable () throws -> any LocalStore)
    {
        self.name = name
        self.capabilities = capabilities
        self.makeStore = makeStore
    }

    var suite: ConformanceSuite {
        ConformanceSuite(storeName: name, capabilities: capabilities, makeStore: makeStore)
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
        Backend("sqlite", .all) { SQLiteStore(path: try freshDatabasePath()) },
        Backend("sqlcipher", .all) {
            try SQLCipherStore(path: try freshDatabasePath(), key: .raw(Array(repeating: 0x5c, count: 32)))
        },
        Backend("lmdb", .all) { try LMDBStore(path: try freshDatabasePath()) },
    ].filter { $0.name != "sqlcipher" || SQLCipherLibrary.activeSanitizer == nil }  // a sanitizer cannot load SQLCipher

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
