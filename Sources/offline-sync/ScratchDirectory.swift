import Foundation
import OfflineSync
import OfflineSyncPostgres
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory for temporary stores, next to a store's path (so it is on the same file
/// system and a finished store can be renamed into place) or in the temporary directory. A
/// temporary `postgres:` store is a new schema in the same database instead, dropped by
/// ``remove()``.
///
/// The process that made a directory holds an exclusive `flock` on its lock file until it removes
/// it; the kernel releases the lock when the process dies, even by `kill -9`. A new scratch
/// directory therefore first removes the directories of the same purpose beside it whose lock
/// file it can lock and that were marked as in use: their process is gone. Directories without
/// that lock file (made by older versions, or by someone else) are left alone.
final class ScratchDirectory: Sendable {
    let url: URL
    private let counter = Locked(0)
    private let schemas = Locked<[PostgresConnectionSettings]>([])
    /// The descriptor of the locked lock file, or -1 when it could not be made.
    private let lock: Int32
    /// The directories above ``url`` that did not exist and were created for it, deepest first:
    /// ``remove()`` removes those left empty, so that a command leaves no empty directory behind
    /// (`conformance` without `--store` would leave `./.offline-sync/`).
    private let createdParents: [URL]

    /// The name of the lock file inside a scratch directory.
    static let lockName = "in-use.lock"

    /// Creates `.offline-sync-PURPOSE-UUID` in the directory of `path`, or in the temporary
    /// directory when `path` is `nil`, after removing the abandoned ones there (see the type).
    init(near path: String?, purpose: String) throws {
        let parent =
            path.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            ?? FileManager.default.temporaryDirectory
        ScratchDirectory.removeAbandoned(in: parent, purpose: purpose)
        url = parent.appendingPathComponent(".offline-sync-\(purpose)-\(UUID().uuidString)")
        var missing: [URL] = []
        var ancestor = parent.standardizedFileURL
        while !FileManager.default.fileExists(atPath: ancestor.path), ancestor.path != "/" {
            missing.append(ancestor)
            ancestor.deleteLastPathComponent()
        }
        createdParents = missing
        try StoreAccess.createDirectory(url, forStoreAt: path ?? url.path)
        lock = open(url.appendingPathComponent(ScratchDirectory.lockName).path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        // Marked only once locked: a process that locks an unmarked file knows nothing yet.
        if lock >= 0, flock(lock, LOCK_EX) == 0 { _ = write(lock, "in use\n", 7) }
    }

    /// Removes the scratch directories of `purpose` in `parent` whose maker is gone: their lock
    /// file is marked as in use and no process holds its lock.
    private static func removeAbandoned(in parent: URL, purpose: String) {
        let prefix = ".offline-sync-\(purpose)-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix(prefix) && UUID(uuidString: String(name.dropFirst(prefix.count))) != nil {
            let directory = parent.appendingPathComponent(name)
            let descriptor = open(directory.appendingPathComponent(lockName).path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var byte: UInt8 = 0
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, pread(descriptor, &byte, 1, 0) == 1 else { continue }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// `configuration` moved to a new subdirectory of its own, keeping the file name.
    /// A `postgres:` configuration gets a new schema, `offline_sync_scratch_<8 hex digits>_<n>`.
    func freshLocation(for configuration: StoreConfiguration) throws -> StoreConfiguration {
        guard let path = configuration.path else { return configuration }
        let number = counter.withLock { value in
            value += 1
            return value
        }
        if configuration.scheme == StoreScheme.postgres.name {
            let token = url.lastPathComponent.suffix(36).prefix(8).lowercased()
            let fresh = StoreConfiguration(
                scheme: configuration.scheme, path: path,
                options: configuration.options.filter { $0.name != "schema" } + [
                    StoreConfiguration.Option("schema", "offline_sync_scratch_\(token)_\(number)")
                ])
            let settings = try PostgresConnectionSettings(fresh)
            schemas.withLock { $0.append(settings) }
            return fresh
        }
        let directory = url.appendingPathComponent(String(number))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return configuration.relocated(
            to: directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path)
    }

    /// Moves the store at `temporary` (its file or directory and any sidecar files named after it,
    /// such as `-wal` or `-lock`) to `destination`. Checks every target first, so either all move or
    /// none does.
    static func moveStore(from temporary: String, to destination: String) throws {
        let source = URL(fileURLWithPath: temporary)
        let target = URL(fileURLWithPath: destination)
        let name = source.lastPathComponent
        let entries = try FileManager.default.contentsOfDirectory(atPath: source.deletingLastPathComponent().path)
            .filter { $0.hasPrefix(name) }
        let moves = entries.map { entry in
            (
                source.deletingLastPathComponent().appendingPathComponent(entry),
                target.deletingLastPathComponent().appendingPathComponent(
                    target.lastPathComponent + entry.dropFirst(name.count))
            )
        }
        for (_, to) in moves where FileManager.default.fileExists(atPath: to.path) {
            throw OfflineSyncError(.configuration, "\(to.path) already exists; remove it or choose another destination")
        }
        for (from, to) in moves.sorted(by: { $0.0.lastPathComponent.count > $1.0.lastPathComponent.count }) {
            try FileManager.default.moveItem(at: from, to: to)
        }
    }

    /// Deletes the directory and everything in it, drops the scratch schemas, and removes the
    /// directories created for it that are left empty (`rmdir` removes only empty ones).
    func remove() {
        for settings in schemas.withLock({ $0 }) {
            try? PostgresStore.dropSchema(settings)
        }
        try? FileManager.default.removeItem(at: url)
        if lock >= 0 { close(lock) }
        for directory in createdParents {
            guard rmdir(directory.path) == 0 else { break }
        }
    }
}
