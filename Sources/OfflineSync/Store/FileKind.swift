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
}
