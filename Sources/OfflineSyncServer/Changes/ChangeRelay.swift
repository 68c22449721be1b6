/// Carries committed writes between the `serve` processes that serve one database, so that a
/// write through one process reaches the change-stream subscribers of every process.
///
/// `offline-sync serve` over PostgreSQL uses PostgreSQL's `LISTEN`/`NOTIFY`; a store that no
/// other process serves needs none.
///
/// Rules for an implementation:
/// - ``send(_:)`` never blocks the caller (it is called on a store thread after each commit):
///   queue the change and send it from elsewhere.
/// - ``receive(_:gap:)`` delivers the changes other processes sent, not this process's own (the
///   server announces those itself, at once), until its task is cancelled; it reconnects by
///   itself after a failure, and throws only when it cannot start at all. After a reconnection
///   it calls `gap`: changes sent meanwhile may be lost, so the server ends its open streams and
///   their clients reconnect and pull everything.
public protocol ChangeRelay: Sendable {
    /// Sends a change this process committed to the other processes.
    func send(_ change: TableChange)

    /// Hands each change another process sent to `deliver`, until the task is cancelled; calls
    /// `gap` when changes may have been lost (the relay reconnected).
    func receive(_ deliver: @escaping @Sendable (TableChange) -> Void, gap: @escaping @Sendable () -> Void) async throws
}
