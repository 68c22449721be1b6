/// Exponential back-off with jitter: how long a ``Replicator`` waits after its `n`-th failure in
/// a row before trying again.
///
/// The `n`-th pause (from 0) is drawn uniformly from the upper half of
/// `min(maximum, initial × 2ⁿ)` ("equal jitter"), so a fleet of devices that lost the server
/// together does not come back in step, and never shorter than the server's `Retry-After` (up to
/// ``longestRetryAfter``).
public struct RetryBackoff: Sendable, Hashable {
    /// The pause after the first failure (before jitter).
    public var initial: Duration
    /// The longest pause (before honouring `Retry-After`).
    public var maximum: Duration
    /// The longest `Retry-After` honoured: a server or proxy that asks for more (a day, or more
    /// seconds than an integer holds) is waited for this long, so that a misconfigured answer
    /// cannot stop syncing for good. ``Replicator/syncNow()`` does not wait for it at all.
    public var longestRetryAfter: Duration

    /// Creates a back-off; `initial` is raised to 1 ms and `maximum` to `initial` when smaller,
    /// `longestRetryAfter` to `maximum`.
    public init(
        initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30),
        longestRetryAfter: Duration = .seconds(3600)
    ) {
        self.initial = max(initial, .milliseconds(1))
        self.maximum = max(maximum, self.initial)
        self.longestRetryAfter = max(longestRetryAfter, self.maximum)
    }

    /// The pause after `failures` failures in a row (1 or more), at least `retryAfter` (at most
    /// ``longestRetryAfter`` of it).
    public func delay(
        afterFailures failures: Int, retryAfter: Duration? = nil,
        using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        var ceiling = initial * (1 << exponent)
        if ceiling > maximum { ceiling = maximum }
        let nanoseconds = Self.nanoseconds(ceiling)
        let half = nanoseconds / 2
        let drawn = half + Int64.random(in: 0...max(half, 0), using: &generator)
        return max(Duration.nanoseconds(drawn), min(retryAfter ?? .zero, longestRetryAfter))
    }

    /// The pause after `failures` failures in a row, with the system's random numbers.
    public func delay(afterFailures failures: Int, retryAfter: Duration? = nil) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterFailures: failures, retryAfter: retryAfter, using: &generator)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max / 2 : whole &+ attoseconds / 1_000_000_000
    }
}
