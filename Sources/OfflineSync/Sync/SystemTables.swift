/// The tables OfflineSync keeps next to the app's tables: the operation queue, the operation
/// errors and the configuration (delta tokens).
///
/// They are declared with the same ``TableSchema`` mechanism as app tables and stored like any
/// table, so every backend holds them without special code. Their names start with `__`, which
/// app tables may not use. ``SyncContext`` opens the store with the app's tables plus
/// ``all``; their rows are written only by the sync logic.
public enum SystemTables {
    /// The operation queue: one row per pending operation.
    public static let operations = "__operations"
    /// The operation errors: one row per operation whose last push failed.
    public static let errors = "__errors"
    /// Configuration values: delta tokens (key `deltaToken|{table}|{queryId}`), the last
    /// operation sequence number handed out (key `operationSequence`) and the highest sequence
    /// number a push has begun sending (key `operationsAttemptedThrough`; every operation at or
    /// below it counts as ``OperationState/attempted``).
    public static let config = "__config"

    /// Columns of ``operations``.
    enum OperationColumn {
        /// The position in the global queue (integer, strictly increasing across tables).
        static let sequence = "sequence"
        /// `insert`, `update` or `delete`.
        static let kind = "kind"
        /// `pending` or `attempted` (an operation at or below the attempted mark kept in
        /// ``SystemTables/config`` is attempted whatever this says).
        static let state = "state"
        /// The app table the operation belongs to.
        static let table = "tableName"
        /// The id of the item it changes.
        static let itemId = "itemId"
        /// For a delete, the deleted item (JSON, read back with the table's declared types).
        static let item = "item"
        /// Bumped whenever a later edit is collapsed into the operation.
        static let version = "version"
        /// When the operation was first queued.
        static let createdAt = "createdAt"
    }

    /// Columns of ``errors`` (the row id is the operation's row id).
    enum ErrorColumn {
        static let sequence = "operationSequence"
        static let version = "operationVersion"
        static let kind = "kind"
        static let table = "tableName"
        static let itemId = "itemId"
        static let status = "status"
        static let reason = "reason"
        static let message = "message"
        static let item = "item"
        static let serverItem = "serverItem"
        static let createdAt = "createdAt"
    }

    /// Columns of ``config`` (the row id is the key).
    enum ConfigColumn {
        /// The value as text (a delta token is an ISO 8601 date).
        static let value = "value"
        /// For a delta token, the id of the last item pulled at that date (the keyset cursor).
        static let itemId = "itemId"
    }

    /// The declaration of the operation queue, with an index on the sequence (push reads in
    /// that order).
    ///
    /// No index on (table, item id): an item's operations are found by their row ids (see
    /// `OperationQueue`), and the reads by table alone (counting, listing and purging one
    /// table's operations) are rare and read a queue that a push keeps short. An index there
    /// cost a B-tree entry (an LMDB put) on every local edit. Stores created before keep the
    /// index they have (a reopen never drops one).
    public static let operationsSchema = TableSchema(
        operations,
        columns: [
            Column(OperationColumn.sequence, .integer),
            Column(OperationColumn.kind, .string),
            Column(OperationColumn.state, .string),
            Column(OperationColumn.table, .string),
            Column(OperationColumn.itemId, .string),
            Column(OperationColumn.item, .json),
            Column(OperationColumn.version, .integer),
            Column(OperationColumn.createdAt, .date),
        ],
        indexes: [
            TableIndex("operations_sequence", on: [OperationColumn.sequence])
        ], synced: false)

    /// The declaration of the operation errors.
    public static let errorsSchema = TableSchema(
        errors,
        columns: [
            Column(ErrorColumn.sequence, .integer),
            Column(ErrorColumn.version, .integer),
            Column(ErrorColumn.kind, .string),
            Column(ErrorColumn.table, .string),
            Column(ErrorColumn.itemId, .string),
            Column(ErrorColumn.status, .integer),
            Column(ErrorColumn.reason, .string),
            Column(ErrorColumn.message, .string),
            Column(ErrorColumn.item, .json),
            Column(ErrorColumn.serverItem, .json),
            Column(ErrorColumn.createdAt, .date),
        ],
        indexes: [
            TableIndex("errors_table", on: [ErrorColumn.table])
        ], synced: false)

    /// The declaration of the configuration table.
    public static let configSchema = TableSchema(
        config,
        columns: [
            Column(ConfigColumn.value, .string),
            Column(ConfigColumn.itemId, .string),
        ], synced: false)

    /// The three system tables.
    public static let all: [TableSchema] = [operationsSchema, errorsSchema, configSchema]
}
