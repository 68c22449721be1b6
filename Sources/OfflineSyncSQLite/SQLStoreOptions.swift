/// Storage settings of an SQL store (``SQLiteStore``, and `SQLCipherStore`, which shares the engine).
///
/// Every store runs in WAL mode (readers and the writer do not block each other, and a commit is
/// one sequential append to the WAL file) with the library's default page size (4 KiB for SQLite
/// 3.40, 1 KiB for SQLCipher 3). A store has one connection for writes and a small pool of
/// read-only connections (``readConnections``), so reads from several threads run at the same
/// time as each other and as a write.
public struct SQLStoreOptions: Sendable, Hashable {
    /// How hard a commit works to survive a power failure.
    public enum Durability: String, Sendable, Hashable {
        /// `PRAGMA synchronous = NORMAL` (the default): a commit survives a crash of the process;
        /// after a power loss or an operating-system crash the last transactions before the
        /// failure may be missing, but the database is never corrupted. The WAL is synced at
        /// checkpoints, so commits do not wait for the disk.
        case normal
        /// `PRAGMA synchronous = FULL`: every commit waits until the WAL is on the disk, so an
        /// acknowledged write survives a power loss too, at the cost of one fsync per transaction.
        case full
    }

    /// How hard a commit works to survive a power failure; ``Durability/normal`` by default.
    public var durability: Durability
    /// How long a statement waits for a lock held by another connection or process before failing
    /// with ``SQLiteError/Code/busy`` (5 seconds by default).
    public var busyTimeoutMilliseconds: Int
    /// The page cache per connection in KiB (`PRAGMA cache_size = -N`); 16 MiB by default.
    public var cacheSizeKiB: Int
    /// A cap on the database size in pages (`PRAGMA max_page_count`), `nil` for SQLite's default.
    /// A write that would grow the file beyond it fails with ``SQLiteError/Code/full`` and its
    /// transaction is rolled back.
    public var maximumPageCount: Int?
    /// Whether errors list the bound values of the failing statement (``SQLiteError/arguments``).
    /// Off by default: values may be personal data.
    public var publicStatementArguments: Bool
    /// The most read-only connections the store opens (4 by default), each on first need: reads
    /// and lookups borrow one, so that reads on different threads run concurrently with each
    /// other and with a write, each seeing the last commit before it began. `0` reads on the
    /// writer connection, one call at a time. An in-memory database (`:memory:`) has none.
    /// Each connection keeps a page cache of up to ``cacheSizeKiB``; an SQLCipher connection
    /// derives the key once when it opens (asking a key provider again).
    public var readConnections: Int

    /// Creates options; every argument has a default.
    public init(
        durability: Durability = .normal, busyTimeoutMilliseconds: Int = 5000, cacheSizeKiB: Int = 16_384,
        maximumPageCount: Int? = nil, publicStatementArguments: Bool = false, readConnections: Int = 4
    ) {
        self.durability = durability
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.cacheSizeKiB = cacheSizeKiB
        self.maximumPageCount = maximumPageCount
        self.publicStatementArguments = publicStatementArguments
        self.readConnections = max(0, readConnections)
    }
}
