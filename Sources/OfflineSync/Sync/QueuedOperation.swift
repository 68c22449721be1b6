/// What a queued operation does to its item on the server.
public enum OperationKind: String, Sendable, Hashable, CaseIterable {
    /// Create the item (`POST`).
    case insert
    /// Replace the item (`PATCH` with `If-Match`).
    case update
    /// Delete the item (`DELETE` with `If-Match`).
    case delete
}

/// Whether a queued operation has been handed to the remote yet.
public enum OperationState: String, Sendable, Hashable {
    /// Never sent.
    case pending
    /// A push started sending it; the server may or may not have applied it. Push records this
    /// for a whole chunk of operations at once (a mark on the queue's sequence numbers), so an
    /// operation of a chunk whose push was cut short counts as attempted too: on the safe side.
    case attempted
}

/// One row of the operation queue (``SystemTables/operations``).
///
/// There is at most one queued operation per item, except while an operation is being pushed:
/// an edit made meanwhile is queued behind it instead of changing what is on the wire.
public struct QueuedOperation: Sendable, Hashable {
    /// The row id in the queue (derived from the table and the item id).
    public var id: String
    /// The position in the global queue, across all tables; push follows it.
    public var sequence: Int64
    /// What the operation does.
    public var kind: OperationKind
    /// Whether a push has started sending it.
    public var state: OperationState
    /// The app table.
    public var table: String
    /// The id of the item.
    public var itemId: String
    /// For a delete, the item as it was when deleted (its `version` is sent as `If-Match`);
    /// `nil` for inserts and updates, which send the item as it is in the table when pushed.
    public var item: Item?
    /// Bumped each time a later edit is collapsed into this operation.
    public var version: Int64
    /// When the operation was first queued.
    public var createdAt: Timestamp

    /// Creates an operation record.
    public init(
        id: String, sequence: Int64, kind: OperationKind, state: OperationState, table: String,
        itemId: String, item: Item?, version: Int64, createdAt: Timestamp
    ) {
        self.id = id
        self.sequence = sequence
        self.kind = kind
        self.state = state
        self.table = table
        self.itemId = itemId
        self.item = item
        self.version = version
        self.createdAt = createdAt
    }

    /// Reads an operation row; an operation at or below `attemptedThrough` (the queue's mark of
    /// what push has begun sending) is attempted whatever its row says.
    init(row: Item, schema: StoreSchema, attemptedThrough: Int64) throws {
        typealias C = SystemTables.OperationColumn
        func damaged(_ column: String) -> OfflineSyncError {
            OfflineSyncError(
                .storage,
                "operation '\(row.id)' in \(SystemTables.operations) has no valid '\(column)'; the queue was changed outside OfflineSync"
            )
        }
        guard let sequence = row[C.sequence].intValue else { throw damaged(C.sequence) }
        guard let kind = row[C.kind].stringValue.flatMap(OperationKind.init(rawValue:)) else { throw damaged(C.kind) }
        guard let state = row[C.state].stringValue.flatMap(OperationState.init(rawValue:)) else {
            throw damaged(C.state)
        }
        guard let table = row[C.table].stringValue else { throw damaged(C.table) }
        guard let itemId = row[C.itemId].stringValue else { throw damaged(C.itemId) }
        let item = try ItemJSON.decode(row[C.item], table: table, schema: schema)
        self.init(
            id: row.id, sequence: sequence, kind: kind, state: sequence <= attemptedThrough ? .attempted : state,
            table: table, itemId: itemId,
            item: item, version: row[C.version].intValue ?? 0,
            createdAt: row[C.createdAt].dateValue ?? .epoch)
    }

    /// The operation as a row of ``SystemTables/operationsSchema``, built by position on its
    /// layout (the values in the order its columns are declared).
    func row() throws -> Item {
        try QueuedOperation.row(
            id: id, sequence: sequence, kind: kind, state: state, table: table, itemId: itemId, item: item,
            version: version, createdAt: createdAt)
    }

    /// The row of an operation with these fields (what ``row()`` stores, without building the
    /// operation first).
    static func row(
        id: String, sequence: Int64, kind: OperationKind, state: OperationState, table: String, itemId: String,
        item: Item?, version: Int64, createdAt: Timestamp
    ) throws -> Item {
        var row = Item(
            id: id, layout: operationsLayout, values: .noValues(count: operationsLayout.names.count))
        try fill(
            &row, id: id, sequence: sequence, kind: kind, state: state, table: table, itemId: itemId, item: item,
            version: version, createdAt: createdAt)
        return row
    }

    /// Writes these fields into `row`, a row on the layout of ``SystemTables/operationsSchema``
    /// (from ``row(id:sequence:kind:state:table:itemId:item:version:createdAt:)``), in place: with
    /// ``refill(_:id:sequence:itemId:)``, which writes the fields that differ from item to item,
    /// the one place that knows which column holds which field. A row whose storage the store
    /// kept no copy of is rewritten without allocating its values again.
    static func fill(
        _ row: inout Item, id: String, sequence: Int64, kind: OperationKind, state: OperationState, table: String,
        itemId: String, item: Item?, version: Int64, createdAt: Timestamp
    ) throws {
        // The positions of the columns of `SystemTables.operationsSchema`, in declaration order.
        refill(&row, id: id, sequence: sequence, itemId: itemId)
        row.setSlot(1, .string(kind.rawValue))
        row.setSlot(2, .string(state.rawValue))
        row.setSlot(3, .string(table))
        row.setSlot(5, try item.map(ItemJSON.encode))
        row.setSlot(6, .int(version))
        row.setSlot(7, .date(createdAt))
    }

    /// Rewrites `row`, the row of a new operation that
    /// ``fill(_:id:sequence:kind:state:table:itemId:item:version:createdAt:)`` wrote, into the row of
    /// the same kind of operation (same kind, state, table, item, version and date) on another
    /// item: only the id, the sequence and the item id change, so the other slots keep their
    /// values (a batch of inserts queues its operations through a few reused rows, and setting a
    /// slot to the value it holds costs a retain and a release).
    static func refill(_ row: inout Item, id: String, sequence: Int64, itemId: String) {
        row.id = id
        row.setSlot(0, .int(sequence))
        row.setSlot(4, .string(itemId))
    }

    /// The layout of ``SystemTables/operationsSchema``, read once (the schema is a value, so
    /// reading its layout through it copies the schema).
    private static let operationsLayout = SystemTables.operationsSchema.rowLayout
}
