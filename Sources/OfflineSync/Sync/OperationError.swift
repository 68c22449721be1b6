/// A queued operation whose push failed with an answer that does not abort the push (a
/// conflict, a 404 on update, a 400 or 500 …). It is kept in ``SystemTables/errors`` until the
/// operation is pushed successfully or the error is resolved with ``SyncContext/resolve(_:_:)``.
public struct OperationError: Sendable, Hashable, CustomStringConvertible {
    /// The row id of the failed operation in the queue.
    public var operationId: String
    /// Its position in the queue.
    public var sequence: Int64
    /// The operation's version when this record was read. A local edit of the item updates the
    /// stored record, so an error read before the edit no longer resolves (read it again).
    public var operationVersion: Int64
    /// What the operation does.
    public var kind: OperationKind
    /// The app table.
    public var table: String
    /// The id of the item.
    public var itemId: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The class of the failure, from ``RemoteError/Kind``: `conflict`, `notFound`, `server`,
    /// or `localItemMissing` when the queue named an item the table no longer holds.
    public var reason: String
    /// What the server or the sync logic said.
    public var message: String
    /// The local item that was sent (for a delete, the deleted item).
    public var item: Item?
    /// The server's copy, when the server sent one (409 and 412 answers).
    public var serverItem: Item?
    /// When the failure was recorded.
    public var createdAt: Timestamp

    /// Creates an error record.
    public init(
        operationId: String, sequence: Int64, operationVersion: Int64, kind: OperationKind, table: String,
        itemId: String, status: Int?, reason: String, message: String, item: Item?, serverItem: Item?,
        createdAt: Timestamp
    ) {
        self.operationId = operationId
        self.sequence = sequence
        self.operationVersion = operationVersion
        self.kind = kind
        self.table = table
        self.itemId = itemId
        self.status = status
        self.reason = reason
        self.message = message
        self.item = item
        self.serverItem = serverItem
        self.createdAt = createdAt
    }

    /// `true` for 409 and 412 answers, where ``serverItem`` holds the server's copy.
    public var isConflict: Bool { status == 409 || status == 412 || reason == "conflict" }

    public var description: String {
        "\(kind.rawValue) of '\(itemId)' in '\(table)' failed" + (status.map { " with HTTP \($0)" } ?? "")
            + ": \(message)"
    }

    init(row: Item, schema: StoreSchema) throws {
        typealias C = SystemTables.ErrorColumn
        guard let kind = row[C.kind].stringValue.flatMap(OperationKind.init(rawValue:)),
            let table = row[C.table].stringValue, let itemId = row[C.itemId].stringValue
        else {
            throw OfflineSyncError(
                .storage,
                "operation error '\(row.id)' in \(SystemTables.errors) is incomplete; the table was changed outside OfflineSync"
            )
        }
        func item(_ column: String) throws -> Item? { try ItemJSON.decode(row[column], table: table, schema: schema) }
        self.init(
            operationId: row.id, sequence: row[C.sequence].intValue ?? 0,
            operationVersion: row[C.version].intValue ?? 0,
            kind: kind, table: table, itemId: itemId, status: row[C.status].intValue.map(Int.init),
            reason: row[C.reason].stringValue ?? "server", message: row[C.message].stringValue ?? "",
            item: try item(C.item), serverItem: try item(C.serverItem), createdAt: row[C.createdAt].dateValue ?? .epoch)
    }

    func row() throws -> Item {
        typealias C = SystemTables.ErrorColumn
        var values: [String: Value] = [
            C.sequence: .int(sequence), C.version: .int(operationVersion), C.kind: .string(kind.rawValue),
            C.table: .string(table), C.itemId: .string(itemId), C.reason: .string(reason), C.message: .string(message),
            C.createdAt: .date(createdAt),
        ]
        if let status { values[C.status] = .int(Int64(status)) }
        if let item { values[C.item] = try ItemJSON.encode(item) }
        if let serverItem { values[C.serverItem] = try ItemJSON.encode(serverItem) }
        return Item(id: operationId, values: values)
    }
}

/// How to settle an ``OperationError`` (or, from a ``PushHandler``, an operation being pushed).
public enum ErrorResolution: Sendable, Hashable {
    /// Drop the operation and the local item: the server's state stays as it is.
    case cancelAndDiscardItem
    /// Drop the operation and store this server copy locally (`nil`: the error's
    /// ``OperationError/serverItem``; a missing or soft-deleted server item removes the local one).
    case cancelAndTakeServerItem(Item?)
    /// Keep the operation and push it again later with this item (for a delete, the item whose
    /// `version` is sent as `If-Match`). Typically the local item with the server's `version`,
    /// to make the client win a conflict.
    case keepAndRetry(Item)
}
