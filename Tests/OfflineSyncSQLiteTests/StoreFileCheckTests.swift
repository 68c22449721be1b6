import Foundation
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// Opening a file that holds no database refuses it and leaves it, and its write-ahead log, byte
/// for byte as it was.
@Suite("files that are not whole databases are refused and left untouched")
struct StoreFileCheckTests {
    /// The bytes of a store of `backend` with a few items, closed.
    private static func storeBytes(_ backend: SQLBackend, in directory: TemporaryDirectory) throws -> Data {
        let path = directory.file("whole-\(backend.name)")
        let store = try backend.make(path)
        try store.open(schema: Corpus.schema)
        try store.upsert(Corpus.items, into: "t")
        try store.close()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The files SQLite makes beside a database, which a refused open must not make either.
    private static func companions(of path: String) -> [String] {
        ["-wal", "-shm", "-journal"].map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }

    @Test(arguments: SQLBackend.all, [1, 60, 99, 100, 511])
    func aFileTooShortForOnePageIsRefusedAndLeftUntouched(backend: SQLBackend, size: Int) throws {
        let directory = try TemporaryDirectory()
        let whole = try StoreFileCheckTests.storeBytes(backend, in: directory)
        let path = directory.file("short")
        let bytes = whole.prefix(size)
        try bytes.write(to: URL(fileURLWithPath: path))

        let store = try backend.make(path)
        let error = try #require(throws: OfflineSyncError.self) { try store.open(schema: Corpus.schema) }
        #expect(error.code == .storage)
        #expect(error.message.contains(path) && error.message.contains("\(size) byte"), "\(error)")
        #expect(error.message.contains("restore"), "\(error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "the short file was changed")
        #expect(StoreFileCheckTests.companions(of: path).isEmpty)
    }

    @Test func aPlainFileWithoutTheSQLiteHeaderIsRefusedAndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("not-a-database")
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try bytes.write(to: URL(fileURLWithPath: path))

        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path).open(schema: Corpus.schema) }
        #expect(error.code == .notADatabase)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "the file was changed")
        #expect(StoreFileCheckTests.companions(of: path).isEmpty)
    }

    @Test(arguments: SQLBackend.all)
    func aFileOfOnePageOfNoiseIsLeftUntouched(backend: SQLBackend) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("noise")
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 3) })
        try bytes.write(to: URL(fileURLWithPath: path))

        #expect(throws: (any Error).self) { try backend.make(path).open(schema: Corpus.schema) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes, "the file was changed")
    }

    @Test(arguments: SQLBackend.all, [nil, 0, 1] as [Int?])
    func aWriteAheadLogBesideAMissingOrShortFileIsKept(backend: SQLBackend, mainSize: Int?) throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source")
        let store = try backend.make(source)
        try store.open(schema: Corpus.schema)
        try store.upsert(Corpus.items, into: "t")
        let log = try Data(contentsOf: URL(fileURLWithPath: source + "-wal"))
        try store.close()
        #expect(!log.isEmpty)

        let path = directory.file("lost-main")
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
        if let mainSize { try Data(repeating: 0x78, count: mainSize).write(to: URL(fileURLWithPath: path)) }

        let error = try #require(throws: OfflineSyncError.self) { try backend.make(path).open(schema: Corpus.schema) }
        #expect(error.code == .storage)
        #expect(error.message.contains(path + "-wal"), "\(error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == log, "the write-ahead log was changed")
        #expect(FileManager.default.fileExists(atPath: path) == (mainSize != nil))
    }

    @Test(arguments: SQLBackend.all)
    func aMissingFileIsStillANewStore(backend: SQLBackend) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new")
        let store = try backend.make(path)
        try store.open(schema: Corpus.schema)
        try store.upsert(Corpus.items, into: "t")
        try store.close()
        let reopened = try backend.make(path)
        try reopened.open(schema: Corpus.schema)
        #expect(try reopened.read(Query(table: "t")).items.count == Corpus.items.count)
        try reopened.close()
    }
}

