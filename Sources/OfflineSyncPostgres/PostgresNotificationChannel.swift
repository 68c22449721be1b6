import CLibPQ
import Dispatch
public import OfflineSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// PostgreSQL's `LISTEN`/`NOTIFY` on one channel, for processes that share a database: what one
/// process ``send(_:)``s, every other process ``receive(reconnected:_:)``s (`offline-sync serve` relays its
/// committed writes this way, so that the change streams of every process announce them).
///
/// Two connections of its own, apart from any store's: one sends, from a serial queue, so
/// ``send(_:)`` never blocks its caller; one listens, on a thread of its own that waits on the
/// connection's socket (200 ms at a time, so it stops soon after its task is cancelled). A notification sent by this channel's own sending connection is not
/// handed to ``receive(reconnected:_:)``. Both reconnect after a failure (a notification sent while the
/// listening connection was down is lost: PostgreSQL keeps none for a session that is not
/// listening), so a receiver must treat a reconnection as "anything may have changed".
public final class PostgresNotificationChannel: Sendable {
    /// The channel name (up to 63 bytes, PostgreSQL's identifier length).
    public let channel: String
    /// The database and credentials.
    public let settings: PostgresConnectionSettings

    private struct Sender {
        var connection: PostgresConnection?
    }

    /// The sending connection, used only on `queue` (`@unchecked`-free: the lock is never
    /// contended, the queue is serial).
    private let sender = Locked(Sender())
    /// The sending connection's backend process id, so the listener skips what this channel sent.
    private let senderProcessId = Locked<Int32>(0)
    private let queue = DispatchQueue(label: "offline-sync.postgres-notify")
    /// Where the listening loop runs: a queue of its own, whose thread waits on the socket.
    private let listeningQueue = DispatchQueue(label: "offline-sync.postgres-listen")

    /// A channel named `offline_sync.<schema>` (cut to 63 bytes) on the settings' database.
    public convenience init(settings: PostgresConnectionSettings) {
        self.init(settings: settings, channel: "offline_sync." + settings.schema)
    }

    /// A channel of the given name (cut to 63 bytes).
    public init(settings: PostgresConnectionSettings, channel: String) {
        self.settings = settings
        var name = channel
        while name.utf8.count > 63 { name.removeLast() }
        self.channel = name
    }

    /// Queues `payload` (at most 7,999 bytes; longer payloads are dropped, as PostgreSQL would
    /// refuse them) to be sent; returns at once. A failure to send is retried once on a new
    /// connection, then the payload is dropped.
    public func send(_ payload: String) {
        guard payload.utf8.count < 8000 else { return }
        queue.async { [self] in
            for _ in 0..<2 {
                do {
                    try sender.withLock { sender in
                        if sender.connection == nil || sender.connection!.isBroken {
                            let connection = try PostgresConnection(
                                parameters: settings.connectionParameters(), location: settings.description)
                            sender.connection = connection
                            senderProcessId.withLock { $0 = connection.backendProcessId }
                        }
                        try sender.connection!.notify(channel, payload: payload)
                    }
                    return
                } catch {
                    sender.withLock { $0.connection = nil }
                }
            }
        }
    }

    /// Listens, handing each payload another process sent to `deliver` (on the listening thread),
    /// until the task is cancelled. Throws when the first connection cannot be made; later
    /// failures reconnect every second, calling `reconnected` once listening again.
    public func receive(
        reconnected: @escaping @Sendable () -> Void = {}, _ deliver: @escaping @Sendable (String) -> Void
    ) async throws {
        let first = try PostgresConnection(parameters: settings.connectionParameters(), location: settings.description)
        try first.listen(channel)
        let stop = Locked(false)
        let box = ConnectionBox(first)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                listeningQueue.async { [self] in
                    var connection: PostgresConnection? = box.take()
                    while !stop.withLock({ $0 }) {
                        guard let listening = connection else {
                            if let again = try? PostgresConnection(
                                parameters: settings.connectionParameters(), location: settings.description),
                                (try? again.listen(channel)) != nil
                            {
                                connection = again
                                reconnected()
                            } else {
                                usleep(1_000_000)
                            }
                            continue
                        }
                        do {
                            let received = try listening.waitForNotifications(timeoutMilliseconds: 200)
                            // Read after the wait: the sending connection may have been made during it.
                            let own = senderProcessId.withLock { $0 }
                            for notification in received where notification.senderProcessId != own {
                                deliver(notification.payload)
                            }
                        } catch {
                            listening.close()
                            connection = nil
                        }
                    }
                    connection?.close()
                    continuation.resume()
                }
            }
        } onCancel: {
            stop.withLock { $0 = true }
        }
    }

    /// Closes the sending connection (after what is queued was sent).
    public func close() {
        queue.sync {
            sender.withLock { sender in
                sender.connection?.close()
                sender.connection = nil
            }
        }
    }
}

/// Hands a connection made on one thread to the listening thread (`@unchecked Sendable`: it is
/// taken exactly once, by that thread, after the maker stopped using it).
private final class ConnectionBox: @unchecked Sendable {
    private var connection: PostgresConnection?

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    func take() -> PostgresConnection? {
        defer { connection = nil }
        return connection
    }
}
