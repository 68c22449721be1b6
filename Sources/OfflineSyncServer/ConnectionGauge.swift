import Synchronization

/// The open connections of one server, in all and per client address, shared by their
/// ``ConnectionGuard``s.
final class ConnectionGauge: Sendable {
    /// Why a connection is refused.
    enum Refusal: Equatable {
        /// The server has `limit` connections open.
        case serverFull(limit: Int)
        /// The client's address has `limit` connections open.
        case addressFull(limit: Int)
    }

    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())
    private let limit: Int
    private let perAddressLimit: Int

    /// A gauge refusing connections beyond `limit` in all, or `perAddressLimit` from one address.
    init(limit: Int, perAddressLimit: Int) {
        self.limit = limit
        self.perAddressLimit = perAddressLimit
    }

    /// Counts a new connection from `address` (`nil` when unknown, as for a Unix socket) and
    /// says whether it is beyond a limit; it is counted either way, and uncounted by
    /// ``close(address:)`` like any other.
    func open(address: String?) -> Refusal? {
        counts.withLock { counts in
            counts.total += 1
            var fromAddress = 0
            if let address {
                fromAddress = counts.byAddress[address, default: 0] + 1
                counts.byAddress[address] = fromAddress
            }
            if counts.total > limit { return .serverFull(limit: limit) }
            if fromAddress > perAddressLimit { return .addressFull(limit: perAddressLimit) }
            return nil
        }
    }

    /// Uncounts a closed connection.
    func close(address: String?) {
        counts.withLock { counts in
            counts.total -= 1
            guard let address, let count = counts.byAddress[address] else { return }
            counts.byAddress[address] = count > 1 ? count - 1 : nil
        }
    }

    /// The connections open now.
    var current: Int { counts.withLock { $0.total } }
}
