import Synchronization

/// The sync engine for one local store and one remote: the operation queue, push, pull and
/// purge (Azure's `MSSyncContext` / `MobileServiceSyncContext`).
///
/// ```swift
/// let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todo])
/// let items = try context.table("todo")
/// let added = try items.insert(Item(id: "", values: ["text": "buy milk"]))
/// try await context.push()
/// try await items.pull(queryId: "all")
/// ```
///
/// ## Concurrency
///
/// `SyncContext` is a `Sendable` class rather than an actor. Local edits (``SyncTable``) are
/// synchronous and may come from any number of tasks at once: each one reads the item's queued
/// operation and writes the item and the operation inside **one** store transaction, and the
/// store serialises transactions, so the queue cannot be corrupted and an edit never waits for
/// the network. Push, pull and purge are `async` and run one at a time behind a first-come,
/// first-served gate held across their network waits (an actor would not do that: it interleaves
/// callers at every `await`). Use one context per store.
public final class SyncContext: Sendable {
    /// The local store (opened by the context).
    public let store: any LocalStore
    /// The remote table service.
    public let remote: any RemoteService
    /// The hook every pushed operation goes through.
    public let pushHandler: any PushHandler

    let queue: OperationQueue
    let gate = SyncGate()
    /// Where committed transactions are announced (change feeds, query observers).
    let changeHub = ChangeHub()
    /// Held around each write and its announcement, so change sets are announced in commit order.
    private let writeOrder = ReadWriteLock()

    /// Opens `store` with the app's `tables` plus ``SystemTables/all`` and prepares to sync
    /// them with `remote`. Declare app tables as synced (the default) so they carry the system
    /// properties.
    public init(
        store: any LocalStore, remote: any RemoteService, tables: [TableSchema],
        pushHandler: any PushHandler = DefaultPushHandler()
    ) throws {
        for table in tables {
            try Identifier.validateUserTable(table.name)
        }
        try store.open(schema: StoreSchema(tables + SystemTables.all))
        self.queue = OperationQueue(
            schema: try store.schema, attemptedThrough: try OperationQueue.attemptedThrough(in: store))
        self.store = store
        self.remote = remote
        self.pushHandler = pushHandler
        try queue.recoverInterruptedPush(in: store)
    }

    /// The app table `name`, which the store must declare.
    public func table(_ name: String) throws -> SyncTable {
        try Identifier.validateUserTable(name)
        guard try queue.schema.requireTable(name).synced else {
            throw OfflineSyncError(
                .invalidOperation,
                "table '\(name)' is declared local-only (synced: false); read and write it through the store, or declare it synced"
            )
        }
        return SyncTable(name: name, context: self)
    }

    /// The number of queued operations, of one table or of all.
    public func pendingOperationCount(table: String? = nil) throws -> Int {
        try store.count(SystemTables.operations, filter: table.map(SyncContext.tableFilter))
    }

    /// The queued operations in push order, of one table or of all.
    public func pendingOperations(table: String? = nil) throws -> [QueuedOperation] {
        try store.read(
            Query(
                table: SystemTables.operations, filter: table.map(SyncContext.tableFilter),
                orderBy: [SortKey(SystemTables.OperationColumn.sequence)])
        )
        .items.map(queue.decode)
    }

    /// The recorded operation errors in queue order, of one table or of all.
    public func operationErrors(table: String? = nil) throws -> [OperationError] {
        try store.read(
            Query(
                table: SystemTables.errors,
                filter: table.map { .comparison(.column(SystemTables.ErrorColumn.table), .eq, .literal(.string($0))) },
                orderBy: [SortKey(SystemTables.ErrorColumn.sequence)])
        )
        .items.map { try OperationError(row: $0, schema: queue.schema) }
    }

