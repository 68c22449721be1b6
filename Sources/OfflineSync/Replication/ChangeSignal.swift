/// A server's announcement that tables changed, which a ``Replicator`` answers by pulling them.
///
/// The core links no networking: a remote that can tell its clients about changes provides a
/// signal beside its ``RemoteService`` (`OfflineSyncHTTP`'s `ChangeStream` reads the
/// Server-Sent Events of `GET /changes` that `offline-sync serve` answers). A ``Replicator``
/// without a signal, or whose signal answers ``ChangeSignalError/Kind-swift.enum/unsupported``,
/// polls instead.
///
/// Rules for an implementation:
/// - ``listen(to:_:)`` connects, calls `receive` with ``ChangeSignalEvent/connected`` once the
///   server has accepted the subscription, then with one ``ChangeSignalEvent/changed(table:updatedAt:)``
///   per change the server announces, in the order they arrive.
/// - It returns when the server ends the stream, and throws ``ChangeSignalError`` when it cannot
///   connect or the stream breaks; the replicator connects again (after a back-off) and pulls
///   every table on each new connection, so a signal lost while disconnected costs nothing.
/// - It stops promptly, throwing `CancellationError` or returning, when its task is cancelled.
/// - A signal may name tables it was not asked for, and may announce a change more than once;
///   it must not drop one announced while connected (coalescing several into one is fine).
public protocol ChangeSignal: Sendable {
    /// Subscribes to changes of `tables` and hands each event to `receive` until the server
    /// ends the stream (returns), the connection fails (throws ``ChangeSignalError``), or the
    /// task is cancelled.
    func listen(to tables: [String], _ receive: @escaping @Sendable (ChangeSignalEvent) async -> Void) async throws
}

/// What a ``ChangeSignal`` hands its listener.
public enum ChangeSignalEvent: Sendable, Hashable {
    /// The server accepted the subscription: from now on no change of the tables goes unannounced.
    case connected
    /// A write to `table` committed on the server; `updatedAt` is the written record's, when the
    /// server says (a pull whose delta token is already there has nothing to fetch).
    case changed(table: String, updatedAt: Timestamp?)
}

/// Why a ``ChangeSignal`` could not connect or lost its connection.
public struct ChangeSignalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure; it decides what the ``Replicator`` does next.
    public enum Kind: Sendable, Hashable {
        /// The server has no change stream (404, or it answered something else than a stream):
        /// the replicator polls instead.
        case unsupported
        /// The server refused the credential (401) and renewing it did not help; the replicator
        /// tries again after a back-off, asking the authentication hook again.
        case authentication
        /// The server is busy or at its subscriber cap (429, 503): try again after
        /// ``retryAfter`` when it says.
        case unavailable
        /// The connection could not be made or broke.
        case network
        /// Any other answer the signal cannot use (400, 500 …).
        case server
    }

    /// The class of failure.
    public var kind: Kind
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// How long the server asked the client to wait (`Retry-After`), when it said.
    public var retryAfter: Duration?
    /// A sentence naming what failed.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, status: Int? = nil, retryAfter: Duration? = nil, message: String) {
        self.kind = kind
        self.status = status
        self.retryAfter = retryAfter
        self.message = message
    }

    public var description: String {
        status.map { "\(message) (HTTP \($0))" } ?? message
    }
}
