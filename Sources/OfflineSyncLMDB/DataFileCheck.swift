import CLMDB
import OfflineSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Structural checks of an environment's `data.mdb`, so that a damaged file is refused with an
/// ``LMDBError`` of kind ``LMDBError/Kind/damaged`` instead of crashing the process.
///
/// LMDB pages carry no checksums and the engine trusts every page number, offset and length it
/// reads from its memory map: a truncated file makes it touch memory past the end of the file
/// (`SIGBUS`), and a garbage offset makes it read outside the map (`SIGSEGV`). The checks run in
/// two steps, both before LMDB follows any pointer of the file, and neither through the map:
///
/// 1. ``checkHeader(directory:)``, before `mdb_env_open`, reads both meta pages with `pread`:
///    flags, magic, format version, page size, last page number, and the two root pages they
///    name. LMDB itself would divide by a zero page size or map gigabytes for a garbage last
///    page.
/// 2. ``checkPages(handle:txn:directory:)``, inside the first read transaction (so another
///    process cannot recycle the pages being read), reads with `pread` every page reachable from
///    the meta page of that transaction: the main tree, each sub-database it names, their overflow pages
///    and the free-page tree. Every page must lie inside the file and below the last page
///    number, have the type its parent implies, be reached once only, keep its node offsets and
///    key and value sizes inside the page, and no free page may be reachable.
///
/// What passes these checks is safe for LMDB to follow. What they cannot see (pages carry no
/// checksums) is listed in the module article: payload bytes changed in place, keys out of order,
/// and damage done after the store was opened.
enum DataFileCheck {
    // The on-disk layout of LMDB 0.9 on a 64-bit platform (`mdb.c`: `MDB_page`, `MDB_node`,
    // `MDB_db`, `MDB_meta`).
    static let pageHeaderSize = 16
    static let nodeHeaderSize = 8
    static let databaseRecordSize = 48
    static let metaSize = 136
    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let invalidPage = UInt64.max
    static let maximumDepth = 32
    static let pageBranch: UInt16 = 0x01
    static let pageLeaf: UInt16 = 0x02
    static let pageOverflow: UInt16 = 0x04
    static let pageMeta: UInt16 = 0x08
    static let pageTypeMask: UInt16 = 0x6F
    static let nodeBigData: UInt16 = 0x01
    static let nodeSubDatabase: UInt16 = 0x02

    /// The fields of an `MDB_db` record that the walk follows.
    struct Database {
        let depth: Int
        let root: UInt64

