import Synchronization

/// The number of open connections of one server, shared by their handlers.
final class ConnectionGauge: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts a new connection; `false` when it is beyond `limit` (it is counted anyway, and
    /// uncounted by ``close()`` like any other).
    func open(limit: Int) -> Bool {
        count.wrappingAdd(1, ordering: .relaxed).newValue <= limit
    }

    /// Uncounts a closed connection.
    func close() {
        count.wrappingSubtract(1, ordering: .relaxed)
    }

    /// The connections open now.
    var current: Int { count.load(ordering: .relaxed) }
}
