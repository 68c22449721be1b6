import Foundation
import OfflineSync
import OfflineSyncLMDB
import OfflineSyncPostgres
import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// A store backend under test, with the raw C baseline its figures are divided by.
public struct BenchmarkBackend: Sendable {
    /// The backend's scheme name (`memory`, `sqlite`, `sqlcipher`, `lmdb`), a column of the report.
    public var name: String
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
public struct StoreLocation: Sendable, Hashable {
    /// An empty directory owned by this trial, removed after it.
    public var directory: String
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
    public static func makeTemporary(under parent: String, durability: RawDurability, usesPassphrase: Bool) throws
        -> StoreLocation
    {
        let directory = (parent as NSString).appendingPathComponent("offline-sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return StoreLocation(directory: directory, durability: durability, usesPassphrase: usesPassphrase)
    }

    /// Removes the directory and everything in it, and the PostgreSQL schemas of this location
    /// when a PostgreSQL server is configured (see `BenchmarkBackend.postgresEnvironmentVariable`).
    public func removeDirectory() {
        try? FileManager.default.removeItem(atPath: directory)
        for schema in [postgresSchema, postgresSchema + "_raw"] {
            if let settings = BenchmarkBackend.postgresSettings(schema: schema) {
                try? PostgresStore.dropSchema(settings)
            }
        }
    }

    /// The PostgreSQL schema of this location's store (its baseline's is this plus `_raw`).
    var postgresSchema: String {
        "bench_" + String(directory.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }, radix: 16)
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
    /// Every backend built into OfflineSync, in report column order; the PostgreSQL columns only
    /// when `postgresEnvironmentVariable` names a server.
    public static var available: [BenchmarkBackend] {
        [.memory, .sqlite, .sqlcipher, .lmdb] + (postgresSettings(schema: "public") == nil ? [] : [.postgres, .postgresCopy])
    }

    /// The environment variable naming the PostgreSQL server and database the `postgres` columns
    /// use, e.g. `postgres://bench@127.0.0.1:5432/bench` (each trial gets schemas of its own,
    /// dropped after it).
    static let postgresEnvironmentVariable = "OFFLINE_SYNC_BENCH_POSTGRES"

    /// The settings of `postgresEnvironmentVariable` with `schema`, or `nil` when it is unset.
    static func postgresSettings(schema: String) -> PostgresConnectionSettings? {
        guard let text = ProcessInfo.processInfo.environment[postgresEnvironmentVariable], !text.isEmpty,
            var settings = try? PostgresConnectionSettings(StoreConfiguration(parsing: text))
        else { return nil }
        settings.schema = schema
        return settings
    }

    private static func requirePostgresSettings(schema: String) throws -> PostgresConnectionSettings {
        guard let settings = postgresSettings(schema: schema) else {
            throw BenchmarkError(
                "the postgres columns need a server: export \(postgresEnvironmentVariable)=postgres://USER@HOST:PORT/DATABASE")
        }
        return settings
    }

    /// `PostgresStore`, next to one prepared libpq statement per row.
    static let postgres = BenchmarkBackend(
        name: "postgres",
        makeStore: { location in
            PostgresStore(settings: try requirePostgresSettings(schema: location.postgresSchema))
        },
        makeBaseline: { location in
            RawPostgresBaseline(
                settings: try requirePostgresSettings(schema: location.postgresSchema + "_raw"), mode: .prepared)
        })

    /// `PostgresStore` again, next to libpq `COPY` into a staging table and one upsert per transaction.
    static let postgresCopy = BenchmarkBackend(
        name: "postgres-copy",
        makeStore: postgres.makeStore,
        makeBaseline: { location in
            RawPostgresBaseline(
                settings: try requirePostgresSettings(schema: location.postgresSchema + "_raw"), mode: .copy)
        })

    /// ``named(_:)`` of every backend name in `names` (all available backends when empty).
    package static func named(_ names: [String]) throws -> [BenchmarkBackend] {
        guard !names.isEmpty else { return available }
        return try names.map { name in
            if name.hasPrefix("postgres") { _ = try requirePostgresSettings(schema: "public") }
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
