extension Replicator {
    /// How a ``Replicator`` paces itself.
    public struct Options: Sendable {
        /// How long after a local edit the push starts; edits made meanwhile go in the same push,
        /// so a burst of edits is one push. Default 50 ms.
        public var pushDelay: Duration
        /// How often every table is pulled when the server announces no changes (no
        /// ``ChangeSignal``, or a server without a change stream). Default 30 s.
        public var pollInterval: Duration
        /// The pauses after failures (network, server, store, authentication).
        public var backoff: RetryBackoff
        /// Records asked for per page of a pull. Default 100.
        public var pageSize: Int
        /// Ask for soft-deleted records, so deletions on the server reach the store (the default).
        public var includeDeleted: Bool

        /// Options with the defaults.
        public init(
            pushDelay: Duration = .milliseconds(50), pollInterval: Duration = .seconds(30),
            backoff: RetryBackoff = RetryBackoff(), pageSize: Int = 100, includeDeleted: Bool = true
        ) {
            self.pushDelay = pushDelay
            self.pollInterval = pollInterval
            self.backoff = backoff
            self.pageSize = pageSize
            self.includeDeleted = includeDeleted
        }
    }
}
