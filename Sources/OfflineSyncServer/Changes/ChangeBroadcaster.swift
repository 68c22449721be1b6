public import Logging
import OfflineSync

/// The server's change hub: every committed write is announced here, and each open change
/// stream (`GET /changes`) that may hear it gets it.
///
/// In one process, ``publish(_:)`` hands a change to the matching subscriptions at once (they
/// only gather it: the writer's thread writes nothing to a socket). With a ``ChangeRelay``,
/// the change also goes to the other processes serving the same database, and what they send is
/// handed to this process's subscriptions (``runRelay()``).
public final class ChangeBroadcaster: Sendable {
    private struct State {
        var nextId = 0
        var subscriptions: [Int: ChangeSubscription] = [:]
        /// Set when the server stops: no stream opens any more.
        var closed = false
    }

    /// The most open streams; beyond it a subscription is refused (503).
    public let maximumSubscribers: Int
    /// Carries changes to and from the other processes, if any.
    public let relay: (any ChangeRelay)?
    private let state = Locked(State())
    private let logger: Logger

    /// Creates a hub.
    public init(maximumSubscribers: Int, relay: (any ChangeRelay)? = nil, logger: Logger) {
        self.maximumSubscribers = maximumSubscribers
        self.relay = relay
        self.logger = logger
    }

    /// How many streams are open.
    public var subscriberCount: Int { state.withLock { $0.subscriptions.count } }

    /// Announces a write this process committed: to this process's subscriptions and, through
    /// the relay, to the other processes'.
    public func publish(_ change: TableChange) {
        deliver(change)
        relay?.send(change)
    }

    /// Hands a change to every subscription whose filter admits it.
    func deliver(_ change: TableChange) {
        let subscriptions = state.withLock { Array($0.subscriptions.values) }
        for subscription in subscriptions where subscription.filter.admits(change) {
            subscription.add(change)
        }
    }

    /// Whether a new stream would be refused (at the cap, or stopping).
    var isFull: Bool {
        state.withLock { $0.closed || $0.subscriptions.count >= maximumSubscribers }
    }

    /// Registers a subscription, or answers `nil` at the cap or once stopping.
    func subscribe(_ filter: ChangeFilter) -> (id: Int, subscription: ChangeSubscription)? {
        state.withLock { state in
            guard !state.closed, state.subscriptions.count < maximumSubscribers else { return nil }
            state.nextId += 1
            let subscription = ChangeSubscription(filter: filter)
            state.subscriptions[state.nextId] = subscription
            return (state.nextId, subscription)
        }
    }

    /// Removes a subscription and ends its stream.
    func unsubscribe(_ id: Int) {
        let subscription = state.withLock { $0.subscriptions.removeValue(forKey: id) }
        subscription?.close()
    }

    /// Ends every open stream, still accepting new ones: their clients reconnect and pull
    /// everything (changes relayed from other processes may have been lost).
    func endOpenStreams() {
        let subscriptions = state.withLock { state in
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        if !subscriptions.isEmpty {
            logger.warning("the change relay lost its connection; ending \(subscriptions.count) change streams so their clients pull again")
        }
        for subscription in subscriptions { subscription.close() }
    }

    /// Ends every stream and refuses new ones (the server is stopping: an open stream would hold
    /// its graceful shutdown forever).
    public func closeAll() {
        let subscriptions = state.withLock { state in
            state.closed = true
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions { subscription.close() }
    }

    /// Delivers what the other processes send through the relay until the task is cancelled;
    /// returns at once without a relay. A relay that fails is logged and started again.
    public func runRelay() async {
        guard let relay else { return }
        while !Task.isCancelled {
            do {
                try await relay.receive { [weak self] change in
                    self?.deliver(change)
                } gap: { [weak self] in
                    self?.endOpenStreams()
                }
            } catch {
                if Task.isCancelled { return }
                logger.error("the change relay failed, starting it again in 1 s: \(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
