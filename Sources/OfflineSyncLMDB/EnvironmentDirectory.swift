#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checks and creates the directory that holds an environment (`data.mdb` and `lock.mdb`).
enum EnvironmentDirectory {
    /// Creates `path` (and missing parents) when absent; refuses a file, and a non-empty
    /// directory that holds no environment, so the store never litters a foreign directory.
    static func prepare(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let failure = errno
            guard failure == ENOENT else { throw LMDBError(code: failure, operation: "stat", path: path) }
            try makeDirectories(path)
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw LMDBError(
                .notAnEnvironment, code: ENOTDIR, reason: "the path is a file, not an LMDB environment directory",
                operation: "opening the environment", path: path,
                advice:
                    "give the path of a directory (new or empty); the store keeps 'data.mdb' and 'lock.mdb' inside it")
        }
        // An existing environment (the usual case) is recognised without listing the directory.
        if access(path + "/data.mdb", F_OK) == 0 { return }
        let entries = try names(in: path)
        guard entries.isEmpty || entries.contains("data.mdb") || entries.contains("lock.mdb") else {
            throw LMDBError(
                .notAnEnvironment, code: 0, reason: "the directory is not empty and holds no 'data.mdb'",
                operation: "opening the environment", path: path,
                advice: "point the store at a new or empty directory, or at one that holds an LMDB environment")
        }
    }

    /// The size liblmdb 0.9 gives `lock.mdb` for ``LMDBEnvironment/maximumReaders`` readers on a
    /// 64-bit platform: a 192-byte `MDB_txninfo` holding the first reader slot, then 64 bytes for
    /// each further slot.
    static let lockFileSize = 192 + 64 * (Int(LMDBEnvironment.maximumReaders) - 1)

    /// Allocates the disk blocks of `lock.mdb` before LMDB maps it. LMDB extends a new lock file
    /// with `ftruncate`, which leaves a hole, and then writes to it through the memory map: on a
    /// full disk that write has no block to land on and the process dies of `SIGBUS`. With the
    /// blocks allocated here, a full disk is an error at open instead.
    static func allocateLockFile(in path: String) throws {
        let file = path + "/lock.mdb"
        let descriptor = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }  // LMDB reports why it cannot open the lock file
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) < lockFileSize else { return }
        let code = allocateBlocks(descriptor, byteCount: lockFileSize)
        if code == ENOSPC || code == EDQUOT {
            throw LMDBError(code: code, operation: "allocating '\(file)'", path: path)
        }
    }

    /// Allocates the first `byteCount` bytes of the open file, returning 0 or an `errno` code:
    /// `posix_fallocate` where the C library has it; elsewhere (Apple platforms) by writing the
    /// missing bytes as zeros, which allocates their blocks just the same.
    private static func allocateBlocks(_ descriptor: Int32, byteCount: Int) -> Int32 {
        #if os(Linux)
            return posix_fallocate(descriptor, 0, off_t(byteCount))
        #else
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return errno }
            let zeros = [UInt8](repeating: 0, count: byteCount - min(Int(info.st_size), byteCount))
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, info.st_size) }
            return written == zeros.count ? 0 : (written < 0 ? errno : ENOSPC)
        #endif
    }

    private static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw LMDBError(code: errno, operation: "mkdir('\(prefix)')", path: path)
            }
            prefix += "/"
        }
    }

    private static func names(in path: String) throws -> Set<String> {
        guard let directory = opendir(path) else { throw LMDBError(code: errno, operation: "opendir", path: path) }
        defer { closedir(directory) }
        var names: Set<String> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.insert(name) }
        }
        return names
    }
}
