/// A local table store: the one thing a backend implements.
///
/// OfflineSync keeps every byte of app data and every piece of sync state (the operation queue,
/// operation errors, delta tokens) in a `LocalStore`. The sync logic is written once in the core
/// against this protocol, so a backend only stores tables. It is the counterpart of Azure Mobile
/// Apps' `MSSyncContextDataSource` (iOS) and `IMobileServiceLocalStore` (.NET).
///
/// ## Rules every backend must follow
///
/// 1. **Declare before use.** ``open(schema:)`` receives every table the caller will use. Using an
///    undeclared table throws ``OfflineSyncError/Code-swift.struct/unknownTable``. Reopening with a
///    schema that adds columns, indexes or tables widens the stored schema (existing rows read the
///    new columns as null, indexes added cover the rows already stored); tables, columns and
///    indexes not mentioned on reopen are kept, by every later open too; a column never changes
///    type: a reopen declaring another type throws ``OfflineSyncError/Code-swift.struct/invalidSchema``
///    whether the table holds rows or not, and changes nothing. ``schema`` answers the stored,
///    widened schema, as this instance last read it: when another process or instance widens
///    the same store, ``storedSchemaChanged()`` says so, and reads and writes on the older copy
///    neither fail nor drop the columns they do not know.
/// 2. **Values are checked by the core.** Every upsert passes each item through
///    ``TableSchema/normalize(_:origin:)`` and stores exactly what it returns, so value conversions
///    and unknown-column handling (an error for local writes, dropped for server writes) are the
///    same on every backend. An upsert **replaces** the whole row, whatever its origin: a column
///    absent from the item, or null in it, reads back as null, even where the row had a value.
/// 3. **Values round-trip exactly**, in indexed and unindexed columns alike: `-0.0` keeps its
///    sign, Int64 extremes, 1 MiB strings, any Unicode byte for byte (a leading U+FEFF,
///    characters outside the BMP, no normalisation, no trimming, no cut in indexed columns),
///    JSON text as written (spacing, key order, escapes), dates at millisecond precision before
///    and after 1970.
/// 4. **Queries mean what ``QueryEvaluator`` says.** Filter semantics, null handling, ordering
///    (nulls first ascending, ties broken by `id` ascending), `skip`/`top` and total counts must
///    agree with the reference evaluator row for row, at any size: `top`, `skip`, `in` lists and
///    id lists have no limit a caller can reach (none at 1,000, 999 or 32,766). A query is
///    validated with ``Query/validate(against:)`` before it runs.
/// 5. **Missing ids are not errors**: ``lookup(table:id:)`` returns `nil`; deleting a missing id
///    does nothing.
/// 6. **Writes are atomic transactions across tables.** Everything done through the
///    ``StoreTransaction`` handed to ``write(_:)`` commits together when the closure returns, and
///    nothing of it remains when the closure throws (the error is rethrown); an operation's error
///    that the closure catches rolls nothing back. Reads inside the closure (`read`, `lookup`,
///    `insertNew` and `delete(matching:)`) see the transaction's own writes and deletes, in
///    every table it wrote. Until `write` returns, no read outside the closure, on any thread,
///    sees any of them. Transactions are serialised: two concurrent `write` calls never
///    interleave, so read-modify-write inside one closure is safe. An
///    acknowledged (returned) write survives a crash of the process unless the backend was
///    configured for relaxed durability.
/// 7. **Errors, not crashes.** Bad names (including names starting with one of the store's
///    ``reservedNamePrefixes``, checked at ``open(schema:)`` with
///    ``StoreSchema/validate(reservedPrefixes:)``), bad values, unknown tables and storage
///    failures throw ``OfflineSyncError`` (or a backend error type conforming to `Error`) with a
///    message naming the table, column or id at fault. No input may crash the process.
/// 8. **Thread safety.** A store is `Sendable`: any method may be called from any thread or task,
///    also while another thread is inside ``write(_:)``: the call waits or proceeds, it never
///    fails because of the other thread. Do not call the store itself from inside a
///    ``write(_:)`` closure; use the transaction.
///
/// ## Why synchronous
///
/// Store calls take microseconds (a lookup, a page of upserts) and run on the caller's thread
/// without suspending; making them `async` would add an executor hop and an allocation per call,
/// which costs more than the work itself on the hot pull path, and would let a transaction span a
/// suspension point, holding the single writer lock across network waits. The sync engine is
/// `async` where it waits for the network and calls the store synchronously in between.
public protocol LocalStore: AnyObject, Sendable {
    /// The backend's name and the versions and settings worth showing to a person.
    var info: StoreInfo { get }

    /// Name prefixes the backend keeps for itself (compared in any letter case), e.g. the prefix of
    /// a database's internal tables: ``open(schema:)`` rejects tables, columns and indexes named
    /// with one (rule 7). Empty by default.
    var reservedNamePrefixes: [String] { get }

    /// The stored schema (every table ever declared, widened by each open).
    /// Throws ``OfflineSyncError/Code-swift.struct/notOpen`` when the store is closed.
    var schema: StoreSchema { get throws }

    /// Opens the store, creating it if needed, and declares or widens `schema` (rule 1).
    /// Opening a store that is already open throws.
    func open(schema: StoreSchema) throws