        init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
            depth = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
            root = bytes.loadUnaligned(fromByteOffset: offset + 40, as: UInt64.self)
        }
    }

    /// The fields of an `MDB_meta` that the checks use.
    struct Meta {
        let flags: UInt16
        let magic: UInt32
        let version: UInt32
        let pageSize: Int
        let free: Database
        let main: Database
        let lastPage: UInt64
        let transaction: UInt64

        /// Reads the meta page whose first `pageHeaderSize + metaSize` bytes are `page`.
        init(page: UnsafeRawBufferPointer) {
            let meta = DataFileCheck.pageHeaderSize
            flags = page.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
            magic = page.loadUnaligned(fromByteOffset: meta, as: UInt32.self)
            version = page.loadUnaligned(fromByteOffset: meta + 4, as: UInt32.self)
            pageSize = Int(page.loadUnaligned(fromByteOffset: meta + 24, as: UInt32.self))
            free = Database(page, at: meta + 24)
            main = Database(page, at: meta + 72)
            lastPage = page.loadUnaligned(fromByteOffset: meta + 120, as: UInt64.self)
            transaction = page.loadUnaligned(fromByteOffset: meta + 128, as: UInt64.self)
        }
    }

    // MARK: - Before mdb_env_open

    /// Checks the meta pages of `directory/data.mdb` before LMDB maps the file. A missing file is
    /// fine (LMDB creates a new environment); an empty one is refused, since LMDB would silently
    /// start a new, empty environment over a store that was truncated to nothing. A data file
    /// that is not a regular file (a FIFO, a device) is refused without opening it.
    static func checkHeader(directory: String) throws {
        let file = directory + "/data.mdb"
        // Opening a FIFO would block until something writes to it, and a device is no data file.
        if let status = FileKind.status(of: file).status, !status.isRegularFile {
            throw damaged(
                directory, "'\(file)' is not a regular file (\(status.kind)), so it cannot be an LMDB data file")
        }
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return }  // missing: a new environment; other failures: LMDB reports them
        defer { close(descriptor) }
        var size = try fileSize(descriptor, file: file, directory: directory)
        // A process creating the environment right now writes the meta pages just after creating
        // the file: give it a moment before calling an empty file damaged.
        var waits = 0
        while size == 0 && waits < 20 {
            usleep(50_000)
            waits += 1
            size = try fileSize(descriptor, file: file, directory: directory)
        }
        guard size > 0 else {
            throw damaged(directory, "'\(file)' is empty (0 bytes): the data file was truncated")
        }
        let headerSize = pageHeaderSize + metaSize
        var buffer = [UInt8](repeating: 0, count: headerSize)
        let first = try readMeta(descriptor, at: 0, into: &buffer, fileSize: size, file: file, directory: directory)
        try checkMeta(first, number: 0, file: file, directory: directory)
        guard size >= 2 * first.pageSize else {
            throw damaged(
                directory,
                "'\(file)' is truncated: \(size) bytes cannot hold its two meta pages of \(first.pageSize) bytes")
        }
        let second = try readMeta(
            descriptor, at: first.pageSize, into: &buffer, fileSize: size, file: file, directory: directory)
        try checkMeta(second, number: 1, file: file, directory: directory)
        guard second.pageSize == first.pageSize else {
            throw damaged(
                directory,
                "'\(file)' has meta pages of different page sizes (\(first.pageSize) and \(second.pageSize))")
        }
    }

    private static func fileSize(_ descriptor: Int32, file: String, directory: String) throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw LMDBError(code: errno, operation: "fstat('\(file)')", path: directory)
        }
        return Int(info.st_size)
    }

    private static func readMeta(
        _ descriptor: Int32, at offset: Int, into buffer: inout [UInt8], fileSize: Int, file: String,
        directory: String
    ) throws -> Meta {
        let count = buffer.count
        let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard read >= 0 else { throw LMDBError(code: errno, operation: "pread('\(file)')", path: directory) }
        guard read == count else {
            throw damaged(
                directory, "'\(file)' is truncated: \(fileSize) bytes end inside the meta page at byte \(offset)")
        }
        return buffer.withUnsafeBytes { Meta(page: $0) }
    }

    private static func checkMeta(_ meta: Meta, number: Int, file: String, directory: String) throws {
        // Named only in an error (an open checks the meta pages three times).
        var which: String { "meta page \(number) of '\(file)'" }
        guard meta.flags & pageMeta != 0, meta.magic == magic else {
            throw LMDBError(
                .notAnEnvironment, code: MDB_INVALID,
                reason: "\(which) does not carry LMDB's magic number: the file is not an LMDB data file or is damaged",
                operation: "checking the data file", path: directory,
                advice:
                    "restore the directory from a backup, or delete it and pull the data again; if it holds another program's file, point the store at a new directory"
            )
        }
        guard meta.version == dataVersion else {
            throw LMDBError(
                .notAnEnvironment, code: MDB_VERSION_MISMATCH,
                reason: "\(which) has format version \(meta.version); LMDB 0.9 reads version \(dataVersion)",
                operation: "checking the data file", path: directory,
                advice:
                    "open it with the LMDB version that wrote it, restore the directory from a backup, or delete it and pull the data again"
            )
        }
        guard (512...32768).contains(meta.pageSize), meta.pageSize & (meta.pageSize - 1) == 0 else {
            throw damaged(directory, "\(which) names an impossible page size of \(meta.pageSize) bytes")
        }
        guard meta.lastPage >= 1, meta.lastPage < UInt64(Int.max / meta.pageSize) else {
            throw damaged(directory, "\(which) names an impossible last page number \(meta.lastPage)")
        }
        for (name, database) in [("free-page", meta.free), ("main", meta.main)] {
            try checkRoot(database, lastPage: meta.lastPage, what: "the \(name) tree of \(which)", directory: directory)
        }
    }

    private static func checkRoot(
        _ database: Database, lastPage: UInt64, what: @autoclosure () -> String, directory: String
    ) throws {
        guard database.root != invalidPage else { return }
        guard database.root >= 2, database.root <= lastPage else {
            throw damaged(directory, "\(what()) starts at page \(database.root), outside pages 2…\(lastPage)")
        }
        guard (1...maximumDepth).contains(database.depth) else {
            throw damaged(directory, "\(what()) claims an impossible depth of \(database.depth)")
        }
    }

    // MARK: - Inside the first read transaction

    /// Walks every page reachable from the meta page of read transaction `txn`, reading each with
    /// `pread` after checking that it lies inside the file (LMDB 0.9 does not expose the address
    /// of its map, and `pread` cannot fault on a page beyond the end of the file). Returns
    /// `false` when the meta page of the transaction was overwritten meanwhile (two commits by
    /// another process): begin a new transaction and check again.
    static func checkPages(handle: OpaquePointer, txn: OpaquePointer, directory: String) throws -> Bool {
        let file = directory + "/data.mdb"
        var statistics = MDB_stat()
        var descriptor: Int32 = -1
        guard mdb_env_stat(handle, &statistics) == 0, mdb_env_get_fd(handle, &descriptor) == 0 else {
            throw damaged(directory, "LMDB could not describe the environment of '\(file)'")
        }
        let pageSize = Int(statistics.ms_psize)
        let size = try fileSize(descriptor, file: file, directory: directory)
        let transaction = UInt64(mdb_txn_id(txn))
        let slot = Int(transaction & 1)
        var buffer = [UInt8](repeating: 0, count: pageHeaderSize + metaSize)
        let meta = try readMeta(
            descriptor, at: slot * pageSize, into: &buffer, fileSize: size, file: file, directory: directory)
        guard meta.transaction == transaction else { return false }
        try checkMeta(meta, number: slot, file: file, directory: directory)
        var walk = PageWalk(
            descriptor: descriptor, pageSize: pageSize, fileSize: size, lastPage: meta.lastPage, file: file,
            directory: directory)
        try walk.tree(meta.main, name: .main, isMain: true)
        try walk.tree(meta.free, name: .free, isFree: true)
        try walk.checkFreePagesUnreachable()
        return true
    }

    /// The error for a damaged data file.
    static func damaged(_ directory: String, _ reason: String) -> LMDBError {
        LMDBError(
            .damaged, code: MDB_CORRUPTED, reason: reason, operation: "checking the data file", path: directory,
            advice:
                "the store cannot be read safely; restore the directory from a backup, or delete it and pull the data again (local changes not yet pushed are lost)"
        )
    }
}

