import Synchronization

// The signals between the tasks of a pipelined push (`SyncContext.send(_:through:depth:answered:)`
// with a handler other than `DefaultPushHandler`): each write's task fires `QueuedSignal` once
// its write has its place on the remote, so the push hands the next one over; a write whose
// failure stops the push sets `StopFlag`, so no further one is handed over.

/// Tells push that a write is queued on the remote: fired once (later fires do nothing), waited
/// for once.
final class QueuedSignal: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case fired
    }

    private let state = Locked(State.pending)

    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .fired }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if case .fired = state { return true }
                state = .waiting(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }
}

/// Set once by any task, read by the push loop.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .relaxed) }

    func set() { flag.store(true, ordering: .relaxed) }
}
