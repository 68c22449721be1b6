/// Carries committed writes between the `serve` processes that serve one database, so that a
/// write through one process reaches the change-stream subscribers of every process.
///
/// `offline-sync serve` over PostgreSQL uses PostgreSQL's `LISTEN`/`NOTIFY`; a store that no
/// other process serves needs none.
///
/// Rules for an implementation:
/// - ``send(_:)`` never blocks the caller (it is called on a store thread after each commit):
///   queue the change and send it from elsewhere.
/// - ``receive(_:)`` delivers the changes other processes sent, not this process's own (the
///   server announces those itself, at once), until its task is cancelled; it reconnects by
///   itself after a failure, and throws only when it cannot start at all.
public protocol ChangeRelay: Sendable {
    /// Sends a change this process committed to the other processes.
    func send(_ change: TableChange)

    /// Hands each change another process sent to `deliver`, until the task is cancelled.
    func receive(_ deliver: @escaping @Sendable (TableChange) -> Void) async throws
}
