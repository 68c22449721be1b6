#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Names what kind of file a `stat` mode describes, for errors about a store path that is not a
/// regular file.
package enum FileKind {
    /// "a directory", "a FIFO", "a character device" … for the file type bits of `mode`.
    package static func describe(_ mode: UInt32) -> String {
        switch mode_t(mode) & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// What `stat` says of a path (following symbolic links).
    package struct Status: Sendable {
        /// `true` for a regular file.
        package let isRegularFile: Bool
        /// "a regular file", "a directory", "a FIFO" … (see ``describe(_:)``).
        package let kind: String
        /// The size in bytes.
        package let size: Int
        /// The device and inode: the same pair means the same file, whatever its path now.
        package let identity: Identity
    }

    /// Which file a path named: its device and inode numbers.
    package struct Identity: Sendable, Equatable {
        package let device: UInt64
        package let inode: UInt64
    }

    /// The ``Status`` of `path`, or the `errno` of the failed `stat` (`ENOENT`, `EACCES` …).
    package static func status(of path: String) -> (status: Status?, errno: Int32) {
        var info = stat()
        guard stat(path, &info) == 0 else { return (nil, errno) }
        let mode = UInt32(info.st_mode)
        return (
            Status(
                isRegularFile: mode_t(mode) & S_IFMT == S_IFREG, kind: describe(mode), size: Int(info.st_size),
                identity: Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))), 0
        )
    }

    /// `true` when `errno` means permission was denied.
    package static func isPermissionDenied(_ errno: Int32) -> Bool { errno == EACCES || errno == EPERM }

    /// `true` when the process may read `path` (`access(R_OK)`), or the check itself failed for
    /// another reason than a denied permission.
    package static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0 || !isPermissionDenied(errno)
    }
}
