#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the process does when a memory-mapped store file fails under it: LMDB maps its data file,
/// SQLite its `-shm` index, and a read of a page past the end of a file that another process
/// truncated (or a page the disk cannot read) raises `SIGBUS`, which would kill the process with a
/// signal and a backtrace.
///
/// Nothing can continue safely from there (the faulting read is inside the C library), so the
/// handler writes one line naming the cause and what to do, and exits with status 74 (`EX_IOERR`).
/// A write transaction in progress is not committed: LMDB and SQLite commit atomically, so what
/// was acknowledged before stays as it was written.
enum MappedFileFault {
    /// The line the handler writes, allocated before the handler can run (a handler may only call
    /// async-signal-safe functions: `write` and `_exit`, no allocation).
    nonisolated(unsafe) static var line: UnsafeMutablePointer<CChar>?

    /// The exit status after the fault.
    static let exitStatus: Int32 = 74

    /// Installs the handler for `SIGBUS` (once, at start).
    static func install() {
        line = strdup(
            "Error: a memory-mapped store file failed under this process: another process truncated or replaced it, or the disk could not read it. Stopped; the transaction in progress was not committed. Check the store with `offline-sync inspect` and restore it from a backup if it reports damage.\n"
        )
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in MappedFileFault.stop() }
        #else
            action.__sigaction_u.__sa_handler = { _ in MappedFileFault.stop() }
        #endif
        sigemptyset(&action.sa_mask)
        sigaction(SIGBUS, &action, nil)
    }

    /// Writes ``line`` to standard error and exits; async-signal-safe.
    static func stop() {
        if let line { _ = write(2, line, strlen(line)) }
        _exit(exitStatus)
    }
}
