/// A snapshot of what a ``Replicator`` is doing, for a sync indicator in the app (what
/// PowerSync's `SyncStatus` tells): an element of ``Replicator/status``.
public struct ReplicatorStatus: Sendable, Hashable, CustomStringConvertible {
    /// Whether the replicator is in touch with the server.
    public enum Connection: String, Sendable, Hashable {
        /// Not connected: not running, paused, or the last attempt failed (see ``ReplicatorStatus/lastError``).
        case offline
        /// Opening the change stream, or making the first request since the last failure.
        case connecting
        /// The change stream is open, or (polling) the last request succeeded.
        case connected
    }

    /// How the replicator learns of other devices' changes.
    public enum ChangeSource: String, Sendable, Hashable {
        /// The server's change stream (``ChangeSignal``): a change is pulled as soon as it is announced.
        case stream
        /// Pulls at the replicator's poll interval: no signal was given, or the server has no stream.
        case polling
    }

    /// Whether the replicator is in touch with the server.
    public var connection: Connection
    /// How other devices' changes are learned; `nil` until the replicator first connects.
    public var changeSource: ChangeSource?
    /// `true` between ``Replicator/pause()`` and ``Replicator/resume()``.
    public var isPaused: Bool
    /// `true` while queued operations are being pushed.
    public var isUploading: Bool
    /// The running push's progress (operations sent of the queue's length), while uploading.
    public var uploadProgress: SyncProgress?
    /// `true` while a table is being pulled.
    public var isDownloading: Bool
    /// The running pull's progress (the table, records received so far), while downloading.
    public var downloadProgress: SyncProgress?
    /// Local operations waiting to be pushed.
    public var pendingOperationCount: Int
    /// Operations the server refused (conflicts and other errors) that wait for the app to settle
    /// them (``SyncContext/operationErrors(table:)``, ``SyncContext/resolve(_:_:)``).
    public var operationErrorCount: Int
    /// When each pulled table last finished a pull without error, since the replicator was created.
    public var lastSyncedAt: [String: Timestamp]
    /// The last failure; cleared by the next push or pull that succeeds.
    public var lastError: ReplicatorError?

    /// A replicator that has not started.
    public init() {
        connection = .offline
        changeSource = nil
        isPaused = false
        isUploading = false
        uploadProgress = nil
        isDownloading = false
        downloadProgress = nil
        pendingOperationCount = 0
        operationErrorCount = 0
        lastSyncedAt = [:]
        lastError = nil
    }

    /// `true` when every table in `tables` has been pulled at least once.
    public func hasSynced(_ tables: some Sequence<String>) -> Bool {
        tables.allSatisfy { lastSyncedAt[$0] != nil }
    }

    /// One line: the connection, what is moving, what waits, the last error.
    public var description: String {
        var parts = [isPaused ? "paused" : connection.rawValue]
        if let changeSource, connection == .connected { parts[0] += " (\(changeSource.rawValue))" }
        if isUploading { parts.append(uploadProgress.map { "uploading \($0.completed)/\($0.total ?? $0.completed)" } ?? "uploading") }
        if isDownloading {
            parts.append(downloadProgress.map { "downloading \($0.table) \($0.completed)" } ?? "downloading")
        }
        parts.append("\(pendingOperationCount) pending")
        if operationErrorCount > 0 { parts.append("\(operationErrorCount) refused") }
        if !lastSyncedAt.isEmpty {
            parts.append(
                "synced " + lastSyncedAt.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.iso8601)" }.joined(
                    separator: ", "))
        }
        if let lastError { parts.append("last error: \(lastError)") }
        return parts.joined(separator: ", ")
    }
}

/// A failure a ``Replicator`` met and will retry (or, for refused operations, waits for the app).
public struct ReplicatorError: Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The server could not be reached or the connection broke; retried with back-off.
        case network
        /// The server refused the credential and the authentication hook could not renew it;
        /// retried with back-off (the hook is asked for a token again each time).
        case authentication
        /// The server answered an error (or is busy); retried with back-off.
        case server
        /// The local store failed; retried with back-off.
        case store
        /// The server refused queued operations (``ReplicatorStatus/operationErrorCount``): pulls
        /// of their tables wait until the app settles them; not retried on a timer.
        case refusedOperations
    }

    /// What kind of failure.
    public var kind: Kind
    /// The failure's own description.
    public var message: String
    /// When it happened.
    public var at: Timestamp
    /// How long the replicator waits before trying again; `nil` when it waits for something else
    /// (a local edit, a change signal, ``Replicator/syncNow()``).
    public var retryIn: Duration?

    /// Creates an error.
    public init(_ kind: Kind, message: String, at: Timestamp = .now(), retryIn: Duration? = nil) {
        self.kind = kind
        self.message = message
        self.at = at
        self.retryIn = retryIn
    }

    public var description: String {
        "\(kind.rawValue): \(message)"
            + (retryIn.map { ", retrying in \(Self.seconds($0))" } ?? "")
    }

    /// `1.25 s`, `0.2 s`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(Double(milliseconds) / 1000) s"
    }
}
