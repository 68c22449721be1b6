/// An error a store throws when it cannot be reached for the moment: its database server is down
/// or the connection to it was lost, or another process holds the store's lock for longer than
/// the store waits. The same call may succeed later; nothing was changed.
///
/// The backends' error types conform (`PostgresError` for lost and refused connections,
/// `SQLiteError` for `SQLITE_BUSY`). The server's table service (module `OfflineSyncService`) answers such a failure with 503 Service
/// Unavailable and `Retry-After` instead of 500, so that a client (and a load balancer) retries
/// instead of treating the request as failed for good:
///
/// ```swift
/// do {
///     try table.insert(item)
/// } catch let error as any StoreUnavailableError where error.isStoreUnavailable {
///     // retry later
/// }
/// ```
public protocol StoreUnavailableError: Error {
    /// `true` when this error means the store could not be reached for now (and the call changed
    /// nothing).
    var isStoreUnavailable: Bool { get }
}
