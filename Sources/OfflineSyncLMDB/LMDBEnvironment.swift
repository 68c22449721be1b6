import CLMDB
import OfflineSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open LMDB environment: the `MDB_env` handle and the rules for using it safely.
///
/// - **Writers** are serialised by ``writer`` and run begin…commit synchronously on the calling
///   thread (see ``write(_:)`` for why that is the right thread model here).
/// - **Every transaction** holds ``gate`` shared; changing the map size and closing hold it
///   exclusively, since LMDB allows `mdb_env_set_mapsize` only while this process has no
///   active transaction.
/// - **Readers** use `MDB_NOTLS`, so a read transaction is not tied to its thread's
///   thread-local reader slot and Swift tasks may run reads on any thread of the pool.
///
/// `@unchecked Sendable` is safe: the `MDB_env` handle is thread-safe for beginning
/// transactions; ``isClosed`` is written only while holding ``gate`` exclusively and read only
/// while holding it (shared or exclusively); ``hasWritten`` is read and written only while
/// holding ``writer``; everything else is immutable.
final class LMDBEnvironment: @unchecked Sendable {
    /// Sub-databases per environment: `meta` plus one per table and one per index.
    static let maximumSubDatabases: UInt32 = 1024
    /// Concurrent read transactions (LMDB's default).
    static let maximumReaders: UInt32 = 126

    let path: String
    let options: LMDBStore.Options
    private let handle: OpaquePointer
    private let identity: EnvironmentRegistry.FileIdentity
    private let gate = ReadWriteLock()
    private let writer = ReadWriteLock()
    private var isClosed = false
    /// Set when a write transaction began since the environment was opened; guarded by
    /// ``writer``. Without it, closing a store opened with relaxed durability has no commit of
    /// its own to flush and skips the `fdatasync` (which costs more than the rest of a cold
    /// open and close).
    private var hasWritten = false
    /// Read transactions reset after use (`mdb_txn_reset`), as pointer bit patterns: the next read
    /// renews one (`mdb_txn_renew`) instead of allocating a transaction and claiming a reader
    /// slot under LMDB's reader-table mutex. At most ``maximumIdleReaders`` are kept; each
    /// keeps its reader slot, but a reset transaction pins no snapshot.
    private let idleReaders = Locked<[UInt]>([])
    /// How many reset read transactions are kept for reuse.
    static let maximumIdleReaders = 4

    private init(
        path: String, options: LMDBStore.Options, handle: OpaquePointer, identity: EnvironmentRegistry.FileIdentity
    ) {
        self.path = path
        self.options = options
        self.handle = handle
        self.identity = identity
    }

    deinit {
        if !isClosed {
            abortIdleReaders()
            mdb_env_close(handle)
            EnvironmentRegistry.release(identity)
        }
    }

    /// Opens the environment in directory `path`, creating the directory when it does not exist.
    static func open(path: String, options: LMDBStore.Options) throws -> LMDBEnvironment {
        try EnvironmentDirectory.prepare(path)
        guard let identity = EnvironmentRegistry.identity(of: path) else {
            throw LMDBError(code: errno, operation: "stat", path: path)
        }
        guard EnvironmentRegistry.claim(identity) else {
            throw LMDBError(
                .alreadyOpen, code: 0, reason: "the environment is already open in this process",
                operation: "mdb_env_open", path: path,
                advice:
                    "LMDB forbids two handles on one environment in one process; share the LMDBStore that has it open, or close it first"
            )
        }
        do {
            try DataFileCheck.checkHeader(directory: path)
            try EnvironmentDirectory.allocateLockFile(in: path)
        } catch {
            EnvironmentRegistry.release(identity)
            throw error
        }
        var handle: OpaquePointer?
        var code = mdb_env_create(&handle)
        guard code == 0, let handle else {
            EnvironmentRegistry.release(identity)
            throw LMDBError(code: code, operation: "mdb_env_create", path: path)
        }
        code = mdb_env_set_maxdbs(handle, maximumSubDatabases)
        if code == 0 { code = mdb_env_set_maxreaders(handle, maximumReaders) }
        if code == 0 { code = mdb_env_set_mapsize(handle, options.initialMapSize) }
        if code == 0 { code = mdb_env_open(handle, path, UInt32(MDB_NOTLS) | options.durability.flags, 0o644) }
        guard code == 0 else {
            mdb_env_close(handle)
            EnvironmentRegistry.release(identity)
            throw LMDBError(code: code, operation: "mdb_env_open", path: path)
        }
        do {
            try checkPages(handle: handle, path: path)
        } catch {
            mdb_env_close(handle)
            EnvironmentRegistry.release(identity)
            throw error
        }
        return LMDBEnvironment(path: path, options: options, handle: handle, identity: identity)
    }

