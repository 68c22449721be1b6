import Foundation
import OfflineSync
import OfflineSyncSQLite
import Testing

/// A write-ahead log holding committed transactions that SQLite would drop (a damaged header, a
/// damaged frame before a later commit) is refused and left as it was; what a killed process
/// leaves (an unfinished transaction, a torn last frame) opens with every committed row.
@Suite("a damaged write-ahead log is refused, a torn one is not")
struct WriteAheadLogCheckTests {
    static let table = TableSchema("t", columns: [Column("s", .string)], synced: false)

    /// A copy, at `copy`, of a store and its log as a process killed after `transactions`
    /// commits of 20 rows each leaves them (the files taken while the store is open).
    static func killedStore(_ backend: SQLBackend, copy: String, in directory: TemporaryDirectory, transactions: Int)
        throws
    {
        let path = directory.file("live-\(backend.name)")
        let store = try backend.make(path)
        try store.open(schema: StoreSchema([table]))
        for batch in 0..<transactions {
            try store.upsert(
                (0..<20).map { Item(id: "r\(batch)-\($0)", values: ["s": .string(String(repeating: "x", count: 100))]) },
                into: "t")
        }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        try store.close()
    }

    static func rowCount(_ backend: SQLBackend, _ path: String) throws -> Int {
        let store = try backend.make(path)
        try store.open(schema: StoreSchema([table]))
        defer { try? store.close() }
        return try store.read(Query(table: "t")).items.count
    }

    static func log(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) }

    static func damage(_ path: String, at offset: Int) throws {
        var bytes = try log(path)
        bytes[offset] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path + "-wal"))
    }

    @Test("the copy of a live store opens with every committed row", arguments: SQLBackend.all)
    func intactLogOpens(backend: SQLBackend) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("copy")
        try Self.killedStore(backend, copy: path, in: directory, transactions: 5)
        #expect(try Self.log(path).count > 32, "the committed rows are in the log")
        #expect(try Self.rowCount(backend, path) == 100)
    }

    @Test(
        "a damaged log header or a damaged frame before a later commit is refused, naming the log; both files are left as they were",
        arguments: SQLBackend.all, ["header", "first frame's page", "first frame's salt"])
    func damagedLogIsRefused(backend: SQLBackend, place: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("copy")
        try Self.killedStore(backend, copy: path, in: directory, transactions: 5)
        let offset =
            switch place {
            case "header": 12
            case "first frame's salt": 32 + 9
            default: 32 + 24 + 300
            }
        try Self.damage(path, at: offset)
        let log = try Self.log(path)
        let main = try Data(contentsOf: URL(fileURLWithPath: path))

        let store = try backend.make(path)
        let error = try #require(throws: OfflineSyncError.self) { try store.open(schema: StoreSchema([Self.table])) }
        #expect(error.code == .storage)
        #expect(error.message.contains(path + "-wal") && error.message.contains("damaged"), "\(error)")
        #expect(error.message.contains("restore") && error.message.contains("move the log away"), "\(error)")
        #expect(try Self.log(path) == log, "the log was changed")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == main, "the store file was changed")
    }

    @Test("a log cut inside its last frame, as a killed writer leaves it, opens with the transactions before")
    func tornLastFrameOpens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("copy")
        try Self.killedStore(.sqlite, copy: path, in: directory, transactions: 5)
        let log = try Self.log(path)
        try log.prefix(log.count - 100).write(to: URL(fileURLWithPath: path + "-wal"))
        let count = try Self.rowCount(.sqlite, path)
        #expect(count == 80, "the last transaction is torn, the four before it are kept: \(count)")
    }

    @Test("a damaged frame in the last transaction is what a torn write leaves: it opens without that transaction")
    func damagedLastTransactionOpens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("copy")
        try Self.killedStore(.sqlite, copy: path, in: directory, transactions: 5)
        let log = try Self.log(path)
        try Self.damage(path, at: log.count - 100)
        #expect(try Self.rowCount(.sqlite, path) == 80)
    }
}

/// A bit flipped in SQLite's own record of a table (a column's name or type) passes SQLite's
/// integrity check but changes what every statement reads; the store refuses to open.
@Suite("a damaged table definition is refused")
struct TableDefinitionCheckTests {
    @Test(arguments: ["\"u\" TEXT", "\"s\" TEXU"])
    func damagedDefinitionIsRefused(damaged: String) throws {
        let original = "\"s\" TEXT"
        let directory = try TemporaryDirectory()
        let path = directory.file("store.sqlite")
        let store = SQLiteStore(path: path)
        try store.open(schema: StoreSchema([WriteAheadLogCheckTests.table]))
        try store.upsert([Item(id: "a", values: ["s": "hello"])], into: "t")
        try store.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let range = try #require(bytes.range(of: Data(original.utf8)))
        bytes.replaceSubrange(range, with: Data(damaged.utf8))
        try bytes.write(to: URL(fileURLWithPath: path))

        let reopened = SQLiteStore(path: path)
        let error = try #require(throws: OfflineSyncError.self) {
            try reopened.open(schema: StoreSchema([WriteAheadLogCheckTests.table]))
        }
        #expect(error.code == .storage)
        #expect(error.message.contains("'s'") && error.message.contains("damaged"), "\(error)")
    }
}
