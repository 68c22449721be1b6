#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The read-only connections of one ``SQLTableStore``, lent to one read at a time.
///
/// At most ``capacity`` connections exist. A read takes an idle one; when none is idle and fewer
/// than ``capacity`` exist, it is told to open one (the slot is reserved for it, so the pool never
/// grows beyond its capacity); when all are lent out it waits until one comes back. Connections
/// are opened lazily, so a store that is only written never opens one.
///
/// `@unchecked Sendable` is safe: the mutex and condition live at fixed heap addresses for the
/// object's life, and every access to the idle list and the count happens while holding the
/// mutex. A connection taken out of the pool is used by the one thread that took it until it is
/// handed back, so no connection is ever used by two threads at once.
final class ReaderPool: @unchecked Sendable {
    /// What ``checkOut()`` lends.
    enum Lease {
        /// An open connection that was idle.
        case idle(Connection)
        /// No connection is idle but a slot is free and now reserved: open a connection and hand
        /// it back with ``checkIn(_:)``, or give the slot up with ``abandon()``.
        case openNew
    }

    /// The most connections the pool holds.
    let capacity: Int
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let returned: UnsafeMutablePointer<pthread_cond_t>
    private var idle: [Connection] = []
    /// Connections idle, lent out, or being opened.
    private var count = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        returned = .allocate(capacity: 1)
        pthread_cond_init(returned, nil)
    }

    deinit {
        for connection in idle { connection.close() }
        pthread_cond_destroy(returned)
        pthread_mutex_destroy(mutex)
        returned.deallocate()
        mutex.deallocate()
    }

    /// `true` while the pool holds or lends a connection, or one is being opened for it.
    var hasConnections: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return count > 0
    }

    /// An idle connection, or the right to open one; waits while every connection is lent out.
    func checkOut() -> Lease {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let connection = idle.popLast() { return .idle(connection) }
            if count < capacity {
                count += 1
                return .openNew
            }
            pthread_cond_wait(returned, mutex)
        }
    }

    /// Hands a connection back (one lent by ``checkOut()`` or opened for an ``Lease/openNew``).
    func checkIn(_ connection: Connection) {
        pthread_mutex_lock(mutex)
        idle.append(connection)
        pthread_cond_signal(returned)
        pthread_mutex_unlock(mutex)
    }

    /// Gives up the slot of a connection that could not be opened or was closed after a failure.
    func abandon() {
        pthread_mutex_lock(mutex)
        count -= 1
        pthread_cond_signal(returned)
        pthread_mutex_unlock(mutex)
    }

    /// Closes every idle connection and empties the pool. The caller makes sure none is lent
    /// out (the store calls it while holding its gate exclusively, so no read is in progress).
    func closeAll() {
        pthread_mutex_lock(mutex)
        let connections = idle
        idle.removeAll()
        count = 0
        pthread_mutex_unlock(mutex)
        for connection in connections { connection.close() }
    }
}
