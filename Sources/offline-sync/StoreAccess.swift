import Foundation
import Logging
import OfflineSync
import OfflineSyncPostgres

/// Opening stores named on the command line.
enum StoreAccess {
    /// Opens a store that must already exist (its path must exist), declaring nothing new, and
    /// returns it with its stored schema. `memory:` always opens (empty).
    static func openExisting(_ configuration: StoreConfiguration, logger: Logger) throws -> (
        store: any LocalStore, schema: StoreSchema
    ) {
        if configuration.scheme == StoreScheme.postgres.name {
            let settings = try PostgresConnectionSettings(configuration)
            guard try PostgresStore.storeExists(settings) else {
                throw OfflineSyncError(
                    .configuration,
                    "no store in the schema '\(settings.schema)' of \(settings); check the URL, or create one with 'offline-sync import' or 'offline-sync migrate'"
                )
            }
        }
        if let path = filePath(of: configuration), let file = dataFile(of: configuration) {
            let (status, failure) = FileKind.status(of: file)
            guard let status else {
                if FileKind.isPermissionDenied(failure) {
                    throw OfflineSyncError(
                        .configuration,
                        "cannot reach the store at \(path): permission denied on a directory of its path; run as a user who may read it, or fix the permissions"
                    )
                }
                throw OfflineSyncError(
                    .configuration,
                    "no store at \(path) (\(configuration.scheme):\(file == path ? "" : " no data.mdb in it")); check the path, or create one with 'offline-sync import' or 'offline-sync migrate'"
                )
            }
            guard status.isRegularFile else {
                throw OfflineSyncError(.configuration, "\(file) is \(status.kind), not a store file; check the path")
            }
            guard FileKind.isReadable(file) else {
                throw OfflineSyncError(
                    .configuration,
                    "cannot read the store file \(file): permission denied; run as a user who may read it, or fix its permissions"
                )
            }
            // SQLite would take an empty file for a new database and answer "no tables".
            if status.size == 0 {
                throw OfflineSyncError(
                    .storage,
                    "the store file \(file) is empty (0 bytes), so it holds no store: it was truncated or never written; restore it from a backup, or delete it and pull the data again"
                )
            }
        }
        let store = try open(configuration, schema: StoreSchema([]), logger: logger)
        return (store, try store.schema)
    }

    /// Makes, opens (creating it if needed) and returns a store, declaring `schema`.
    static func open(_ configuration: StoreConfiguration, schema: StoreSchema, logger: Logger) throws -> any LocalStore
    {
        logger.debug("opening \(configuration)")
        if let path = filePath(of: configuration) {
            try createDirectory(URL(fileURLWithPath: path).deletingLastPathComponent(), forStoreAt: path)
        }
        let store = try StoreRegistry.shared.makeStore(configuration)
        try store.open(schema: schema)
        logger.debug("opened \(configuration)", metadata: ["backend": "\(store.info.backend)"])
        return store
    }

