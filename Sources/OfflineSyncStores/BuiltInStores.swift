import OfflineSync
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// The built-in backends, registered in one call, and the default store of the command-line tool.
///
/// ```swift
/// import OfflineSyncStores
///
/// BuiltInStores.register()
/// let store = try StoreRegistry.shared.makeStore(BuiltInStores.defaultStore())
/// ```
public enum BuiltInStores {
    /// The environment variable that overrides ``defaultStore(environment:)``.
    public static let environmentVariable = "OFFLINE_SYNC_STORE"

    /// The schemes this module registers, in the order they are registered.
    public static var schemes: [StoreScheme] { backends.map(\.scheme) }

    /// Registers every built-in backend linked into this build with `registry`. Safe to call more
    /// than once (a registration replaces the previous one).
    public static func register(in registry: StoreRegistry = .shared) {
        for backend in backends {
            registry.register(backend.scheme, factory: backend.factory)
        }
    }

    /// The store used when none is named: `OFFLINE_SYNC_STORE` when set and not empty, otherwise
    /// an SQLite file in `./.offline-sync/` when the SQLite backend is built in, otherwise `memory:`.
    public static func defaultStore(environment: [String: String]) -> String {
        if let configured = environment[environmentVariable], !configured.isEmpty { return configured }
        return fallbackStore
    }

    private static var fallbackStore: String {
        backends.contains { $0.scheme.name == StoreScheme.sqlite.name }
            ? "sqlite:./.offline-sync/store.sqlite" : "memory:"
    }

    private static var backends: [(scheme: StoreScheme, factory: StoreRegistry.Factory)] {
        [
            (.memory, { _ in InMemoryStore() }),
            (
                .sqlite,
                { configuration in
                    let settings = try StoreConfiguration.SQLiteSettings(configuration)
                    return SQLiteStore(path: settings.path, options: sqlOptions(settings.durability))
                }
            ),
            (
                .sqlcipher,
                { configuration in
                    let settings = try StoreConfiguration.SQLCipherSettings(configuration)
                    let source = settings.keySource
                    return try SQLCipherStore(path: settings.path, options: sqlOptions(settings.durability)) {
                        SQLCipherKey(try source.load())
                    }
                }
            ),
            (
                .lmdb,
                { configuration in
                    let settings = try StoreConfiguration.LMDBSettings(configuration)
                    var options = LMDBStore.Options()
                    if let size = settings.mapSize { options.initialMapSize = size }
                    if let size = settings.maxMapSize { options.maximumMapSize = size }
                    if settings.mapSize != nil, settings.maxMapSize == nil {
                        options.maximumMapSize = max(options.maximumMapSize, options.initialMapSize)
                    }
                    switch settings.durability {
                    case .full: options.durability = .full
                    case .meta: options.durability = .noMetaSync
                    case .none: options.durability = .noSync
                    }
                    return try LMDBStore(path: settings.path, options: options)
                }
            ),
        ]
    }

    private static func sqlOptions(_ durability: StoreConfiguration.SQLiteSettings.Durability?) -> SQLStoreOptions {
        switch durability {
        case .full: return SQLStoreOptions(durability: .full)
        case .normal: return SQLStoreOptions(durability: .normal)
        case nil: return SQLStoreOptions()
        }
    }
}

extension SQLCipherKey {
    /// The SQLCipher key for key material read from a ``OfflineSync/KeySource``.
    public init(_ key: StoreKey) {
        switch key.kind {
        case .raw: self = .raw(key.bytes)
        case .passphrase: self = .passphrase(bytes: key.bytes)
        }
    }
}
