import OfflineSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// The environments open in this process, by the device and inode of their directory.
///
/// LMDB forbids opening one environment twice in a process: the second handle's locks and
/// reader table would not see the first's, and closing either releases the other's POSIX file
/// locks, which can corrupt the environment. Paths are compared by file identity, so two
/// spellings of one directory (a symbolic link, `./x` and `x`) are recognised as the same.
enum EnvironmentRegistry {
    /// The identity of a directory.
    struct FileIdentity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    private static let open = Locked<Set<FileIdentity>>([])

    /// The identity of the directory at `path`, or `nil` when it cannot be read.
    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Records `identity` as open; `false` when it already is.
    static func claim(_ identity: FileIdentity) -> Bool {
        open.withLock { $0.insert(identity).inserted }
    }

    /// Forgets `identity` after its environment was closed.
    static func release(_ identity: FileIdentity) {
        _ = open.withLock { $0.remove(identity) }
    }
}
