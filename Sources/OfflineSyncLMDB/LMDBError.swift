public import OfflineSync
import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// An error from the LMDB engine or from ``LMDBStore``'s handling of an environment.
///
/// It carries LMDB's own error code (an `MDB_*` code or an `errno` value) and `mdb_strerror` text,
/// the operation that failed, the location, and a sentence saying what to do. The ``Kind`` groups
/// the failures a caller may want to react to; it is a struct so that kinds can be added without
/// breaking callers that switch over them.
public struct LMDBError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of an ``LMDBError``.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The path holds something other than an LMDB environment (a file, a foreign directory,
        /// a damaged or incompatible data file).
        public static let notAnEnvironment = Kind("notAnEnvironment")
        /// The environment is already open in this process through another ``LMDBStore``.
        public static let alreadyOpen = Kind("alreadyOpen")
        /// The location cannot be written (permissions, read-only file system).
        public static let readOnlyLocation = Kind("readOnlyLocation")
        /// The data no longer fits under ``LMDBStore/Options/maximumMapSize``.
        public static let mapSizeLimit = Kind("mapSizeLimit")
        /// Too many tables and indexes, or too many concurrent readers.
        public static let capacity = Kind("capacity")
        /// A stored record or the stored schema could not be read back.
        public static let corruptRecord = Kind("corruptRecord")
        /// The data file is damaged (truncated, or pages overwritten) in a way that reading it
        /// would crash the process; the store refuses to open it.
        public static let damaged = Kind("damaged")
        /// Any other failure of the engine.
        public static let engine = Kind("engine")

        public var description: String { name }
    }

    /// The class of the failure.
    public var kind: Kind
    /// LMDB's return code: an `MDB_*` code (negative) or an `errno` value (positive); 0 when the
    /// failure was detected by ``LMDBStore`` itself.
    public var code: Int32
    /// The engine's text for ``code`` (`mdb_strerror`), or a description of the fault.
    public var reason: String
    /// What was being done, e.g. `mdb_env_open`.
    public var operation: String
    /// The environment directory involved.
    public var path: String
    /// What to do about it.
    public var advice: String

    /// Creates an error.
    public init(_ kind: Kind, code: Int32, reason: String, operation: String, path: String, advice: String) {
        self.kind = kind
        self.code = code
        self.reason = reason
        self.operation = operation
        self.path = path
        self.advice = advice
    }

    public var description: String {
        let codeText = code == 0 ? "" : " (code \(code))"
        return "LMDB store at '\(path)': \(operation) failed: \(reason)\(codeText); \(advice)"
    }
}

extension LMDBError {
    /// The error for a non-zero LMDB return code, classified by the code.
    init(code: Int32, operation: String, path: String) {
        let reason = String(cString: mdb_strerror(code))
        switch code {
        case MDB_INVALID, MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE, MDB_CORRUPTED, MDB_PAGE_NOTFOUND:
            self.init(
                .notAnEnvironment, code: code, reason: reason, operation: operation, path: path,
                advice:
                    "the directory does not hold a usable LMDB 0.9 environment; point the store at a new or empty directory, or restore the environment from a copy"
            )
        case EACCES, EPERM, EROFS:
            self.init(
                .readOnlyLocation, code: code, reason: reason, operation: operation, path: path,
                advice:
                    "the store needs to create and write 'data.mdb' and 'lock.mdb' there; choose a writable directory or fix its permissions"
            )
        case MDB_MAP_FULL:
            self.init(
                .mapSizeLimit, code: code, reason: reason, operation: operation, path: path,
                advice: "raise LMDBStore.Options.maximumMapSize or delete data")
        case MDB_DBS_FULL:
            self.init(
                .capacity, code: code, reason: reason, operation: operation, path: path,
                advice:
                    "the environment holds at most \(LMDBEnvironment.maximumSubDatabases - 1) tables and indexes together; declare fewer"
            )
        case MDB_READERS_FULL:
            self.init(
                .capacity, code: code, reason: reason, operation: operation, path: path,
                advice:
                    "more than \(LMDBEnvironment.maximumReaders) reads are running at once; limit concurrent readers")
        case ENOSPC:
            self.init(
                .engine, code: code, reason: reason, operation: operation, path: path,
                advice: "the disk is full; free space and retry (the store is unchanged)")
        default:
            self.init(
                .engine, code: code, reason: reason, operation: operation, path: path,
                advice: "the store is unchanged by the failed operation; report the code if it persists")
        }
    }

    /// The error for a failed `mdb_txn_commit`. LMDB reports a write cut short by a full disk
    /// as `EIO` (a short `pwrite`), so an `EIO` or `ENOSPC` on a file system with less than a
    /// MiB left is reported as the full disk it is.
    static func commitFailed(code: Int32, path: String) -> LMDBError {
        var info = statvfs()
        if code == EIO || code == ENOSPC, statvfs(path, &info) == 0,
            UInt64(info.f_bavail) * UInt64(info.f_frsize) < 1 << 20
        {
            return LMDBError(
                .engine, code: ENOSPC, reason: "no space left on device: the commit could not write its pages",
                operation: "mdb_txn_commit", path: path,
                advice: "the disk is full; free space and retry (the store is unchanged by the failed write)")
        }
        return LMDBError(code: code, operation: "mdb_txn_commit", path: path)
    }

    /// A stored record that cannot be decoded.
    static func corrupt(_ what: String, table: String, path: String) -> LMDBError {
        LMDBError(
            .corruptRecord, code: 0, reason: what, operation: "decoding a record of table '\(table)'", path: path,
            advice:
                "the data file was written by an incompatible program or is damaged; restore the directory from a backup, or delete it and pull the data again"
        )
    }
}

extension LMDBError: StoreFullError {
    /// `true` for ``Kind/mapSizeLimit`` (the data no longer fits under the maximum map size)
    /// and for `MDB_DBS_FULL` (no room for another table or index).
    public var isStoreFull: Bool { kind == .mapSizeLimit || code == MDB_DBS_FULL }
}
