#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A readers–writer lock (pthread) that prefers waiting exclusive holders, so a stream of shared
/// holders cannot starve an exclusive one.
///
/// ``TableService`` holds it shared around every store call and exclusively while it changes the
/// store's schema (which closes and reopens the store), so no call ever meets a closed store. A
/// pthread lock rather than `Mutex` because shared holders run at the same time and the values
/// they return are not `Sendable`.
///
/// `@unchecked Sendable` is safe: the lock lives at a fixed heap address for the object's life
/// (pthread locks must not move) and every access goes through the pthread functions, which are
/// thread-safe by definition.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` while holding the lock shared.
    func shared<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` while holding the lock alone.
    func exclusive<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
