import Foundation
import OfflineSync
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// A store backend under test, with the raw C baseline its figures are divided by.
struct BenchmarkBackend: Sendable {
    /// The backend's scheme name (`memory`, `sqlite`, `sqlcipher`, `lmdb`), a column of the report.
    var name: String
    /// Creates a closed store in the location's (empty, existing) directory.
    var makeStore: @Sendable (StoreLocation) throws -> any LocalStore
    /// Creates the raw baseline in the location's directory, or `nil` when there is none (memory).
    var makeBaseline: (@Sendable (StoreLocation) throws -> any RawBaseline)?

    /// Describes a backend.
    init(
        name: String, makeStore: @escaping @Sendable (StoreLocation) throws -> any LocalStore,
        makeBaseline: (@Sendable (StoreLocation) throws -> any RawBaseline)? = nil
    ) {
        self.name = name
        self.makeStore = makeStore
        self.makeBaseline = makeBaseline
    }

    /// The reference ``InMemoryStore`` (no raw baseline: there is no C API to compare with).
    static let memory = BenchmarkBackend(name: "memory") { _ in InMemoryStore() }
}

/// Where a trial keeps its files, and the settings a backend opens with.
struct StoreLocation: Sendable, Hashable {
    /// An empty directory owned by this trial, removed after it.
    var directory: String
    /// How hard commits are flushed; a backend and its baseline use the same level.
    var durability: RawDurability
    /// For SQLCipher: open with the passphrase (`true`) or the raw key (`false`).
    var usesPassphrase: Bool

    /// Creates a location.
    init(directory: String, durability: RawDurability = .normal, usesPassphrase: Bool = false) {
        self.directory = directory
        self.durability = durability
        self.usesPassphrase = usesPassphrase
    }

    /// A location in a new, empty directory under `parent`.
    static func makeTemporary(under parent: String, durability: RawDurability, usesPassphrase: Bool) throws
        -> StoreLocation
    {
        let directory = (parent as NSString).appendingPathComponent("offline-sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return StoreLocation(directory: directory, durability: durability, usesPassphrase: usesPassphrase)
    }

    /// Removes the directory and everything in it.
    func removeDirectory() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The SQLCipher key the benchmarks open with.
    var sqlCipherKey: RawSQLCipherKey {
        usesPassphrase ? .benchmarkPassphrase : .benchmarkRawKey
    }
}

extension BenchmarkBackend {
    /// The raw libsqlite3 baseline alone, as a backend-less column (`raw sqlite`).
    static func rawSQLiteBaseline(_ location: StoreLocation) throws -> any RawBaseline {
        try RawSQLiteBaseline(
            library: .system, path: location.directory + "/raw.sqlite", durability: location.durability)
    }

    /// The raw SQLCipher baseline (libsqlcipher loaded with dlopen).
    static func rawSQLCipherBaseline(_ location: StoreLocation) throws -> any RawBaseline {
        try RawSQLiteBaseline(
            library: .sqlcipher, path: location.directory + "/raw.sqlcipher",
            durability: location.durability, key: location.sqlCipherKey)
    }

    /// The raw LMDB baseline.
    static func rawLMDBBaseline(_ location: StoreLocation) -> any RawBaseline {
        RawLMDBBaseline(path: location.directory, durability: location.durability)
    }
}

extension BenchmarkBackend {
    /// Every backend built into OfflineSync, in report column order.
    static var available: [BenchmarkBackend] {
        [.memory, .sqlite, .sqlcipher, .lmdb]
    }

    /// ``named(_:)`` of every backend name in `names` (all available backends when empty).
    static func named(_ names: [String]) throws -> [BenchmarkBackend] {
        guard !names.isEmpty else { return available }
        return try names.map { name in
            guard let backend = available.first(where: { $0.name == name }) else {
                throw BenchmarkError(
                    "unknown store '\(name)'; available: \(available.map(\.name).joined(separator: ", "))")
            }
            return backend
        }
    }

    /// `SQLiteStore`, next to prepared statements on libsqlite3.
    static let sqlite = BenchmarkBackend(
        name: "sqlite",
        makeStore: { location in
            SQLiteStore(path: location.directory + "/store.sqlite", options: sqlOptions(location))
        }, makeBaseline: rawSQLiteBaseline)

    /// `SQLCipherStore`, next to the same prepared statements on the dlopen'ed libsqlcipher.
    static let sqlcipher = BenchmarkBackend(
        name: "sqlcipher",
        makeStore: { location in
            try SQLCipherStore(
                path: location.directory + "/store.sqlcipher",
                key: location.usesPassphrase
                    ? .passphrase(RawSQLCipherKey.benchmarkPassphraseText)
                    : .raw(RawSQLCipherKey.benchmarkRawKeyBytes),
                options: sqlOptions(location))
        }, makeBaseline: rawSQLCipherBaseline)

    /// `LMDBStore`, next to `mdb_put` / `mdb_get` with a hand-written record encoding.
    static let lmdb = BenchmarkBackend(
        name: "lmdb",
        makeStore: { location in
            try LMDBStore(
                path: location.directory + "/store.lmdb",
                options: LMDBStore.Options(
                    initialMapSize: 256 << 20,
                    durability: location.durability == .full ? .full : .noSync))
        }, makeBaseline: rawLMDBBaseline)

    private static func sqlOptions(_ location: StoreLocation) -> SQLStoreOptions {
        SQLStoreOptions(durability: location.durability == .full ? .full : .normal)
    }
}
