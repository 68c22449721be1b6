import Foundation
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// Proof that `SQLCipherStore` encrypts, in the same process (and test binary) as `SQLiteStore`.
@Suite(
    .enabled(
        if: SQLCipherLibrary.activeSanitizer == nil,
        "SQLCipher is loaded with RTLD_DEEPBIND, which the sanitizer runtimes do not support"))
struct SQLCipherStoreTests {
    let directory: TemporaryDirectory
    let key = SQLCipherKey.raw((0..<32).map { UInt8($0) })
    let marker = "PLAINTEXT-MARKER-7d1f0c"

    init() throws {
        directory = try TemporaryDirectory()
    }

    private var path: String { directory.file("secret.db") }

    private func openStore(key: SQLCipherKey? = nil, at path: String? = nil) throws -> SQLCipherStore {
        let store = try SQLCipherStore(path: path ?? self.path, key: key ?? self.key)
        try store.open(schema: Corpus.schema)
        return store
    }

    private func markerItem(_ id: String = "m") -> Item {
        Item(id: id, values: ["s": .string(marker)])
    }

    /// Every file of the database (main file, WAL, shared memory, rollback journal) that exists.
    private func databaseFiles() -> [String] {
        ["", "-wal", "-shm", "-journal"].map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }

    private func containsMarker(_ file: String) throws -> Bool {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        return data.range(of: Data(marker.utf8)) != nil
    }