/// The tree a page belongs to, named only in an error (a sub-database's name is quoted then,
/// not for every sub-database of every check).
private enum TreeName: CustomStringConvertible {
    case main
    case free
    /// A sub-database, by the bytes of its name.
    case sub([UInt8])

    var description: String {
        switch self {
        case .main: "the main tree"
        case .free: "the free-page tree"
        case .sub(let name): "sub-database '\(String.quotedForError(name[...]))'"
        }
    }
}

/// One pass over the pages of a snapshot (see ``DataFileCheck/checkPages(handle:txn:directory:)``).
private struct PageWalk {
    let descriptor: Int32
    let pageSize: Int
    let pagesInFile: UInt64
    let lastPage: UInt64
    let file: String
    let directory: String
    /// One bit per page of the file: reached from a tree.
    private var reached: [UInt64]
    /// The pages the free-page tree lists.
    private var freePages: [UInt64] = []
    /// How many pages the walk is inside of (the index of the next page's buffer).
    private var depth = 0
    /// The page buffers, one per depth.
    private let pages = PageBuffers()

    init(descriptor: Int32, pageSize: Int, fileSize: Int, lastPage: UInt64, file: String, directory: String) {
        self.descriptor = descriptor
        self.pageSize = pageSize
        self.pagesInFile = UInt64(fileSize / pageSize)
        self.lastPage = lastPage
        self.file = file
        self.directory = directory
        self.reached = Array(repeating: 0, count: Int(min(pagesInFile, lastPage + 1) / 64 + 1))
        // A small file is read in one `pread` (a few hundred page-sized reads cost more than
        // the copy); a larger one page by page, as the walk reaches them.
        let pagesToRead = min(pagesInFile, lastPage + 1)
        if pagesToRead <= UInt64(PageBuffers.wholeFileLimit / pageSize) {
            pages.readWholeFile(descriptor: descriptor, pages: Int(pagesToRead), pageSize: pageSize)
        }
    }

