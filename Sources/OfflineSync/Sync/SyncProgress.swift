/// Where a push or a pull stands, for progress bars.
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// Which phase reports.
    public enum Phase: String, Sendable, Hashable {
        /// Sending queued operations.
        case push
        /// Receiving pages of a table.
        case pull
    }

    /// The phase.
    public var phase: Phase
    /// The table being worked on (for push, the table of the last operation handled).
    public var table: String
    /// Operations handled (push) or records received (pull) so far in this call.
    public var completed: Int
    /// The total when known: the queue length at the start of a push; unknown (`nil`) for pulls.
    public var total: Int?

    /// Creates a progress report.
    public init(phase: Phase, table: String, completed: Int, total: Int?) {
        self.phase = phase
        self.table = table
        self.completed = completed
        self.total = total
    }

    public var description: String {
        "\(phase.rawValue) \(table): \(completed)" + (total.map { "/\($0)" } ?? "")
    }
}

/// Receives progress reports; called on the task doing the work, so keep it short. To consume
/// reports as an `AsyncStream`, yield into a continuation: `{ continuation.yield($0) }`.
public typealias SyncProgressHandler = @Sendable (SyncProgress) -> Void
