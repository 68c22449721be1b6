#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that one thread at a time reads or changes, behind a pthread mutex: the package's
/// replacement for `Synchronization.Mutex`, with the same `withLock` shape.
///
/// Why not `Mutex`: on Linux it locks with raw futex system calls, which ThreadSanitizer does not
/// see, so every access it guards is reported as a race (a four-thread counter under `Mutex`,
/// built with `-sanitize=thread` on Swift 6.3.1, reports two races and still counts right). The
/// sanitizer lane (`scripts/sanitize thread`) is only worth running if the package's own locks
/// are visible to it; pthread mutexes are. Uncontended, the two cost the same (one atomic
/// compare-and-swap to lock, one to unlock).
///
/// `@unchecked Sendable` is safe: the mutex lives at a fixed heap address for the object's life
/// (pthread mutexes must not move) and the value is read and written only while it is held.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock guarding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; what `body` returns or throws is what
    /// this returns or throws.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free right now, and returns its result; `nil`
    /// without waiting when another thread holds the lock.
    package func withLockIfAvailable<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result)
        throws(Failure) -> Result?
    {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
