/// The sync state a store holds in its system tables — the operation queue, the operation errors
/// and the delta tokens — read without a remote and without changing anything, for tools that
/// inspect a store (the `offline-sync inspect` command).
///
/// A ``SyncContext`` is the way to act on this state; this is only a snapshot of it.
public struct SyncState: Sendable, Hashable {
    /// The delta token of one incremental pull query.
    public struct Token: Sendable, Hashable {
        /// The app table pulled.
        public var table: String
        /// The query id given to the pull.
        public var queryId: String
        /// How far the pull has come.
        public var token: DeltaToken
    }

    /// The queued operations, in push order.
    public var operations: [QueuedOperation]
    /// The recorded operation errors, in queue order.
    public var errors: [OperationError]
    /// Every delta token, by table and query id.
    public var deltaTokens: [Token]

    /// Reads the state of an open store. A store that was never used for sync (it lacks the
    /// system tables) has no operations, errors or tokens.
    public init(of store: any LocalStore) throws {
        let schema = try store.schema
        func rows(_ table: String, orderedBy column: String) throws -> [Item] {
            guard schema.table(named: table) != nil else { return [] }
            return try store.read(Query(table: table, orderBy: [SortKey(column)])).items
        }
        let attemptedThrough = try OperationQueue.attemptedThrough(in: store)
        operations = try rows(SystemTables.operations, orderedBy: SystemTables.OperationColumn.sequence)
            .map { try QueuedOperation(row: $0, schema: schema, attemptedThrough: attemptedThrough) }
        errors = try rows(SystemTables.errors, orderedBy: SystemTables.ErrorColumn.sequence)
            .map { try OperationError(row: $0, schema: schema) }
        deltaTokens = try rows(SystemTables.config, orderedBy: "id").compactMap { row in
            let parts = row.id.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "deltaToken", let token = DeltaToken(row: row) else { return nil }
            return Token(table: String(parts[1]), queryId: String(parts[2]), token: token)
        }
    }

    /// The number of queued operations of a table.
    public func pendingCount(table: String) -> Int {
        operations.count { $0.table == table }
    }

    /// The number of recorded errors of a table.
    public func errorCount(table: String) -> Int {
        errors.count { $0.table == table }
    }
}
