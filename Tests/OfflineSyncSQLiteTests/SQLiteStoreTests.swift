import CSQLite
import Foundation
import OfflineSync
import OfflineSyncSQLite
import Testing

/// Behaviour specific to the SQLite file format and library: the file, schema evolution, errors.
@Suite struct SQLiteStoreTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func openStore(
        _ name: String = "store.db", options: SQLStoreOptions = SQLStoreOptions(),
        schema: StoreSchema = Corpus.schema
    ) throws -> SQLiteStore {
        let store = SQLiteStore(path: directory.file(name), options: options)
        try store.open(schema: schema)
        return store
    }

    private func item(_ id: String, _ text: String) -> Item {
        Item(id: id, values: ["s": .string(text)])
    }

    @Test func theFileIsReadableByTheSqlite3Tool() throws {
        defer { directory.remove() }
        let store = try openStore()
        try store.upsert(Corpus.items, into: "t")
        try store.close()
        let rows = try sqlite3Tool(
            directory.file("store.db"),
            "SELECT id, i FROM t WHERE id IN ('a', 'B') ORDER BY id; PRAGMA integrity_check;")
        #expect(rows == "B|9223372036854775807\na|0\nok\n")
    }

    @Test func reportsTheSystemSQLiteVersion() throws {
        defer { directory.remove() }
        let store = SQLiteStore(path: directory.file("store.db"))
        #expect(store.sqliteVersion.hasPrefix("3.40."))
        #expect(store.info.properties.contains(StoreInfo.Property("SQLite version", store.sqliteVersion)))
    }

    @Test func reopeningWithNewColumnsAndIndexesWidensTheStoredSchema() throws {
        defer { directory.remove() }
        let first = TableSchema("notes", columns: [Column("text", .string)])
        let store = try openStore(schema: StoreSchema([first]))
        try store.upsert([Item(id: "n1", values: ["text": "old"])], into: "notes")
        try store.close()

        let wider = TableSchema(
            "notes", columns: [Column("text", .string), Column("rank", .double)],
            indexes: [TableIndex("by_rank", on: ["rank"])])
        try store.open(schema: StoreSchema([wider, TableSchema("tags", columns: [])]))
        try store.upsert([Item(id: "n2", values: ["text": "new", "rank": -0.0])], into: "notes")
        #expect(try store.lookup(table: "notes", id: "n1") == Item(id: "n1", values: ["text": "old"]))
        #expect(try store.lookup(table: "notes", id: "n2")?["rank"] == .double(-0.0))
        try store.close()

        try store.open(schema: StoreSchema([first]))
        let tables = try store.schema.tables.map(\.name)
        #expect(tables == ["notes", "tags"])
        #expect(try store.schema.table(named: "notes")?.column(named: "rank")?.type == .double)
        try store.close()
        let indexes = try sqlite3Tool(
            directory.file("store.db"), "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notes';")
        #expect(indexes.contains("notes.by_rank"))
    }

    /// A table wider than SQLite's column limit failed with SQLite's "too many columns" and the
    /// whole `CREATE TABLE` in the message (200 KB for the 20,000 columns a `sync` once inferred).
    @Test func aTableWiderThanSQLiteAllowsIsRefusedNamingTheLimit() throws {
        defer { directory.remove() }
        func table(_ columns: Int) -> StoreSchema {
            StoreSchema([TableSchema("wide", columns: (0..<columns).map { Column("c\($0)", .integer) }, synced: false)])
        }
        let error = #expect(throws: OfflineSyncError.self) { try openStore("wide.db", schema: table(2_000)) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("has 2001 columns, its id and system columns included") == true, "\(String(describing: error))")
        #expect(error?.message.contains("at most 2000") == true)
        #expect(error?.message.contains("CREATE TABLE") == false)
        // One column fewer is what SQLite takes; the store opens, stores and reads it.
        let store = try openStore("widest.db", schema: table(1_999))
        try store.upsert([Item(id: "a", values: ["c1998": .int(7)])], into: "wide")
        #expect(try store.lookup(table: "wide", id: "a")?["c1998"] == .int(7))
        try store.close()
    }

    /// A failing statement's SQL is quoted by its start only when it is long.
    @Test func aLongStatementIsQuotedByItsStart() {
        let sql = "SELECT " + Array(repeating: "x", count: 1_000).joined(separator: ", ")
        let error = SQLiteError(code: .error, extendedCode: 1, sqliteMessage: "boom", context: "testing", sql: sql)
        #expect(error.description.count < 500, "\(error.description)")
        #expect(error.description.contains("SELECT x, x") && error.description.contains("(\(sql.count) characters)"))
        let short = SQLiteError(code: .error, extendedCode: 1, sqliteMessage: "boom", context: "testing", sql: "SELECT 1")
        #expect(short.description.contains("— SQL: SELECT 1 —"))
    }

    @Test func retypingAColumnOnReopenIsRefused() throws {
        defer { directory.remove() }
        let store = try openStore(schema: StoreSchema([TableSchema("notes", columns: [Column("text", .string)])]))
        try store.close()
        #expect(throws: OfflineSyncError.self) {
            try store.open(schema: StoreSchema([TableSchema("notes", columns: [Column("text", .integer)])]))
        }
        try store.open(schema: StoreSchema([]))
        #expect(try store.schema.table(named: "notes")?.column(named: "text")?.type == .string)
    }

    @Test func aFileThatIsNotADatabaseFailsWithNotADatabase() throws {
        defer { directory.remove() }
        let path = directory.file("garbage.db")
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path).open(schema: Corpus.schema) }
        #expect(error.code == .notADatabase)
        #expect(error.description.contains(path))
    }

    @Test func aReadOnlyLocationFailsWithCannotOpen() throws {
        let path = "/sys/offline-sync-test.db"
        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path).open(schema: Corpus.schema) }
        #expect(error.code == .cannotOpen)
        #expect(error.description.contains(path))
    }

    @Test func aDatabaseLockedByAnotherConnectionFailsWithBusyAfterTheTimeout() throws {
        defer { directory.remove() }
        let store = try openStore(options: SQLStoreOptions(busyTimeoutMilliseconds: 50))
        var other: OpaquePointer?
        #expect(sqlite3_open(directory.file("store.db"), &other) == SQLITE_OK)
        defer { sqlite3_close(other) }
        #expect(sqlite3_exec(other, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)

        let error = try #require(throws: SQLiteError.self) { try store.upsert([item("x", "locked")], into: "t") }
        #expect(error.code == .busy)

        #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
        try store.upsert([item("x", "free")], into: "t")
        #expect(try store.lookup(table: "t", id: "x")?["s"] == "free")
    }

    @Test func aFullDatabaseRollsBackTheWholeTransaction() throws {
        defer { directory.remove() }
        let store = try openStore(options: SQLStoreOptions(maximumPageCount: 40))
        try store.upsert([item("kept", "before")], into: "t")
        let big = (0..<400).map { item("row\($0)", String(repeating: "x", count: 1000)) }

        let error = try #require(throws: SQLiteError.self) { try store.upsert(big, into: "t") }
        #expect(error.code == .full)
        #expect(error.isStoreFull)
        #expect(error.arguments == nil)
        #expect(try store.count("t") == 1)
        try store.upsert([item("after", "still writable")], into: "t")
        try store.close()
        #expect(
            try sqlite3Tool(directory.file("store.db"), "PRAGMA integrity_check; SELECT count(*) FROM t;") == "ok\n2\n")
    }

    @Test func aTransactionRolledBackBySQLiteRefusesFurtherWrites() throws {
        defer { directory.remove() }
        let store = try openStore(options: SQLStoreOptions(maximumPageCount: 40))
        let big = (0..<400).map { item("row\($0)", String(repeating: "x", count: 1000)) }
        #expect(throws: OfflineSyncError.self) {
            try store.write { transaction in
                do {
                    try transaction.upsert(big, into: "t", origin: .local)
                } catch {
                    try transaction.upsert([self.item("swallowed", "after the failure")], into: "t", origin: .local)
                }
            }
        }
        #expect(try store.count("t") == 0)
    }

    @Test func errorsListBoundValuesOnlyWhenAskedTo() throws {
        defer { directory.remove() }
        let store = try openStore(options: SQLStoreOptions(maximumPageCount: 40, publicStatementArguments: true))
        let big = (0..<400).map { item("row\($0)", String(repeating: "x", count: 1000)) }
        let error = try #require(throws: SQLiteError.self) { try store.upsert(big, into: "t") }
        #expect(error.arguments?.first?.contains("row") == true)
        #expect(error.sql?.hasPrefix("INSERT INTO \"t\"") == true)
    }

    @Test func aThrowingTransactionLeavesNothingBehind() throws {
        defer { directory.remove() }
        let store = try openStore()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                try transaction.upsert([item("x", "gone")], into: "t", origin: .local)
                #expect(try transaction.lookup(table: "t", id: "x")?["s"] == "gone")
                throw Abort()
            }
        }
        #expect(try store.lookup(table: "t", id: "x") == nil)
    }

    @Test func durabilityFullIsReportedAndWorks() throws {
        defer { directory.remove() }
        let store = try openStore(options: SQLStoreOptions(durability: .full))
        try store.upsert([item("x", "synced")], into: "t")
        #expect(store.info.properties.contains(StoreInfo.Property("synchronous", "full")))
        #expect(try sqlite3Tool(directory.file("store.db"), "PRAGMA journal_mode;") == "wal\n")
    }
}

/// Runs the `sqlite3` command-line tool on a database and returns its standard output.
func sqlite3Tool(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
