/// How a push ended.
public enum PushStatus: String, Sendable, Hashable {
    /// Every queued operation was handled (some may have become ``OperationError``s).
    case complete
    /// The remote could not be reached, or answered that it cannot take writes for now (429,
    /// 502, 503, 504); the queue is kept.
    case abortedByNetwork
    /// The remote answered 401; the queue is kept.
    case abortedByAuthentication
    /// The local store failed; the queue is kept.
    case abortedByStore
    /// The task was cancelled; the queue is kept.
    case cancelled
    /// The ``PushHandler`` threw an error that is not a ``RemoteError``; the queue is kept.
    case abortedByHandler
}

/// What a push did.
public struct PushResult: Sendable, Hashable {
    /// How it ended.
    public var status: PushStatus
    /// Operations completed (pushed or resolved by the handler) and removed from the queue.
    public var completedCount: Int
    /// The operation errors recorded by this push, in queue order; they stay in
    /// ``SystemTables/errors`` until resolved (``SyncContext/resolve(_:_:)``) or pushed.
    public var errors: [OperationError]

    /// Creates a result.
    public init(status: PushStatus, completedCount: Int, errors: [OperationError]) {
        self.status = status
        self.completedCount = completedCount
        self.errors = errors
    }

    /// `true` when the push completed without recording errors.
    public var succeeded: Bool { status == .complete && errors.isEmpty }
}

/// A push that stopped early (network, 401, a server unavailable for now, store failure,
/// cancellation, handler), or — thrown by a pull's implicit push — one that left operation
/// errors. The queue is intact; push again later.
public struct PushFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What happened up to the stop.
    public var result: PushResult
    /// What stopped it.
    public var message: String
    /// How long the server asked the client to wait before pushing again (the `Retry-After` of
    /// the answer that stopped the push), when it said; a ``Replicator`` waits at least this long.
    public var retryAfter: Duration?

    /// Creates a failure.
    public init(result: PushResult, message: String, retryAfter: Duration? = nil) {
        self.result = result
        self.message = message
        self.retryAfter = retryAfter
    }

    /// How the push ended.
    public var status: PushStatus { result.status }

    public var description: String { "push \(result.status.rawValue): \(message)" }
}