    /// Creates `directory` and the directories above it as needed for the store at `path`, or
    /// throws an error naming the store and what is in the way (a file where a directory should
    /// be, a directory that cannot be written …).
    static func createDirectory(_ directory: URL, forStoreAt path: String) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw OfflineSyncError(
                .configuration,
                "cannot create the store at \(path): \(obstacle(to: directory, error)); choose a path in a writable directory"
            )
        }
    }

    /// Why `directory` could not be created, in words: the nearest existing path above it is a
    /// file, or the system's reason (`errno`) for refusing to create a directory in it.
    private static func obstacle(to directory: URL, _ error: any Error) -> String {
        var existing = directory.standardizedFileURL
        var isDirectory: ObjCBool = false
        while !FileManager.default.fileExists(atPath: existing.path, isDirectory: &isDirectory), existing.path != "/" {
            existing.deleteLastPathComponent()
        }
        if !isDirectory.boolValue {
            return "\(existing.path) is a file, not a directory"
        }
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let code = underlying?.domain == NSPOSIXErrorDomain ? underlying?.code : nil
        let reason = code.map { String(cString: strerror(Int32($0))).lowercased() } ?? "it was refused"
        return existing.path == directory.standardizedFileURL.path
            ? "the directory \(existing.path) cannot be used (\(reason))"
            : "no directory can be created in \(existing.path) (\(reason))"
    }

    /// The file or directory of a store, or `nil` for a store that is not a file: `memory:`, and
    /// `postgres:`, whose "path" is a server address (its stores are schemas in a database).
    static func filePath(of configuration: StoreConfiguration) -> String? {
        configuration.scheme == StoreScheme.postgres.name ? nil : configuration.path
    }

    /// The file that holds a file store's data: the path itself, or for LMDB (a directory, whose
    /// other directories would become empty environments if opened) its `data.mdb`.
    static func dataFile(of configuration: StoreConfiguration) -> String? {
        filePath(of: configuration).map { configuration.scheme == "lmdb" ? $0 + "/data.mdb" : $0 }
    }

    /// The error for a store whose reads contradict each other (`what`), naming it and what to do.
    static func damaged(_ configuration: StoreConfiguration, _ what: String) -> OfflineSyncError {
        OfflineSyncError(
            .storage,
            "the store \(configuration) is damaged: \(what); nothing it read can be trusted to be whole, restore it from a backup, or delete it and pull the data again"
        )
    }

    /// `error` rethrown, when it is a value the store holds but cannot write out (JSON text
    /// damaged in the file, say), as an error that names the store and how to repair the item:
    /// write it again with `import`, which upserts by id.
    static func rethrowingStoredValueErrors<T>(
        _ configuration: StoreConfiguration, table: String, _ body: () throws -> T
    ) throws -> T {
        do {
            return try body()
        } catch let error as OfflineSyncError where error.code == .invalidValue {
            throw OfflineSyncError(
                .invalidValue,
                "the store \(configuration) holds a value that cannot be written out: \(error.message); write that item of table '\(table)' again with a valid value (offline-sync import upserts by id) or delete it, then retry"
            )
        }
    }

    /// The user tables of a schema (system tables, named `__…`, excluded), by name.
    static func userTables(_ schema: StoreSchema) -> [TableSchema] {
        schema.tables.filter { !$0.isSystem }.sorted { $0.name < $1.name }
    }

    /// The declared table, or an error listing the tables there are.
    static func table(_ name: String, in schema: StoreSchema, configuration: StoreConfiguration) throws -> TableSchema {
        if let table = schema.table(named: name) { return table }
        let known = userTables(schema).map(\.name)
        let list = known.isEmpty ? "it has no tables yet" : "its tables: " + known.joined(separator: ", ")
        throw OfflineSyncError(.unknownTable, "the store \(configuration) has no table '\(name)'; \(list)")
    }

    /// Every item of a table in id order, read in pages of `pageSize` (each page starts after the
    /// last id of the previous one, so no page rescans the ones before it).
    ///
    /// Throws when the store answers ids out of order or twice, which a damaged index (an id
    /// whose bytes changed on disk) does: paging would skip or repeat items.
    static func forEachPage(
        of table: String, in store: any LocalStore, configuration: StoreConfiguration, pageSize: Int = 1000,
        _ body: ([Item]) throws -> Void
    ) throws {
        var after: String?
        while true {
            let filter = after.map { FilterExpression.comparison(.column("id"), .gt, .literal(.string($0))) }
            let page = try store.read(Query(table: table, filter: filter, orderBy: [SortKey("id")], top: pageSize))
                .items
            guard let last = page.last else { return }
            var previous = after
            for item in page {
                if let previous, !previous.utf8.lexicographicallyPrecedes(item.id.utf8) {
                    throw damaged(configuration, "table '\(table)' answered its ids out of order")
                }
                previous = item.id
            }
            try body(page)
            if page.count < pageSize { return }
            after = last.id
        }
    }
}