    /// Settles a recorded operation error (see ``ErrorResolution``). The operation must be
    /// unchanged since the error was recorded and not being pushed; otherwise this throws
    /// ``OfflineSyncError/Code-swift.struct/conflict`` and nothing changes.
    public func resolve(_ error: OperationError, _ resolution: ErrorResolution) throws {
        try write(.resolution) { transaction in
            guard
                let operation = try queue.operation(
                    table: error.table, itemId: error.itemId, slot: .primary, in: transaction),
                operation.id == error.operationId
            else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the operation of error '\(error.operationId)' is no longer queued; read operationErrors() again")
            }
            guard operation.version == error.operationVersion else {
                throw OfflineSyncError(
                    .conflict,
                    "item '\(error.itemId)' of '\(error.table)' was edited after its push failed (operation version \(operation.version), error recorded at \(error.operationVersion)); read operationErrors() again"
                )
            }
            guard !queue.inFlight.withLock({ $0.contains(operation.id) }) else {
                throw OfflineSyncError(
                    .conflict,
                    "the operation of item '\(error.itemId)' of '\(error.table)' is being pushed; resolve it after the push"
                )
            }
            try apply(resolution, to: operation, serverItem: error.serverItem, in: transaction)
        }
    }

    /// Closes the store. Change feeds and query observations of the context end (their
    /// iterators return `nil`).
    public func close() throws {
        changeHub.finishAll()
        try store.close()
    }

    /// Runs `body` as one store transaction and announces the app rows it changed to the change
    /// feeds and observers once the store has committed it (before returning). Every write of
    /// the context that can change an app table goes through here.
    ///
    /// - Parameter deferringObservers: wake observers only when the running push or pull ends
    ///   (``syncing(_:)``), not after this transaction; feeds get the change set at once either way.
    func write<Result>(
        _ origin: ChangeOrigin, deferringObservers: Bool = false, _ body: (any StoreTransaction) throws -> Result
    ) throws -> Result {
        // A write inside the body of another (a table's edit inside `write(_:)`'s body) would
        // wait for the lock its own caller holds.
        if SyncContext.writing === self {
            throw OfflineSyncError(
                .invalidOperation,
                "a write of this context was started inside the body of its write(_:); make the edits through the WriteTransaction the body is given"
            )
        }
        return try writeOrder.exclusive {
            let record = RecordingTransaction.Record(keepsIds: changeHub.hasFeeds)
            let result = try store.write { transaction in
                record.reset()  // a store may run the body again (a memory-mapped one after growing its map)
                return try body(RecordingTransaction(base: transaction, record: record))
            }
            changeHub.publish(
                origin, tables: record.tables, changedIds: record.changedIds, deferringObservers: deferringObservers)
            return result
        }
    }

    /// The context whose ``write(_:)`` body the current task is running, if any.
    @TaskLocal static var writing: SyncContext?

    /// Runs a push, pull or purge behind the gate; observers its writes deferred are woken when
    /// it ends, however it ends.
    func syncing<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await gate.run {
            defer { changeHub.releaseHeld() }
            return try await body()
        }
    }

    /// Applies a resolution to a queued operation (and a follow-up queued while it was pushed).
    func apply(
        _ resolution: ErrorResolution, to operation: QueuedOperation, serverItem: Item?,
        in transaction: any StoreTransaction
    ) throws {
        queue.changing()
        let followUpKey = OperationQueue.key(table: operation.table, itemId: operation.itemId, slot: .followUp)
        switch resolution {
        case .cancelAndDiscardItem:
            try transaction.delete(ids: [operation.id, followUpKey], from: SystemTables.operations)
            try transaction.delete(ids: [operation.id], from: SystemTables.errors)
            try transaction.delete(ids: [operation.itemId], from: operation.table)
        case .cancelAndTakeServerItem(let item):
            try transaction.delete(ids: [operation.id, followUpKey], from: SystemTables.operations)
            try transaction.delete(ids: [operation.id], from: SystemTables.errors)
            if let server = item ?? serverItem, !server.isDeleted {
                guard server.id == operation.itemId else {
                    throw OfflineSyncError(
                        .invalidValue, "the server item given to resolve '\(operation.itemId)' has id '\(server.id)'")
                }
                try transaction.upsert([server], into: operation.table, origin: .server)
            } else {
                try transaction.delete(ids: [operation.itemId], from: operation.table)
            }
        case .keepAndRetry(let item):
            guard item.id == operation.itemId else {
                throw OfflineSyncError(
                    .invalidValue, "the item given to retry '\(operation.itemId)' has id '\(item.id)'")
            }
            var kept = operation
            kept.version += 1
            if operation.kind == .delete {
                kept.item = item
            } else {
                try transaction.upsert([item], into: operation.table, origin: .local)
            }
            try transaction.upsert([kept.row()], into: SystemTables.operations, origin: .local)
            try transaction.delete(ids: [operation.id], from: SystemTables.errors)
            try queue.settle(kept, in: transaction)
        }
    }

    static func tableFilter(_ table: String) -> FilterExpression {
        .comparison(.column(SystemTables.OperationColumn.table), .eq, .literal(.string(table)))
    }
}
