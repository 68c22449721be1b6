import OfflineSync

extension LMDBStore {
    /// How an ``LMDBStore`` sizes its memory map and how hard it flushes commits to disk.
    public struct Options: Sendable, Hashable {
        /// The map size the environment starts with, in bytes (default 16 MiB).
        ///
        /// LMDB maps the whole data file into memory and cannot write past the map. The store grows
        /// the map by doubling when a write runs out of room (retrying the write transparently), so
        /// the initial size only saves a few growth steps; it is rounded up to whole pages and never
        /// shrinks an existing data file.
        public var initialMapSize: Int
        /// The largest map the store grows to, in bytes (default 64 GiB).
        ///
        /// A write that does not fit even at this size fails with an ``LMDBError`` of kind
        /// ``LMDBError/Kind/mapSizeLimit`` and leaves the store exactly as it was. On 64-bit Linux
        /// the map is address space, not memory or disk: a large maximum costs nothing until used.
        public var maximumMapSize: Int
        /// How commits reach the disk (default ``Durability/full``).
        public var durability: Durability

        /// Creates options.
        public init(initialMapSize: Int = 16 << 20, maximumMapSize: Int = 64 << 30, durability: Durability = .full) {
            self.initialMapSize = initialMapSize
            self.maximumMapSize = maximumMapSize
            self.durability = durability
        }

        func validate(path: String) throws {
            guard initialMapSize > 0, maximumMapSize >= initialMapSize else {
                throw OfflineSyncError(
                    .configuration,
                    "LMDB store at '\(path)': initialMapSize (\(initialMapSize)) must be positive and not larger than maximumMapSize (\(maximumMapSize))"
                )
            }
        }
    }

    /// The durability of a commit: what survives a crash of the operating system or a power loss.
    ///
    /// A crash of the *process* loses nothing in any mode: a committed transaction is in the
    /// operating system's page cache when ``LMDBStore/write(_:)`` returns. The modes differ only
    /// when the machine itself goes down before the page cache is written back. In every mode
    /// the data file stays consistent (LMDB never overwrites live pages); what can be lost is the
    /// most recent transactions. ``LMDBStore/close()`` flushes everything in every mode.
    ///
    /// The raw values are the `sync` option of an `lmdb:` store configuration: `full`, `meta`,
    /// `none`.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// Every commit waits for its data and meta pages to reach the disk (`fsync`). An
        /// acknowledged write survives a power loss. The slowest mode: one or two disk flushes
        /// per transaction, so batch many upserts into one ``LMDBStore/write(_:)``.
        case full
        /// `MDB_NOMETASYNC`: data pages are flushed on commit but the meta page that makes the
        /// commit current is flushed by the next commit. A system crash may undo the last
        /// transaction; the store stays consistent. About one flush per commit instead of two.
        case noMetaSync = "meta"
        /// `MDB_NOSYNC`: nothing is flushed on commit; the operating system writes pages back
        /// when it chooses. A system crash may undo the transactions of the last few seconds
        /// (consistency relies on the file system keeping write order, as ext4 with its default
        /// `data=ordered` does). Commits cost microseconds; use for caches and bulk imports.
        case noSync = "none"
    }
}
