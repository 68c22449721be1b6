import OfflineSync

/// Checks of a store's file made before SQLite opens it, for the files SQLite would take for a
/// new, empty database and overwrite, or whose write-ahead log it would delete.
///
/// - A file of 1 to 511 bytes is refused: every database holds at least one page of 512 bytes or
///   more, so such a file is a truncated store or something else, never a database; SQLite would
///   answer "no tables" and write a new database over it. (A missing file is a new store; an
///   empty one is a new database for SQLite, which is how files made by `mkstemp` are used.)
/// - A store file that is missing or shorter than one page while its `-wal` file holds data is
///   refused: SQLite would delete the write-ahead log, and the changes in it with it.
///
/// - A `-wal` file that SQLite would silently discard in part or in whole while it holds
///   committed transactions is refused (see ``WriteAheadLogCheck``): SQLite takes a log whose
///   header or a frame fails its checksum as ending there, opens the store without the
///   transactions after that point, and deletes or overwrites the log.
///
/// The length rules apply to SQLCipher too, whose files start with a random salt instead of the
/// plaintext header `SQLite format 3`; so does the log check (SQLCipher's log frames carry
/// plaintext headers and checksums over the encrypted pages).
package enum DatabaseFileCheck {
    /// The smallest page size SQLite writes: no database file is shorter.
    package static let minimumSize = 512

    /// Throws ``OfflineSync/OfflineSyncError/Code/storage`` when the file at `path` (of the
    /// backend `backend`, for the message) must not be opened; see the type. Files that cannot be
    /// examined are left for SQLite to report.
    package static func check(path: String, backend: String) throws {
        guard !SQLTableStore.isInMemory(path), !path.hasPrefix("file:") else { return }
        let size = regularFileSize(path)
        let log = path + "-wal"
        let logSize = regularFileSize(log) ?? 0
        if (size ?? 0) < minimumSize, logSize > 0 {
            let state = size.map { "holds only \($0) byte\($0 == 1 ? "" : "s")" } ?? "is missing"
            throw OfflineSyncError(
                .storage,
                "the \(backend) store file '\(path)' \(state), but its write-ahead log '\(log)' holds \(logSize) bytes that opening would discard; both were left untouched: restore the store file from a backup (keeping the log beside it), or move the log away if its changes are not needed"
            )
        }
        if logSize > 0, let damage = WriteAheadLogCheck.damage(ofLogAt: log) {
            throw OfflineSyncError(
                .storage,
                "the write-ahead log '\(log)' of the \(backend) store '\(path)' is damaged (\(damage)): opening the store would silently drop the committed changes it holds, so both files were left untouched; restore the store and its log from a backup, or, to keep only the changes before the damage, move the log away (they are then lost; this is also what to do when the machine lost power while the store was written)"
            )
        }
        if let size, size > 0, size < minimumSize {
            throw OfflineSyncError(
                .storage,
                "the \(backend) store file '\(path)' holds only \(size) byte\(size == 1 ? "" : "s"), fewer than the smallest database (one page of \(minimumSize) bytes): it was truncated or is not a store, and it was left untouched; restore it from a backup, or delete it and pull the data again"
            )
        }
    }

    /// The size of the regular file at `path`, or `nil` when there is none (or it cannot be
    /// examined, or it is a device, a directory …).
    private static func regularFileSize(_ path: String) -> Int? {
        guard let status = FileKind.status(of: path).status, status.isRegularFile else { return nil }
        return status.size
    }
}
