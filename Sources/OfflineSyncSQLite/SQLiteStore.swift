public import OfflineSync

/// A `LocalStore` in an SQLite database file, using the system SQLite library.
///
/// ```swift
/// let store = SQLiteStore(path: "/var/lib/app/data.sqlite")
/// try store.open(schema: StoreSchema([TableSchema("todo", columns: [Column("text", .string)])]))
/// ```
///
/// - Each table is an SQL table (`WITHOUT ROWID`, `id TEXT PRIMARY KEY`); the declared schema is
///   recorded in the table `__offline_sync_schema`, so reopening knows every column's type and
///   widens tables with `ALTER TABLE ADD COLUMN`. The file is an ordinary SQLite 3 database that
///   the `sqlite3` tool reads.
/// - Storage choices (see ``SQLStoreOptions``): WAL, `synchronous = NORMAL` unless
///   ``SQLStoreOptions/Durability/full`` is asked for, a 16 MiB page cache, dates as integer
///   milliseconds, booleans as 0/1, JSON as text, doubles without column affinity so `-0.0` keeps
///   its sign. Queries are translated to SQL that agrees with `QueryEvaluator`.
/// - One writer connection, confined behind a lock (writes are serialised), and a small pool of
///   read-only connections (``SQLStoreOptions/readConnections``): reads from any thread run
///   concurrently with each other and with a write, each seeing one committed snapshot.
/// - Failures of the library throw ``SQLiteError`` (a file that is not a database, a read-only
///   location, a lock held too long by another process, a full disk …); contract violations throw
///   `OfflineSyncError`.
public final class SQLiteStore: LocalStore, SQLEngineStore {
    package let engine: SQLTableStore

    /// Creates a closed store for the database file at `path` (created on first open).
    public init(path: String, options: SQLStoreOptions = SQLStoreOptions()) {
        engine = SQLTableStore(
            path: path, options: options, backend: SQLTableStore.Backend(name: "sqlite", api: .system))
    }

    /// The database file.
    public var path: String { engine.path }

    /// The version of the linked SQLite library, e.g. `3.40.1`.
    public var sqliteVersion: String { engine.sqliteVersion }
}
