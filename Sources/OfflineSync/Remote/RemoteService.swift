/// A remote table service: the server side of sync, seen from the client.
///
/// `InMemoryRemote` (module `OfflineSyncService`) implements it in process (tests, benchmarks, fault injection) and
/// `HTTPRemote` speaks the Azure Mobile Apps table protocol 2.0.0. Items carry the system
/// properties the server assigns (`createdAt`, `updatedAt`, `version`, `deleted`). Failures are
/// thrown as ``RemoteError`` so the sync engine can tell which ones abort a push (network,
/// authentication) from which ones are recorded per operation (conflicts, other statuses).
public protocol RemoteService: Sendable {
    /// Reads one page of a table.
    ///
    /// The query's filter, ordering, `skip`, `top`, selection and total count apply as in the
    /// protocol's `$filter`, `$orderby`, `$skip`, `$top`, `$select`, `$inlinecount=allpages`.
    /// A server may return fewer rows than `top` (its page size cap). Soft-deleted rows are
    /// included only when `includeDeleted` is `true`.
    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult

    /// Inserts an item (`POST /tables/{table}`) and returns the server's copy.
    /// An existing id fails with ``RemoteError`` `.conflict` (409) carrying the server's item.
    func insert(_ item: Item, into table: String) async throws -> Item

    /// Replaces an item (`PATCH /tables/{table}/{id}`) and returns the server's copy. With a
    /// `version`, the server applies it only if its version matches (`If-Match`), otherwise it
    /// fails with ``RemoteError`` `.conflict` (412) carrying the server's item.
    func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item

    /// Deletes an item (`DELETE /tables/{table}/{id}`), with the same `If-Match` rule as update.
    /// A missing item fails with ``RemoteError`` `.notFound`.
    func delete(id: String, from table: String, ifMatch version: String?) async throws

    /// Reads one item (`GET /tables/{table}/{id}`), `nil` when it does not exist or is deleted.
    func lookup(id: String, in table: String) async throws -> Item?

    /// Sends a chunk of writes of a push, in order, and answers each one's outcome in that order:
    /// the server's copy (`nil` after a delete) or the error ``insert(_:into:)``,
    /// ``update(_:in:ifMatch:)`` or ``delete(id:from:ifMatch:)`` would have thrown for it.
    ///
    /// The server must apply the writes in the order given. The answers may stop short of the
    /// writes: those after the last answer were not sent (push keeps them queued). A remote may
    /// send the chunk in one request (`HTTPRemote` sends one `POST /$batch` to a server that
    /// takes it); the default implementation sends the writes one after another
    /// (``sendOneAfterAnother(_:)``).
    func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>]
}

extension RemoteService {
    /// Sends the writes one after another (``sendOneAfterAnother(_:)``).
    public func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        await sendOneAfterAnother(writes)
    }

    /// Sends the writes one after another through ``perform(_:)``, each after the answer to the
    /// previous one, and stops after a failure that stops a push (``RemoteError/abortsPush``, or
    /// an error that is not a ``RemoteError``) and when the task is cancelled (the write not sent
    /// is answered `CancellationError`); what the default ``send(_:)`` does.
    public func sendOneAfterAnother(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        var answers: [Result<Item?, any Error>] = []
        for write in writes {
            if Task.isCancelled {
                answers.append(.failure(CancellationError()))
                break
            }
            do {
                answers.append(.success(try await perform(write)))
            } catch {
                answers.append(.failure(error))
                if (error as? RemoteError)?.abortsPush ?? true { break }
            }
        }
        return answers
    }

    /// Calls ``insert(_:into:)``, ``update(_:in:ifMatch:)`` or ``delete(id:from:ifMatch:)`` for
    /// the write and returns the server's copy (`nil` after a delete).
    public func perform(_ write: RemoteWrite) async throws -> Item? {
        switch write.kind {
        case .insert:
            return try await insert(write.item, into: write.table)
        case .update:
            return try await update(write.item, in: write.table, ifMatch: write.ifMatch)
        case .delete:
            try await delete(id: write.item.id, from: write.table, ifMatch: write.ifMatch)
            return nil
        }
    }
}

/// One write of a push, as a ``RemoteService`` sends it.
public struct RemoteWrite: Sendable {
    /// Insert (`POST`), update (`PATCH`) or delete (`DELETE`).
    public var kind: OperationKind
    /// The app table.
    public var table: String
    /// The item to send, without `createdAt`, `updatedAt` and `deleted`; for a delete only its
    /// id matters.
    public var item: Item
    /// The version the server must still have (`If-Match`) for an update or delete, if any.
    public var ifMatch: String?

    /// Creates a write.
    public init(_ kind: OperationKind, table: String, item: Item, ifMatch: String? = nil) {
        self.kind = kind
        self.table = table
        self.item = item
        self.ifMatch = ifMatch
    }
}

/// A failure reported by a ``RemoteService``.
public struct RemoteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure; it decides what push does with it.
    public enum Kind: Sendable, Hashable {
        /// The server could not be reached, the connection broke, or the request timed out.
        /// Push aborts and keeps the queue.
        case network
        /// The server answered 401. Push aborts and keeps the queue.
        case authentication
        /// The server answered 409 (insert of an existing id) or 412 (version mismatch).
        case conflict
        /// The item does not exist on the server (404).
        case notFound
        /// Any other non-success answer (400, 500 …), or a response the client could not read.
        /// A 429, 502, 503 or 504 (the server or a proxy unavailable for now) aborts a push and
        /// keeps the queue, as a network failure does; any other becomes an operation error.
        case server
        /// The caller cancelled the request.
        case cancelled
    }

    /// The class of failure.
    public var kind: Kind
    /// The HTTP status, when there was a response.
    public var status: Int?
    /// The server's copy of the item, for conflicts.
    public var serverItem: Item?
    /// A sentence naming what failed.
    public var message: String
    /// How long the server asked the client to wait before trying again (`Retry-After` of a 429
    /// or 503), when it said; a ``Replicator`` waits at least this long.
    public var retryAfter: Duration?

    /// Creates a remote error.
    public init(
        _ kind: Kind, status: Int? = nil, serverItem: Item? = nil, message: String, retryAfter: Duration? = nil
    ) {
        self.kind = kind
        self.status = status
        self.serverItem = serverItem
        self.message = message
        self.retryAfter = retryAfter
    }

    /// `true` for failures that abort a push and keep the queue untouched: network,
    /// authentication, cancellation, and the answers that say the server cannot take the write
    /// for now (429, 502, 503, 504), which would otherwise turn every operation of the push into
    /// an error for the app to settle by hand while its server restarts or sheds load.
    public var abortsPush: Bool {
        switch kind {
        case .network, .authentication, .cancelled: return true
        case .server: return status.map(Self.unavailableStatuses.contains) ?? false
        default: return false
        }
    }

    /// The statuses of a server, or a proxy before it, that cannot answer for now: a request
    /// sent again later may succeed.
    public static let unavailableStatuses: Set<Int> = [429, 502, 503, 504]

    public var description: String {
        status.map { "\(message) (HTTP \($0))" } ?? message
    }
}
