#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    package import Darwin
#endif

/// A readers–writer lock (pthread) that prefers waiting exclusive holders, so a stream of shared
/// holders cannot starve an exclusive one.
///
/// Used by the server's table service (module `OfflineSyncService`), held shared around every store call and exclusively while it changes
/// the store's schema (which closes and reopens the store), so no call ever meets a closed store;
/// and by a memory-mapped backend as the gate that keeps a map resize and the environment's close
/// away from live transactions, and as the lock that serialises its writers. A pthread lock (as
/// ``Locked`` is) so that ThreadSanitizer sees it.
///
/// `@unchecked Sendable` is safe: the lock lives at a fixed heap address for the object's life
/// (pthread locks must not move) and every access goes through the pthread functions, which are
/// thread-safe by definition.
package final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    package init() {
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
    package func shared<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` while holding the lock alone, or returns `nil` without running it when the
    /// calling thread already holds the lock exclusively (which would otherwise deadlock).
    package func exclusiveIfNotHeld<Result>(_ body: () throws -> Result) rethrows -> Result? {
        guard pthread_rwlock_wrlock(lock) == 0 else { return nil }
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` while holding the lock alone.
    package func exclusive<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
