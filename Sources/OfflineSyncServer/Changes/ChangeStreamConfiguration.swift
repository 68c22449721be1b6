/// The change stream of a ``TableServer`` (`GET /changes`): on by default.
public struct ChangeStreamConfiguration: Sendable {
    /// Serve `GET /changes`; off, the path is 404 as on the Azure servers, and clients poll.
    public var isEnabled: Bool
    /// The pause after which an idle stream gets a comment line, so proxies keep it open.
    /// Default 15 s.
    public var heartbeat: Duration
    /// The most open streams; beyond it 503 with `Retry-After`. Each stream also holds one of the
    /// server's connections (``TableServer/Configuration/maximumConnections``). Default 10,000.
    public var maximumSubscribers: Int
    /// Carries committed writes to and from the other processes serving the same database
    /// (`offline-sync serve` over PostgreSQL: `LISTEN`/`NOTIFY`); `nil` for a store no other
    /// process serves.
    public var relay: (any ChangeRelay)?

    /// The defaults: on, a 15 s heartbeat, 10,000 subscribers, no relay.
    public init(
        isEnabled: Bool = true, heartbeat: Duration = .seconds(15), maximumSubscribers: Int = 10_000,
        relay: (any ChangeRelay)? = nil
    ) {
        self.isEnabled = isEnabled
        self.heartbeat = heartbeat
        self.maximumSubscribers = maximumSubscribers
        self.relay = relay
    }
}