    /// Runs ``DataFileCheck/checkPages(handle:txn:directory:)`` in a read transaction, again with a
    /// new one when another process committed twice meanwhile.
    private static func checkPages(handle: OpaquePointer, path: String) throws {
        while true {
            var txn: OpaquePointer?
            var code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
            if code == MDB_MAP_RESIZED {
                code = mdb_env_set_mapsize(handle, 0)
                guard code == 0 else { throw LMDBError(code: code, operation: "mdb_env_set_mapsize(0)", path: path) }
                continue
            }
            guard code == 0, let txn else {
                throw LMDBError(code: code, operation: "mdb_txn_begin (checking the data file)", path: path)
            }
            defer { mdb_txn_abort(txn) }
            if try DataFileCheck.checkPages(handle: handle, txn: txn, directory: path) { return }
        }
    }

    /// The current map size in bytes, or `nil` once closed.
    var mapSize: Int? {
        gate.shared { isClosed ? nil : currentMapSize }
    }

    /// The map size; call only while holding ``gate``.
    private var currentMapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// The version of the linked liblmdb, e.g. `LMDB 0.9.24: (July 24, 2019)`.
    static var libraryVersion: String { String(cString: mdb_version(nil, nil, nil)) }

    /// What one attempt at a transaction came to.
    private enum Attempt<Result> {
        case done(Result)
        case failed(any Error)
        case mapFull
        case mapResized
    }