    /// Answers a query (rule 4).
    func read(_ query: Query) throws -> QueryResult

    /// The row with this id, or `nil` when there is none (rule 5).
    func lookup(table: String, id: String) throws -> Item?

    /// Runs `body` as one atomic, serialised transaction (rule 6) and returns its result.
    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result

    /// Closes the store, releasing files and handles. Closing a closed store does nothing.
    /// The same instance can be opened again.
    func close() throws

    /// `true` when this instance is the only way to the store's data, so nothing else (another
    /// process, another instance over the same file or database) can write it: an in-memory store.
    /// The server's table service (module `OfflineSyncService`) then keeps its write clock in the process; otherwise it reads the newest
    /// stored `updatedAt` inside each write transaction. Default `false`.
    var isConfinedToInstance: Bool { get }

    /// `true` when the schema stored at the store's location is no longer ``schema``: another
    /// process or store instance over the same file or database declared a table or widened one
    /// since this instance opened (its own ``open(schema:)`` calls do not count). Reopening the
    /// store (``close()``, then ``open(schema:)`` with an empty schema) reads the stored schema.
    /// The table service asks before each call of a request when several processes may serve the
    /// store, so that none of them answers without a column or table another one added.
    /// A backend that can bring ``schema`` up to date in place (PostgreSQL) does so here and
    /// returns `false`. Throws ``OfflineSyncError/Code-swift.struct/notOpen`` when the store is
    /// closed.
    ///
    /// Default `false`: right for a store nothing else can change (``isConfinedToInstance``).
    func storedSchemaChanged() throws -> Bool
}

/// The operations available inside ``LocalStore/write(_:)``.
///
/// A transaction is valid only during the closure it was handed to; keep no reference to it.
public protocol StoreTransaction {
    /// Answers a query, seeing this transaction's own writes.
    func read(_ query: Query) throws -> QueryResult

    /// The row with this id as this transaction sees it, or `nil`.
    func lookup(table: String, id: String) throws -> Item?

    /// Inserts or replaces rows (normalised by ``TableSchema/normalize(_:origin:)``).
    func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws

    /// Inserts the rows whose ids the table does not hold yet (normalised like
    /// ``upsert(_:into:origin:)``) and leaves the rows already there unchanged; returns the ids
    /// that were already there, in the order of `items` (an id given twice counts as there the
    /// second time). An undeclared table throws ``OfflineSyncError/Code-swift.struct/unknownTable``
    /// even when `items` is empty, as ``upsert(_:into:origin:)`` does. A row that normalisation
    /// refuses throws when its id is new; when its id is already there, the row is not written,
    /// and whether it is checked all the same is left to the backend (the SQL and LMDB backends
    /// encode every row first and throw; the default implementation checks only the rows it
    /// inserts). A backend that inserts and detects an existing key in one step (an SQL `INSERT`
    /// and its primary-key conflict, LMDB's `MDB_NOOVERWRITE`) implements it without the lookup
    /// per row of the default implementation.
    func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String]

    /// Deletes the rows with these ids; missing ids are ignored.
    func delete(ids: [String], from table: String) throws

    /// Deletes the rows the query would return (filter, ordering, `skip` and `top` all apply)
    /// and returns how many were deleted.
    @discardableResult
    func delete(matching query: Query) throws -> Int
}

extension LocalStore {
    /// No reserved prefixes.
    public var reservedNamePrefixes: [String] { [] }
    /// `false`: a store is assumed reachable by other processes or instances (a file, a database).
    public var isConfinedToInstance: Bool { false }
    /// `false`: see the requirement for which stores this is right for.
    public func storedSchemaChanged() throws -> Bool { false }

    /// Upserts rows in a transaction of their own.
    public func upsert(_ items: [Item], into table: String, origin: WriteOrigin = .local) throws {
        try write { try $0.upsert(items, into: table, origin: origin) }
    }

    /// Deletes rows by id in a transaction of their own.
    public func delete(ids: [String], from table: String) throws {
        try write { try $0.delete(ids: ids, from: table) }
    }

    /// Deletes the rows a query returns in a transaction of their own.
    @discardableResult
    public func delete(matching query: Query) throws -> Int {
        try write { try $0.delete(matching: query) }
    }

    /// The number of rows in a table.
    public func count(_ table: String, filter: FilterExpression? = nil) throws -> Int {
        try read(Query(table: table, filter: filter, top: 0, includeTotalCount: true)).totalCount ?? 0
    }
}

/// What a store tells about itself: backend, location, library versions, settings.
public struct StoreInfo: Sendable, Hashable {
    /// One named fact, e.g. `("library version", "3.40.1")`.
    public struct Property: Sendable, Hashable {
        /// What the fact is.
        public var name: String
        /// Its value as text.
        public var value: String

        /// Creates a property.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The backend's scheme name, e.g. `memory`.
    public var backend: String
    /// Where the data lives (a path), or `nil` for memory.
    public var location: String?
    /// Versions and settings, in display order.
    public var properties: [Property]

    /// Creates store information.
    public init(backend: String, location: String? = nil, properties: [Property] = []) {
        self.backend = backend
        self.location = location
        self.properties = properties
    }
}
