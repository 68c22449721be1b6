import OfflineSync
import OfflineSyncService

/// The store `serve` serves, checked after every call against the file it opened.
///
/// A process keeps writing to the file it opened, even when another process moves another file
/// over its path or deletes it (a restore from a backup, a deploy script): the writes go on into a
/// file that nothing will open again, and a server would acknowledge them and lose them at its
/// next start. So after each read, lookup and committed write this guard checks that the path
/// still names the file opened (device and inode). When it does not, the call throws
/// ``Replaced``, which `TableService` answers with 503 and `Retry-After`: a client keeps its
/// write queued and sends it again to the server restarted on the file now at the path.
/// `onReplaced` runs once then (`serve` stops itself, so that a supervisor starts it again).
///
/// The check is one `stat` per call, about a microsecond against the tens of a request.
final class StoreFileGuard: LocalStore, Sendable {
    /// The error of every call once the file was replaced or deleted.
    struct Replaced: StoreUnavailableError, CustomStringConvertible {
        let file: String
        let deleted: Bool
        var isStoreUnavailable: Bool { true }
        var description: String {
            "the store file \(file) was \(deleted ? "deleted" : "replaced by another file") while this server had it open; requests are answered 503 from then on (writes would go to the old file, which nothing reads again), so start offline-sync serve again to serve the file now at that path"
        }
    }

    let base: any LocalStore
    /// The file whose identity is checked: the store's file, or LMDB's `data.mdb`.
    let file: String
    private let opened = Locked<FileKind.Identity?>(nil)
    private let replaced = Locked<Replaced?>(nil)
    private let onReplaced: @Sendable (Replaced) -> Void

    /// Guards `base`, open already, over `file`; `onReplaced` runs once, at the first call that
    /// finds the file replaced or deleted.
    init(_ base: any LocalStore, file: String, onReplaced: @escaping @Sendable (Replaced) -> Void) {
        self.base = base
        self.file = file
        self.onReplaced = onReplaced
        opened.withLock { $0 = FileKind.status(of: file).status?.identity }
    }

    /// The replacement found, if any.
    var replacement: Replaced? { replaced.withLock { $0 } }

    /// Throws ``Replaced`` when `file` no longer names the file opened.
    private func check() throws {
        guard let identity = opened.withLock({ $0 }) else { return }
        let now = FileKind.status(of: file).status?.identity
        guard now != identity else { return }
        let error = Replaced(file: file, deleted: now == nil)
        let first = replaced.withLock { found in
            guard found == nil else { return false }
            found = error
            return true
        }
        if first { onReplaced(error) }
        throw error
    }

    var info: StoreInfo { base.info }
    var reservedNamePrefixes: [String] { base.reservedNamePrefixes }
    var isConfinedToInstance: Bool { base.isConfinedToInstance }

    func storedSchemaChanged() throws -> Bool {
        let changed = try base.storedSchemaChanged()
        try check()
        return changed
    }

    var schema: StoreSchema { get throws { try base.schema } }

    func open(schema: StoreSchema) throws {
        try base.open(schema: schema)
        opened.withLock { $0 = FileKind.status(of: file).status?.identity }
    }

    func read(_ query: Query) throws -> QueryResult {
        let result = try base.read(query)
        try check()
        return result
    }

    func lookup(table: String, id: String) throws -> Item? {
        let item = try base.lookup(table: table, id: id)
        try check()
        return item
    }

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        let result = try base.write(body)
        try check()
        return result
    }

    func close() throws { try base.close() }
}