    /// Runs `body` in a read-only transaction.
    func read<Result>(_ body: (TransactionContext) throws -> Result) throws -> Result {
        while true {
            let attempt: Attempt<Result> = gate.shared {
                guard !isClosed else { return .failed(LMDBEnvironment.notOpen(path)) }
                var txn: OpaquePointer?
                var code: Int32
                if let idle = idleReaders.withLock({ $0.popLast() }).flatMap({ OpaquePointer(bitPattern: $0) }) {
                    code = mdb_txn_renew(idle)
                    if code == 0 {
                        txn = idle
                    } else {
                        mdb_txn_abort(idle)
                        if code != MDB_MAP_RESIZED { code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn) }
                    }
                } else {
                    code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
                }
                if code == MDB_MAP_RESIZED { return .mapResized }
                guard code == 0, let txn else {
                    return .failed(LMDBError(code: code, operation: "mdb_txn_begin (read)", path: path))
                }
                defer {
                    mdb_txn_reset(txn)
                    let kept = idleReaders.withLock { idle in
                        guard idle.count < LMDBEnvironment.maximumIdleReaders else { return false }
                        idle.append(UInt(bitPattern: txn))
                        return true
                    }
                    if !kept { mdb_txn_abort(txn) }
                }
                do {
                    return .done(try body(TransactionContext(txn: txn, path: path, isWritable: false)))
                } catch {
                    return .failed(error)
                }
            }
            switch attempt {
            case .done(let result): return result
            case .failed(let error): throw error
            case .mapFull, .mapResized: try adoptResizedMap()
            }
        }
    }

    /// Runs `body` in a new read-only transaction and commits it (so that sub-database handles
    /// it opened stay open), or aborts it when `body` throws.
    func readCommitting<Result>(_ body: (TransactionContext) throws -> Result) throws -> Result {
        while true {
            let attempt: Attempt<Result> = gate.shared {
                guard !isClosed else { return .failed(LMDBEnvironment.notOpen(path)) }
                var txn: OpaquePointer?
                let code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
                if code == MDB_MAP_RESIZED { return .mapResized }
                guard code == 0, let txn else {
                    return .failed(LMDBError(code: code, operation: "mdb_txn_begin (read)", path: path))
                }
                let result: Result
                do {
                    result = try body(TransactionContext(txn: txn, path: path, isWritable: false))
                } catch {
                    mdb_txn_abort(txn)
                    return .failed(error)
                }
                let commit = mdb_txn_commit(txn)
                guard commit == 0 else {
                    return .failed(LMDBError(code: commit, operation: "mdb_txn_commit (read)", path: path))
                }
                return .done(result)
            }
            switch attempt {
            case .done(let result): return result
            case .failed(let error): throw error
            case .mapFull, .mapResized: try adoptResizedMap()
            }
        }
    }

    /// Runs `body` in the write transaction and commits it, or aborts it when `body` throws.
    ///
    /// Thread model: LMDB requires a write transaction to begin and end on one OS thread and
    /// holds a process-shared mutex meanwhile. ``LocalStore/write(_:)`` is synchronous and takes
    /// a non-escaping, non-`Sendable` closure, so the transaction runs on the calling thread
    /// from begin to commit while ``writer`` keeps other writers of this process
    /// waiting. A dedicated writer thread would need the closure and its result to cross threads
    /// (neither is `Sendable`) and would add two thread hand-offs to every write, for nothing:
    /// synchronous Swift code cannot move to another thread between begin and commit.
    ///
    /// When the map is full (reported by any operation or by the commit, even if `body` caught
    /// the error), the transaction is aborted, the map doubled while no transaction of this
    /// process is active, and `body` run again from the start; at ``LMDBStore/Options/maximumMapSize``
    /// the write fails with ``LMDBError/Kind/mapSizeLimit`` and the store is unchanged.
    func write<Result>(_ body: (TransactionContext) throws -> Result) throws -> Result {
        let outcome = try writer.exclusiveIfNotHeld {
            while true {
                let attempt: Attempt<Result> = gate.shared {
                    guard !isClosed else { return .failed(LMDBEnvironment.notOpen(path)) }
                    var txn: OpaquePointer?
                    let code = mdb_txn_begin(handle, nil, 0, &txn)
                    if code == MDB_MAP_RESIZED { return .mapResized }
                    guard code == 0, let txn else {
                        return .failed(LMDBError(code: code, operation: "mdb_txn_begin (write)", path: path))
                    }
                    hasWritten = true
                    let context = TransactionContext(txn: txn, path: path, isWritable: true)
                    let result: Result
                    do {
                        result = try body(context)
                    } catch {
                        mdb_txn_abort(txn)
                        return context.ranOutOfSpace ? .mapFull : .failed(error)
                    }
                    if context.ranOutOfSpace {
                        mdb_txn_abort(txn)
                        return .mapFull
                    }
                    let commit = mdb_txn_commit(txn)
                    if commit == MDB_MAP_FULL { return .mapFull }
                    guard commit == 0 else { return .failed(LMDBError.commitFailed(code: commit, path: path)) }
                    return .done(result)
                }
                switch attempt {
                case .done(let result): return result
                case .failed(let error): throw error
                case .mapFull: try grow()
                case .mapResized: try adoptResizedMap()
                }
            }
        }
        guard let outcome else {
            throw OfflineSyncError(
                .invalidOperation,
                "the LMDB store at '\(path)' was written to from inside one of its own write closures; use the transaction handed to the closure instead"
            )
        }
        return outcome
    }

    /// Frees the reset read transactions kept for reuse; call while holding ``gate`` exclusively
    /// (or from `deinit`).
    private func abortIdleReaders() {
        let idle = idleReaders.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        for pointer in idle { mdb_txn_abort(OpaquePointer(bitPattern: pointer)) }
    }

    /// Doubles the map (up to the maximum) while no transaction of this process is active.
    private func grow() throws {
        try gate.exclusive {
            abortIdleReaders()
            let current = currentMapSize
            guard current < options.maximumMapSize else {
                throw LMDBError(
                    .mapSizeLimit, code: MDB_MAP_FULL,
                    reason: "the write needs more room than the maximum map size of \(options.maximumMapSize) bytes",
                    operation: "growing the map", path: path,
                    advice:
                        "raise LMDBStore.Options.maximumMapSize or delete data; the failed write left the store unchanged"
                )
            }
            let next = min(options.maximumMapSize, current * 2)
            let code = mdb_env_set_mapsize(handle, next)
            guard code == 0 else { throw LMDBError(code: code, operation: "mdb_env_set_mapsize(\(next))", path: path) }
        }
    }

    /// Adopts the map size another process set (`MDB_MAP_RESIZED`).
    private func adoptResizedMap() throws {
        try gate.exclusive {
            abortIdleReaders()
            let code = mdb_env_set_mapsize(handle, 0)
            guard code == 0 else { throw LMDBError(code: code, operation: "mdb_env_set_mapsize(0)", path: path) }
        }
    }

    /// Waits for running transactions, flushes relaxed commits (when there were any), and closes
    /// the environment.
    func close() {
        writer.exclusive {
            gate.exclusive {
                guard !isClosed else { return }
                abortIdleReaders()
                if options.durability != .full, hasWritten { mdb_env_sync(handle, 1) }
                mdb_env_close(handle)
                isClosed = true
                EnvironmentRegistry.release(identity)
            }
        }
    }

    static func notOpen(_ path: String) -> OfflineSyncError {
        OfflineSyncError(.notOpen, "the LMDB store at '\(path)' is not open; call open(schema:) first")
    }
}

extension LMDBStore.Durability {
    var flags: UInt32 {
        switch self {
        case .full: return 0
        case .noMetaSync: return UInt32(MDB_NOMETASYNC)
        case .noSync: return UInt32(MDB_NOSYNC)
        }
    }
}