    private func damaged(_ reason: String) -> LMDBError {
        DataFileCheck.damaged(directory, "'\(file)' is damaged: \(reason)")
    }

    /// Marks `count` pages from `page` as reached after checking they lie inside the file. `what`
    /// names the pointer in an error; it is only made when the check fails.
    private mutating func claim(_ page: UInt64, count: UInt64 = 1, from what: @autoclosure () -> String) throws {
        var span: String { count > 1 ? " (+\(count - 1))" : "" }
        guard page >= 2, count >= 1, page <= lastPage, count - 1 <= lastPage - page else {
            throw damaged("\(what()) points to page \(page)\(span), outside pages 2…\(lastPage)")
        }
        guard page + count <= pagesInFile else {
            throw damaged(
                "\(what()) points to page \(page)\(span) beyond the end of the file (\(pagesInFile) pages): the file was truncated"
            )
        }
        for number in page..<(page + count) {
            let word = Int(number / 64)
            let bit: UInt64 = 1 << (number % 64)
            guard reached[word] & bit == 0 else { throw damaged("page \(number) is reached twice (\(what()))") }
            reached[word] |= bit
        }
    }

    /// `count` bytes of the file from `offset` bytes into page `number` (a claimed page).
    private func read(page number: UInt64, offset: Int = 0, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let start = off_t(Int(number) * pageSize + offset)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, start) }
        guard read >= 0 else { throw LMDBError(code: errno, operation: "pread('\(file)')", path: directory) }
        guard read == count else { throw damaged("page \(number) ends early: the file was truncated") }
        return bytes
    }

    /// Walks the tree of `database`.
    mutating func tree(
        _ database: DataFileCheck.Database, name: TreeName, isMain: Bool = false, isFree: Bool = false
    ) throws {
        guard database.root != DataFileCheck.invalidPage else { return }
        try claim(database.root, from: "the root of \(name)")
        try node(page: database.root, level: database.depth, name: name, isMain: isMain, isFree: isFree)
    }

    private mutating func node(page number: UInt64, level: Int, name: TreeName, isMain: Bool, isFree: Bool) throws {
        // One buffer per depth of the walk (a sub-database's tree continues below a leaf of the
        // main tree), reused from page to page instead of a zeroed array per page.
        let buffer: UnsafeMutableRawBufferPointer
        if let page = pages.wholeFilePage(number, pageSize: pageSize) {
            buffer = page
        } else {
            buffer = pages.buffer(depth: depth, pageSize: pageSize)
            let read = pread(descriptor, buffer.baseAddress, pageSize, off_t(Int(number) * pageSize))
            guard read >= 0 else { throw LMDBError(code: errno, operation: "pread('\(file)')", path: directory) }
            guard read == pageSize else { throw damaged("page \(number) ends early: the file was truncated") }
        }
        self.depth += 1
        defer { self.depth -= 1 }
        try node(UnsafeRawBufferPointer(buffer), page: number, level: level, name: name, isMain: isMain, isFree: isFree)
    }

    private mutating func node(
        _ bytes: UnsafeRawBufferPointer, page number: UInt64, level: Int, name: TreeName, isMain: Bool, isFree: Bool
    ) throws {
        let recorded = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        guard recorded == number else { throw damaged("page \(number) of \(name) is labelled page \(recorded)") }
        let flags = bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & DataFileCheck.pageTypeMask
        let lower = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(bytes.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        let expected = level > 1 ? DataFileCheck.pageBranch : DataFileCheck.pageLeaf
        guard flags == expected else {
            throw damaged(
                "page \(number) of \(name) has flags \(flags), expected a \(level > 1 ? "branch" : "leaf") page")
        }
        guard lower >= DataFileCheck.pageHeaderSize, lower <= upper, upper <= pageSize,
            (lower - DataFileCheck.pageHeaderSize) % 2 == 0
        else {
            throw damaged("page \(number) of \(name) has free-space bounds \(lower)…\(upper) outside the page")
        }
        let count = (lower - DataFileCheck.pageHeaderSize) / 2
        guard count > 0 || level == 1 else { throw damaged("branch page \(number) of \(name) holds no entries") }
        for index in 0..<count {
            let offset = Int(
                bytes.loadUnaligned(fromByteOffset: DataFileCheck.pageHeaderSize + 2 * index, as: UInt16.self))
            // Named only for an error: making this text for every entry cost more than the check.
            func entry() -> String { "entry \(index) of \(level > 1 ? "branch" : "leaf") page \(number) of \(name)" }
            guard offset >= upper, offset + DataFileCheck.nodeHeaderSize <= pageSize else {
                throw damaged("\(entry()) lies outside the page (offset \(offset))")
            }
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self))
            let nodeFlags = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            let keySize = Int(bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self))
            let dataStart = offset + DataFileCheck.nodeHeaderSize + keySize
            guard dataStart <= pageSize else { throw damaged("the key of \(entry()) runs past the page") }
            if level > 1 {
                let child = low | high << 16 | UInt64(nodeFlags) << 32
                try claim(child, from: entry())
                try node(page: child, level: level - 1, name: name, isMain: isMain, isFree: isFree)
                continue
            }
            let dataSize = Int(low | high << 16)
            switch nodeFlags {
            case 0:
                guard dataSize <= pageSize - dataStart else {
                    throw damaged("the value of \(entry()) runs past the page")
                }
                if isFree {
                    try listFree(UnsafeRawBufferPointer(rebasing: bytes[dataStart..<dataStart + dataSize]), entry())
                }
            case DataFileCheck.nodeBigData:
                guard 8 <= pageSize - dataStart else { throw damaged("the value of \(entry()) runs past the page") }
                let first = bytes.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self)
                let pages = UInt64((DataFileCheck.pageHeaderSize + dataSize + pageSize - 1) / pageSize)
                try claim(first, count: 1, from: entry())
                let header = try read(page: first, count: DataFileCheck.pageHeaderSize)
                // The run may hold more pages than the value needs: LMDB overwrites a value in
                // place when the new one fits the overflow run it dirtied earlier in the same
                // transaction, and keeps the run's length (`mdb_cursor_put`, "Is the ov page
                // large enough?").
                var runPages: UInt64 = 0
                let valid = header.withUnsafeBytes { header in
                    runPages = UInt64(header.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                    return header.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == first
                        && header.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & DataFileCheck.pageTypeMask
                            == DataFileCheck.pageOverflow
                        && runPages >= pages
                }
                guard valid else {
                    throw damaged("the overflow pages of \(entry()) (from page \(first)) are not a valid overflow run")
                }
                if runPages > 1 { try claim(first + 1, count: runPages - 1, from: entry()) }
                if isFree {
                    let value = try read(page: first, offset: DataFileCheck.pageHeaderSize, count: dataSize)
                    try value.withUnsafeBytes { try listFree($0, entry()) }
                }
            case DataFileCheck.nodeSubDatabase where isMain:
                guard dataSize == DataFileCheck.databaseRecordSize, dataSize <= pageSize - dataStart else {
                    throw damaged("the sub-database record of \(entry()) has \(dataSize) bytes")
                }
                let database = DataFileCheck.Database(bytes, at: dataStart)
                let subName = TreeName.sub(Array(bytes[offset + 8..<dataStart]))
                if database.root != DataFileCheck.invalidPage {
                    guard (1...DataFileCheck.maximumDepth).contains(database.depth) else {
                        throw damaged("\(subName) claims an impossible depth of \(database.depth)")
                    }
                }
                try tree(database, name: subName)
            default:
                throw damaged("\(entry()) has unexpected flags \(nodeFlags)")
            }
        }
    }

    /// Records the page numbers of one free-page list (a count, then that many page numbers).
    private mutating func listFree(_ value: UnsafeRawBufferPointer, _ entry: @autoclosure () -> String) throws {
        guard value.count >= 8, value.count % 8 == 0 else {
            throw damaged("the free-page list of \(entry()) has \(value.count) bytes")
        }
        let count = value.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        guard count == UInt64(value.count / 8 - 1) else {
            throw damaged("the free-page list of \(entry()) claims \(count) pages in \(value.count) bytes")
        }
        for index in 0..<Int(count) {
            let number = value.loadUnaligned(fromByteOffset: 8 * (index + 1), as: UInt64.self)
            guard number >= 2, number <= lastPage else {
                throw damaged("the free-page list of \(entry()) names page \(number), outside pages 2…\(lastPage)")
            }
            freePages.append(number)
        }
    }

    /// Fails when a page listed as free is also part of a tree (a later write would overwrite it).
    func checkFreePagesUnreachable() throws {
        for number in freePages where number < pagesInFile {
            let word = Int(number / 64)
            if word < reached.count, reached[word] & (1 << (number % 64)) != 0 {
                throw damaged("page \(number) is listed as free but is still in use")
            }
        }
    }
}

