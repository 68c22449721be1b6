import OfflineSync

/// One subscriber's changes not yet written to its stream: at most one per table (the newest
/// `updatedAt`), so a subscriber that reads slowly holds a bounded amount of memory and still
/// learns of every table that changed.
final class ChangeSubscription: Sendable {
    private struct State {
        /// Changed tables in the order they first changed, with the newest `updatedAt` of each.
        var order: [String] = []
        var newest: [String: TableChange] = [:]
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    /// Who subscribed, as the broadcaster's filter sees it.
    let filter: ChangeFilter
    private let state = Locked(State())

    init(filter: ChangeFilter) {
        self.filter = filter
    }

    /// Adds a change (the broadcaster has checked the filter).
    func add(_ change: TableChange) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            if state.newest[change.table] == nil { state.order.append(change.table) }
            if let held = state.newest[change.table], held.updatedAt >= change.updatedAt {
                // An older write relayed late: the newer one already stands for the table.
            } else {
                state.newest[change.table] = change
            }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Ends the subscription: ``next(timeout:)`` answers `nil` from now on.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The changes gathered, waiting up to `timeout` for one: an empty array when the time passed
    /// with none (time for a heartbeat), `nil` once closed or cancelled.
    func next(timeout: Duration) async -> [TableChange]? {
        if let ready = take() { return ready }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForChange() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        if Task.isCancelled { return nil }
        return take() ?? []
    }

    /// What is gathered, emptying it: `.some(changes)`, `.some(nil)` once closed, `nil` when
    /// nothing is gathered yet.
    private func take() -> [TableChange]?? {
        state.withLock { state -> [TableChange]?? in
            if state.closed { return .some(nil) }
            guard !state.order.isEmpty else { return nil }
            defer {
                state.order = []
                state.newest = [:]
            }
            return .some(state.order.compactMap { state.newest[$0] })
        }
    }

    private func waitForChange() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.closed || !state.order.isEmpty || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

/// Which changes one subscriber may hear: the tables it asked for (all when `nil`), the tables
/// its credential may read, and for per-user tables only its own rows.
struct ChangeFilter: Sendable {
    /// Folded names of the tables asked for; `nil` for every table.
    var tables: Set<String>?
    /// The subscriber's user id, when it sent a valid token.
    var user: String?
    /// Whether the subscriber may read a table, and whether its rows are per user.
    var access: @Sendable (String) -> (readable: Bool, perUser: Bool)

    func admits(_ change: TableChange) -> Bool {
        if let tables, !tables.contains(Identifier.folded(change.table)) { return false }
        let rule = access(change.table)
        guard rule.readable else { return false }
        if rule.perUser { return change.owner != nil && change.owner == user }
        return true
    }
}
