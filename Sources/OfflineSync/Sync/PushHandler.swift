/// One operation as a push hands it to a ``PushHandler``.
public struct PushOperation: Sendable {
    /// What the operation does.
    public let kind: OperationKind
    /// The app table.
    public let table: String
    /// The id of the item.
    public let itemId: String
    /// The item to send: for inserts and updates the item as the table holds it now, for a
    /// delete the item as it was deleted (its `version` is the `If-Match`).
    public let item: Item?
    /// The operation's position in the queue.
    public let sequence: Int64
    /// The remote the push talks to.
    public let remote: any RemoteService

    init(kind: OperationKind, table: String, itemId: String, item: Item?, sequence: Int64, remote: any RemoteService) {
        self.kind = kind
        self.table = table
        self.itemId = itemId
        self.item = item
        self.sequence = sequence
        self.remote = remote
    }

    /// Sends the operation (or, for a retry, a changed item) and returns the server's copy
    /// (`nil` after a delete). Inserts and updates send the item without `createdAt`,
    /// `updatedAt` and `deleted` (the server owns them) and with its `version` as `If-Match`.
    /// - Parameters:
    ///   - kind: send as another kind (e.g. an insert that met a 409 retried as an update).
    ///   - item: the item to send instead of ``item``.
    public func execute(as kind: OperationKind? = nil, item: Item? = nil) async throws -> Item? {
        try await remote.perform(write(as: kind, item: item))
    }

    /// The write that sends the operation (or, for a retry, a changed item).
    func write(as kind: OperationKind? = nil, item: Item? = nil) -> RemoteWrite {
        let sent = item ?? self.item
        let kind = kind ?? self.kind
        return kind == .delete
            ? RemoteWrite(.delete, table: table, item: Item(id: itemId), ifMatch: sent?.version)
            : RemoteWrite(
                kind, table: table, item: PushOperation.outgoing(sent, id: itemId),
                ifMatch: kind == .update ? sent?.version : nil)
    }

    static func outgoing(_ item: Item?, id: String) -> Item {
        var result = item ?? Item(id: id)
        result.removeValue(forColumn: SystemProperty.createdAt.rawValue)
        result.removeValue(forColumn: SystemProperty.updatedAt.rawValue)
        result.removeValue(forColumn: SystemProperty.deleted.rawValue)
        return result
    }
}

/// What a ``PushHandler`` decided for one operation.
public enum PushOutcome: Sendable, Hashable {
    /// The server accepted the operation and sent this copy (`nil` after a delete).
    case pushed(Item?)
    /// The handler settled the operation itself (see ``ErrorResolution``); no error is recorded.
    case resolved(ErrorResolution)
}

/// The per-operation hook of a push (Azure's `IMobileServiceSyncHandler` /
/// `MSSyncContextDelegate`): execute the operation, retry it with a changed item, or resolve it.
///
/// A ``RemoteError`` thrown from ``push(_:)`` is handled as if the remote had thrown it: network,
/// authentication and cancellation abort the push, a 404 on a delete counts as done, anything
/// else is recorded as an ``OperationError`` and the push goes on. Any other error aborts the
/// push (status ``PushStatus/abortedByHandler``). The queue is untouched by an abort.
public protocol PushHandler: Sendable {
    /// Pushes one operation and says how it ended.
    func push(_ operation: PushOperation) async throws -> PushOutcome
}

/// Executes every operation as it is; failures become operation errors.
///
/// With this handler, push hands a chunk's operations to the remote together
/// (``RemoteService/send(_:)``), which is what the handler would do one by one; with any other
/// handler, each operation goes through the handler after the previous one was answered.
public struct DefaultPushHandler: PushHandler {
    /// Creates the handler.
    public init() {}

    /// Executes the operation as queued.
    public func push(_ operation: PushOperation) async throws -> PushOutcome {
        .pushed(try await operation.execute())
    }
}

/// Conflicts are won by the local copy: on a 412 (or a 409 on insert) the operation is sent again
/// with the server's `version` as `If-Match` (an insert becomes an update), up to
/// `maximumAttempts` times. The server's other changes are overwritten.
public struct ClientWinsPushHandler: PushHandler {
    /// How many times an operation is sent before its conflict is recorded as an error.
    public var maximumAttempts: Int

    /// Creates the handler.
    public init(maximumAttempts: Int = 3) {
        self.maximumAttempts = max(1, maximumAttempts)
    }

    /// Executes, and on a conflict retries with the server's version.
    public func push(_ operation: PushOperation) async throws -> PushOutcome {
        var kind = operation.kind
        var item = operation.item
        var attempt = 1
        while true {
            do {
                return .pushed(try await operation.execute(as: kind, item: item))
            } catch let error as RemoteError where error.kind == .conflict && attempt < maximumAttempts {
                guard let server = error.serverItem else { throw error }
                if server.isDeleted { throw error }
                var retried = item ?? Item(id: operation.itemId)
                retried[SystemProperty.version.rawValue] = server[SystemProperty.version.rawValue]
                item = retried
                if kind == .insert { kind = .update }
                attempt += 1
            }
        }
    }
}

/// Conflicts are won by the server: on a 409 or 412 carrying the server's copy, the operation is
/// cancelled and the server's copy replaces the local item (a soft-deleted server copy removes
/// it).
public struct ServerWinsPushHandler: PushHandler {
    /// Creates the handler.
    public init() {}

    /// Executes, and on a conflict takes the server's copy.
    public func push(_ operation: PushOperation) async throws -> PushOutcome {
        do {
            return .pushed(try await operation.execute())
        } catch let error as RemoteError where error.kind == .conflict && error.serverItem != nil {
            return .resolved(.cancelAndTakeServerItem(error.serverItem))
        }
    }
}
