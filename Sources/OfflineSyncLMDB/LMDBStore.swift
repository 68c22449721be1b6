public import OfflineSync
import Synchronization

/// A `LocalStore` kept in an LMDB environment: a memory-mapped B+tree file with
/// one writer at a time and lock-free readers.
///
/// ```swift
/// let store = try LMDBStore(path: "/var/lib/app/store", options: .init(maximumMapSize: 1 << 30))
/// try store.open(schema: StoreSchema([TableSchema("todo", columns: [Column("text", .string)])]))
/// try store.upsert([Item(id: "1", values: ["text": "milk"])], into: "todo")
/// ```
///
/// `path` is a directory (created when missing) holding `data.mdb` and `lock.mdb`; the `mdb_stat`
/// and `mdb_dump` tools read it. The layout of tables, indexes and records is described in the
/// module's documentation.
///
/// - Writes run one at a time on the calling thread, all-or-nothing across tables. When the map
///   is full the store grows it and reruns the write closure from the start, so a closure must
///   not have effects outside the transaction that cannot be repeated.
/// - Reads run concurrently with each other and with the writer, each on a consistent snapshot.
/// - One environment may be open once per process: a second `LMDBStore` on the same directory
///   fails to open with ``LMDBError/Kind/alreadyOpen`` until the first is closed.
/// - Several processes may open the same environment. When one declares a table or widens one,
///   the others adopt the stored schema at their next write transaction, and at a read that
///   meets a row with the new columns or names the new table or columns;
///   ``storedSchemaChanged()`` tells without reading anything else.
public final class LMDBStore: LocalStore {
    /// The environment directory.
    public let path: String
    /// The map-size and durability settings.
    public let options: Options

    private struct Opened {
        let environment: LMDBEnvironment
        let catalog: Catalog
    }

    private let state = Locked<Opened?>(nil)

    /// Creates a store for the environment in directory `path`; nothing is touched until
    /// ``open(schema:)``. Throws when the options are inconsistent.
    public init(path: String, options: Options = Options()) throws {
        try options.validate(path: path)
        self.path = path
        self.options = options
    }

    public var info: StoreInfo {
        var properties = [
            StoreInfo.Property("LMDB version", LMDBEnvironment.libraryVersion),
            StoreInfo.Property("durability", options.durability.rawValue),
            StoreInfo.Property("maximum map size", String(options.maximumMapSize)),
        ]
        if let mapSize = state.withLock({ $0?.environment })?.mapSize {
            properties.insert(StoreInfo.Property("map size", String(mapSize)), at: 1)
        }
        return StoreInfo(backend: "lmdb", location: path, properties: properties)
    }

    public var schema: StoreSchema {
        get throws { try opened().catalog.schema }
    }

    public func open(schema: StoreSchema) throws {
        try schema.validate()
        try state.withLock { state in
            guard state == nil else {
                throw OfflineSyncError(
                    .invalidOperation, "the LMDB store at '\(path)' is already open; close it before opening it again")
            }
            let environment = try LMDBEnvironment.open(path: path, options: options)
            do {
                // Reopening with nothing new to declare writes nothing: the catalog is read in a
                // read-only transaction, without taking the writer lock.
                let catalog =
                    try environment.readCommitting { try Catalog.existing(declaring: schema, in: $0) }
                    ?? environment.write { try Catalog.declare(schema, in: $0) }
                state = Opened(environment: environment, catalog: catalog)
            } catch {
                environment.close()
                throw error
            }
        }
    }

    public func read(_ query: Query) throws -> QueryResult {
        try withCurrentCatalog { opened in
            let layout = try opened.catalog.table(query.table)
            return try opened.environment.read { try TableReader(context: $0, layout: layout).run(query) }
        }
    }

    public func lookup(table: String, id: String) throws -> Item? {
        try withCurrentCatalog { opened in
            let layout = try opened.catalog.table(table)
            return try opened.environment.read { try TableReader(context: $0, layout: layout).lookup(id) }
        }
    }

    /// A write transaction first checks that the stored schema is still the one this store read
    /// (another process or store instance may have widened it since): if not, the transaction
    /// works on the stored schema, which the store adopts once it commits. So a write never
    /// rewrites a row without the columns another process added.
    public func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        let opened = try opened()
        var adopted: Catalog?
        let result = try opened.environment.write { context in
            let catalog = try opened.catalog.current(in: context)
            adopted = catalog === opened.catalog ? nil : catalog
            let transaction = LMDBTransaction(context: context, catalog: catalog)
            defer { transaction.finish() }
            return try body(transaction)
        }
        if let adopted { adopt(adopted, over: opened) }
        return result
    }

    /// `true` when another process or store instance declared or widened a table since this
    /// store read the schema: one read of the `meta` sub-database.
    public func storedSchemaChanged() throws -> Bool {
        try LMDBStore.schemaChanged(under: opened())
    }

    /// `true` when the environment of `opened` no longer stores the schema of its catalog.
    private static func schemaChanged(under opened: Opened) throws -> Bool {
        try opened.environment.read { try !opened.catalog.isCurrent(in: $0) }
    }

    public func close() throws {
        let environment = state.withLock { state in
            defer { state = nil }
            return state?.environment
        }
        environment?.close()
    }

    private func opened() throws -> Opened {
        guard let opened = state.withLock({ $0 }) else { throw LMDBEnvironment.notOpen(path) }
        return opened
    }

    /// `body`'s result with the open store; when it fails the way a schema that another process
    /// or store instance widened makes it fail (a record with columns this store does not know,
    /// a table or column it has not declared) and the stored schema did change, the store
    /// adopts the stored schema and runs `body` once more. Nothing is checked when `body`
    /// succeeds, so reads cost nothing more.
    private func withCurrentCatalog<Result>(_ body: (Opened) throws -> Result) throws -> Result {
        let opened = try opened()
        do {
            return try body(opened)
        } catch let error where LMDBStore.mayComeFromAWiderSchema(error) {
            // Checked in a read transaction first: a damaged record in an unchanged store (or a
            // store this process cannot write) keeps its own error.
            guard (try? LMDBStore.schemaChanged(under: opened)) == true,
                let catalog = try? opened.environment.write({ try opened.catalog.current(in: $0) }),
                catalog !== opened.catalog
            else { throw error }
            return try body(adopt(catalog, over: opened))
        }
    }

    private static func mayComeFromAWiderSchema(_ error: any Error) -> Bool {
        if let error = error as? LMDBError { return error.kind == .corruptRecord }
        if let error = error as? OfflineSyncError { return [.unknownTable, .unknownColumn].contains(error.code) }
        return false
    }

    /// Makes `catalog`, read from the environment after another process changed its schema,
    /// the store's catalog (unless the store was closed or reopened meanwhile).
    @discardableResult
    private func adopt(_ catalog: Catalog, over opened: Opened) -> Opened {
        let adopted = Opened(environment: opened.environment, catalog: catalog)
        state.withLock { state in
            if state?.environment === opened.environment { state = adopted }
        }
        return adopted
    }
}
