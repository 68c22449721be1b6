/// An error a store throws when it has no room left for a write: a size limit it was given (LMDB's
/// maximum map size, SQLite's maximum page count) or a full disk.
///
/// The backends' error types conform (`LMDBError`, `SQLiteError`). The server's table service (module `OfflineSyncService`) answers such a
/// failure with 507 Insufficient Storage instead of 500, so that a client learns that the server's
/// store, not its request, is at fault; the app itself can tell it apart from other failures
/// without knowing which backend it runs on:
///
/// ```swift
/// do {
///     try table.insert(item)
/// } catch let error as any StoreFullError where error.isStoreFull {
///     // ask the user to free space
/// }
/// ```
public protocol StoreFullError: Error {
    /// `true` when this error means the store had no room left for the write (which changed
    /// nothing).
    var isStoreFull: Bool { get }
}