    @Test func noFileContainsAPlaintextMarkerWhileOpenOrAfterClose() throws {
        defer { directory.remove() }
        let store = try openStore()
        try store.upsert((0..<200).map { markerItem("m\($0)") }, into: "t")
        let whileOpen = databaseFiles()
        #expect(whileOpen.contains(path + "-wal"))
        for file in whileOpen {
            #expect(try !containsMarker(file), "\(file) holds the marker in plaintext")
        }
        try store.close()
        for file in databaseFiles() {
            #expect(try !containsMarker(file), "\(file) holds the marker in plaintext")
        }
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header != Data("SQLite format 3\u{0}".utf8))
    }

    @Test func thePlainSQLiteStoreAndTheSqlite3ToolCannotOpenIt() throws {
        defer { directory.remove() }
        let store = try openStore()
        try store.upsert([markerItem()], into: "t")
        try store.close()
        let error = try #require(throws: SQLiteError.self) { try SQLiteStore(path: path).open(schema: Corpus.schema) }
        #expect(error.code == .notADatabase)
        #expect(try sqlite3Tool(path, "SELECT count(*) FROM t;").contains("file is not a database"))
    }

    @Test func aWrongKeyFailsCleanlyWithoutShowingAnyKey() throws {
        defer { directory.remove() }
        try openStore().close()
        for wrong in [SQLCipherKey.raw(Array(repeating: 7, count: 32)), .passphrase("not-the-passphrase")] {
            let store = try SQLCipherStore(path: path, key: wrong)
            let error = try #require(throws: SQLCipherError.self) { try store.open(schema: Corpus.schema) }
            #expect(error.code == .wrongKey)
            #expect(error.description.contains("wrong key or not an encrypted OfflineSync store"))
            #expect(!error.description.contains("not-the-passphrase"))
            #expect(!error.description.contains("0707070707"))
            #expect(throws: OfflineSyncError.self) { try store.read(Query(table: "t")) }
        }
    }

    @Test func aPassphraseKeyOpensAndReopens() throws {
        defer { directory.remove() }
        let passphrase = SQLCipherKey.passphrase("correct horse battery staple")
        let store = try openStore(key: passphrase)
        try store.upsert([markerItem()], into: "t")
        try store.close()
        try store.open(schema: Corpus.schema)
        #expect(try store.lookup(table: "t", id: "m")?["s"] == .string(marker))
        #expect(passphrase.description == "SQLCipherKey(passphrase, redacted)")
    }

    @Test func aRawKeyMustBe32Bytes() throws {
        defer { directory.remove() }
        let store = try SQLCipherStore(path: path, key: .raw([1, 2, 3]))
        let error = try #require(throws: SQLCipherError.self) { try store.open(schema: Corpus.schema) }
        #expect(error.code == .invalidKey)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func rekeyedStoresOpenWithTheNewKeyOnly() throws {
        defer { directory.remove() }
        let newKey = SQLCipherKey.passphrase("the new key")
        let store = try openStore()
        try store.upsert([markerItem()], into: "t")
        #expect(try store.count("t") == 1)  // opens a read connection, keyed with the old key
        try store.rekey(to: newKey)
        try store.upsert([markerItem("after")], into: "t")
        #expect(try store.count("t") == 2)
        #expect(store.engine.readsUseThePool, "reads after the rekey fell back to the writer")
        try store.close()

        try store.open(schema: Corpus.schema)
        #expect(try store.count("t") == 2)
        try store.close()
        let withNewKey = try openStore(key: newKey)
        #expect(try withNewKey.lookup(table: "t", id: "after") != nil)
        try withNewKey.close()
        let error = try #require(throws: SQLCipherError.self) { try openStore(key: key) }
        #expect(error.code == .wrongKey)
    }

    @Test func sqliteAndSQLCipherReportTheirOwnLibrariesInOneProcess() throws {
        defer { directory.remove() }
        let plain = SQLiteStore(path: directory.file("plain.db"))
        try plain.open(schema: Corpus.schema)
        try plain.upsert([markerItem()], into: "t")
        let encrypted = try openStore()
        try encrypted.upsert([markerItem()], into: "t")
        #expect(plain.sqliteVersion.hasPrefix("3.40."))
        #expect(encrypted.sqliteVersion == "3.15.2")
        #expect(encrypted.library.cipherVersion.hasPrefix("3.4."))
        try plain.close()
        try encrypted.close()
        #expect(try containsMarker(directory.file("plain.db")))
        #expect(try !containsMarker(path))
    }

    /// SQLite 3.40 empties a table without a `WHERE` clause a page at a time and still counts the
    /// rows; SQLCipher's SQLite 3.15 would answer 0, so its store deletes row by row.
    @Test func aWholeTablePurgeCountsEveryRowOnBothLibraries() throws {
        defer { directory.remove() }
        let plain = SQLiteStore(path: directory.file("plain.db"))
        try plain.open(schema: Corpus.schema)
        let encrypted = try openStore()
        let rows = (0..<300).map { markerItem("row-\($0)") }
        for store in [plain, encrypted] as [any LocalStore] {
            try store.upsert(rows, into: "t")
            #expect(try store.write { try $0.delete(matching: Query(table: "t")) } == rows.count)
            #expect(try store.read(Query(table: "t", includeTotalCount: true)).totalCount == 0)
            #expect(try store.write { try $0.delete(matching: Query(table: "t")) } == 0)
        }
        #expect(SQLiteAPI.system.countsTruncatedRows)
        #expect(!encrypted.library.api.countsTruncatedRows)
        try plain.close()
        try encrypted.close()
    }

    @Test func aMissingLibraryNamesThePathAndThePackage() throws {
        let missing = "/nonexistent/libsqlcipher.so.0"
        let error = try #require(throws: SQLCipherError.self) {
            try SQLCipherStore(path: path, key: key, libraryPath: missing)
        }
        #expect(error.code == .libraryUnavailable)
        #expect(error.description.contains(missing))
        #expect(error.description.contains("libsqlcipher0"))
    }

    @Test func aLibraryThatDoesNotEncryptIsRefused() throws {
        let error = try #require(throws: SQLCipherError.self) {
            try SQLCipherStore(path: path, key: key, libraryPath: "libsqlite3.so.0")
        }
        #expect(error.code == .libraryUnavailable || error.code == .notSQLCipher)
    }

    @Test func plaintextStoresImportAndEncryptedStoresExport() throws {
        defer { directory.remove() }
        let plainPath = directory.file("plain.db")
        let plain = SQLiteStore(path: plainPath)
        try plain.open(schema: Corpus.schema)
        try plain.upsert(Corpus.items, into: "t")
        try plain.close()

        try SQLCipherStore.importPlaintext(from: plainPath, to: path, key: key)
        let encrypted = try openStore()
        let all = Query(table: "t")
        let imported = try encrypted.read(all)
        #expect(imported.items.count == Corpus.items.count)
        try encrypted.upsert([markerItem()], into: "t")

        let exportedPath = directory.file("exported.db")
        try encrypted.exportPlaintext(to: exportedPath)
        let expected = try encrypted.read(all)
        try encrypted.close()
        #expect(try !containsMarker(path))

        let exported = SQLiteStore(path: exportedPath)
        try exported.open(schema: Corpus.schema)
        #expect(try exported.read(all) == expected)
        #expect(try exported.schema == encrypted.schemaAfterReopen())
        try exported.close()
    }
}

private extension SQLCipherStore {
    func schemaAfterReopen() throws -> StoreSchema {
        try open(schema: StoreSchema([]))
        defer { try? close() }
        return try schema
    }
}
