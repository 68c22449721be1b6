public import OfflineSync
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// The built-in device backends (`memory:`, `sqlite:`, `sqlcipher:`, `lmdb:`), registered in one
/// call, and the default store of the command-line tool.
///
/// PostgreSQL is not among them, so that an app choosing its store by configuration links no
/// libpq: a server registers it itself with `PostgresStore.register()` (module
/// `OfflineSyncPostgres`), as `offline-sync` does.
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
            backend.register(registry)
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

    /// Each built-in backend's scheme and its own registration, the one a third-party backend
    /// would also write.
    private static var backends: [(scheme: StoreScheme, register: (StoreRegistry) -> Void)] {
        [
            (.memory, { $0.register(.memory) { _ in InMemoryStore() } }),
            (.sqlite, { SQLiteStore.register(in: $0) }),
            (.sqlcipher, { SQLCipherStore.register(in: $0) }),
            (.lmdb, { LMDBStore.register(in: $0) }),
        ]
    }
}