/// Page-sized buffers for ``PageWalk``, one per depth of the walk, and the whole file when it is
/// small, kept until the walk ends.
private final class PageBuffers {
    /// Files up to this size are read whole.
    static let wholeFileLimit = 4 << 20
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    /// The whole-file buffer (at least ``wholePages`` pages), whose first ``wholePages`` pages
    /// hold the file's.
    private var whole: UnsafeMutableRawBufferPointer?
    private var wholePages = 0

    /// The largest whole-file buffer a finished walk gave back, for the next walk. A new buffer
    /// per open made the cold open's cost depend on the heap: when glibc served it from fresh
    /// pages (`mmap`), faulting them in was most of the open's page faults (24,184 of the store
    /// side's 28,333 with `MALLOC_MMAP_THRESHOLD_=131072`, LMDB cold open 0.28 against 0.60;
    /// BENCHMARKS.md, "LMDB"). Keeps at most ``wholeFileLimit`` bytes for the process.
    private static let spare = Locked<SpareBuffer?>(nil)

    /// A buffer owned by whoever holds it (here: the lock).
    private struct SpareBuffer: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer
    }

    /// Reads the first `pages` pages of the file; on a short read (the file shrank) or an error
    /// the walk reads page by page instead, and reports what it finds.
    func readWholeFile(descriptor: Int32, pages: Int, pageSize: Int) {
        guard pages > 0 else { return }
        let count = pages * pageSize
        let bytes = PageBuffers.takeSpare(atLeast: count)
        var done = 0
        while done < count {
            let read = pread(descriptor, bytes.baseAddress! + done, count - done, off_t(done))
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { break }
            done += read
        }
        whole = bytes
        guard done == count else { return }
        wholePages = pages
    }

    /// The spare buffer when it holds `count` bytes, otherwise a new one of `count` bytes.
    private static func takeSpare(atLeast count: Int) -> UnsafeMutableRawBufferPointer {
        let taken = spare.withLock { spare -> UnsafeMutableRawBufferPointer? in
            guard let buffer = spare?.bytes, buffer.count >= count else { return nil }
            spare = nil
            return buffer
        }
        return taken ?? .allocate(byteCount: count, alignment: 16)
    }

    /// Keeps `buffer` for the next walk when it is larger than the spare kept (freeing the
    /// smaller of the two).
    private static func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
        let freed = spare.withLock { spare -> UnsafeMutableRawBufferPointer? in
            if let kept = spare?.bytes, kept.count >= buffer.count { return buffer }
            defer { spare = SpareBuffer(bytes: buffer) }
            return spare?.bytes
        }
        freed?.deallocate()
    }

    /// Page `number` of the whole-file read, or `nil` when it was not read that way.
    func wholeFilePage(_ number: UInt64, pageSize: Int) -> UnsafeMutableRawBufferPointer? {
        guard let whole, number < UInt64(wholePages) else { return nil }
        let start = Int(number) * pageSize
        return UnsafeMutableRawBufferPointer(rebasing: whole[start..<start + pageSize])
    }

    /// The buffer of `depth`, allocated on first use.
    func buffer(depth: Int, pageSize: Int) -> UnsafeMutableRawBufferPointer {
        while buffers.count <= depth {
            buffers.append(.allocate(byteCount: pageSize, alignment: 16))
        }
        return buffers[depth]
    }

    deinit {
        for buffer in buffers { buffer.deallocate() }
        if let whole { PageBuffers.giveBack(whole) }
    }
}
