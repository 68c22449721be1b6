/// An event count: tasks wait for "something changed since I last looked" without missing a
/// notification that arrives between their check and their wait.
///
/// A waiter reads ``generation``, checks its condition, and if it must wait calls
/// ``wait(after:timeout:)`` with the generation it read: a ``notify()`` made since then makes the
/// wait return at once. Every waiter is woken by each notification and checks its condition
/// again.
final class Wakeups: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextId = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// The number of notifications so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func notify() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a notification came after `generation` was read, once `timeout` has passed
    /// (when given), or once the task is cancelled.
    func wait(after generation: UInt64, timeout: Duration? = nil) async {
        guard let timeout else {
            await waitForNotification(after: generation)
            return
        }
        guard timeout > .zero else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForNotification(after: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForNotification(after generation: UInt64) async {
        let id = state.withLock { state -> Int in
            state.nextId += 1
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    // Checked under the lock: a cancellation handler that ran before this found
                    // no waiter to resume, but the task is already marked cancelled.
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// The snapshots a ``Replicator`` publishes, handed to every open ``Replicator/status`` sequence
/// (each keeps only the newest snapshot its consumer has not read).
final class StatusBroadcast: Sendable {
    private struct State {
        var status = ReplicatorStatus()
        var nextId = 0
        var listeners: [Int: AsyncStream<ReplicatorStatus>.Continuation] = [:]
    }

    private let state = Locked(State())

    /// The current snapshot.
    var current: ReplicatorStatus { state.withLock { $0.status } }

    /// Changes the snapshot; listeners get it when it differs from the last one.
    func update(_ change: (inout ReplicatorStatus) -> Void) {
        state.withLock { state in
            var status = state.status
            change(&status)
            guard status != state.status else { return }
            state.status = status
            for listener in state.listeners.values { listener.yield(status) }
        }
    }

    /// A sequence starting with the current snapshot, then each change, until ``finishAll()``.
    func stream() -> AsyncStream<ReplicatorStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ReplicatorStatus.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int in
            state.nextId += 1
            state.listeners[state.nextId] = continuation
            continuation.yield(state.status)
            return state.nextId
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every open sequence (the run ended).
    func finishAll() {
        let listeners = state.withLock { state in
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish() }
    }
}
