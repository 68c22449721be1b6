#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`), which bounds the connections a server
/// can hold: every connection is a file descriptor.
enum OpenFileLimit {
    /// The descriptors kept for everything but connections: the listening socket, the store's
    /// files (an SQLite store opens its database, WAL and shared-memory files per connection),
    /// logs, the event loops' own descriptors.
    static let reserve = 64

    /// Raises the soft limit toward `needed` (up to the hard limit) and returns the soft limit in
    /// force afterwards; `nil` when the limit cannot be read.
    static func raise(toward needed: Int) -> Int? {
        // RLIM_INFINITY, all bits set (the C macro does not import as an unsigned constant).
        let infinity = rlim_t.max
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        let wanted = rlim_t(clamping: needed)
        if limit.rlim_cur != infinity, limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == infinity ? wanted : min(wanted, limit.rlim_max)
            if setrlimit(resourceNumber, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == infinity ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// The connection cap the process can hold: `requested` when the open-file limit (raised as
    /// far as allowed) leaves room for it and ``reserve``, else what it leaves room for (at least
    /// 1). `limit` is the soft limit in force.
    static func connectionCap(requested: Int) -> (cap: Int, limit: Int?) {
        let needed = requested.addingReportingOverflow(reserve)
        guard let limit = raise(toward: needed.overflow ? Int.max : needed.partialValue) else {
            return (requested, nil)
        }
        guard limit - reserve < requested else { return (requested, limit) }
        return (max(1, limit - reserve), limit)
    }

    #if canImport(Glibc)
    private static var resourceNumber: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)) }
    #else
    private static var resourceNumber: Int32 { RLIMIT_NOFILE }
    #endif
}
