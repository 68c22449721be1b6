import Dispatch
import Foundation

/// Runs code on operating-system threads of its own, outside Swift's cooperative pool, so that a
/// case can block a thread inside a store call (on a lock, a barrier) without starving the pool,
/// and so that threads really run at the same time even when the pool has two threads.
enum OSThreads {
    /// Runs each body on a new `Thread` at once and returns when every one has ended.
    static func run(_ bodies: [@Sendable () -> Void]) async {
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            let thread = Thread {
                body()
                group.leave()
            }
            thread.start()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }
}

/// A one-way barrier between two threads: one raises it, the other waits for it, for at most a
/// bounded time.
///
/// The bound never decides a verdict on a correct store: it is how long a thread inside a
/// transaction waits for another thread that a correct store keeps out (blocked in `write`, or
/// in a read that waits for the writer). On a correct store the wait always runs out and the
/// case goes on; on a broken one the other thread gets in and raises the barrier at once.
final class Barrier: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// Lets the waiting thread through.
    func raise() { semaphore.signal() }

    /// Waits until ``raise()`` was called or `seconds` have passed; answers `true` when raised.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}
