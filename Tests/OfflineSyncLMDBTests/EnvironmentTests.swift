import Foundation
import OfflineSync
import Testing

@testable import OfflineSyncLMDB

@Suite struct EnvironmentTests {
    @Test func reopeningKeepsRowsAndWidensTheSchemaWithANewIndexFilledFromExistingRows() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory)
        try store.upsert(ReferenceData.items(count: 120), into: "notes")
        try store.close()
        let widened = TableSchema(
            "notes", columns: notes.columns + [Column("extra", .integer)], indexes: [TableIndex("byRank", on: ["rank"])]
        )
        try store.open(schema: StoreSchema([widened]))
        defer { try? store.close() }
        #expect(try store.schema.table(named: "notes")?.column(named: "extra")?.type == .integer)
        #expect(try store.schema.table(named: "notes")?.indexes.map(\.name) == ["byRank"])
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([widened]))
        try reference.upsert(ReferenceData.items(count: 120), into: "notes")
        let query = Query(
            table: "notes", filter: ReferenceData.cmp("rank", .eq, 3), orderBy: [SortKey("rank")], top: 50,
            includeTotalCount: true)
        #expect(try store.read(query) == reference.read(query))
    }

    @Test func theMdbStatToolReadsTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        defer { try? store.close() }
        try store.upsert(ReferenceData.items(count: 37), into: "notes")
        let stat = Process()
        let output = Pipe()
        stat.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_stat")
        stat.arguments = ["-s", "items:notes", directory.child("store")]
        stat.standardOutput = output
        try stat.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        stat.waitUntilExit()
        #expect(stat.terminationStatus == 0)
        #expect(text.contains("Entries: 37"), "mdb_stat printed: \(text)")
    }

    @Test func aSecondStoreOnTheSameEnvironmentIsRefusedUntilTheFirstCloses() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try openStore(StoreSchema([notes]), in: directory)
        try FileManager.default.createSymbolicLink(
            atPath: directory.child("alias"), withDestinationPath: directory.child("store"))
        for path in [directory.child("store"), directory.child("alias"), directory.child("store/../store")] {
            let second = try LMDBStore(path: path)
            let error = #expect(throws: LMDBError.self) { try second.open(schema: StoreSchema([notes])) }
            #expect(error?.kind == .alreadyOpen, "open of \(path)")
        }
        try first.upsert([Item(id: "still", values: ["rank": 1])], into: "notes")
        try first.close()
        let second = try LMDBStore(path: directory.child("alias"))
        try second.open(schema: StoreSchema([notes]))
        #expect(try second.lookup(table: "notes", id: "still") != nil)
        try second.close()
    }

    @Test func openingTheSameInstanceTwiceIsAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory)
        defer { try? store.close() }
        let error = #expect(throws: OfflineSyncError.self) { try store.open(schema: StoreSchema([notes])) }
        #expect(error?.code == .invalidOperation)
    }

    @Test func aFileIsNotAnEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try "hello".write(toFile: directory.child("file"), atomically: true, encoding: .utf8)
        let store = try LMDBStore(path: directory.child("file"))
        let error = #expect(throws: LMDBError.self) { try store.open(schema: StoreSchema([notes])) }
        #expect(error?.kind == .notAnEnvironment)
    }

    @Test func aForeignDirectoryIsNotAnEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.child("photos"), withIntermediateDirectories: false)
        try "jpeg".write(toFile: directory.child("photos/cat.jpg"), atomically: true, encoding: .utf8)
        let store = try LMDBStore(path: directory.child("photos"))
        let error = #expect(throws: LMDBError.self) { try store.open(schema: StoreSchema([notes])) }
        #expect(error?.kind == .notAnEnvironment)
        #expect(!FileManager.default.fileExists(atPath: directory.child("photos/data.mdb")))
    }

    @Test func aDamagedDataFileIsNotAnEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.child("broken"), withIntermediateDirectories: false)
        try Data(repeating: 0x5A, count: 16_384).write(to: URL(fileURLWithPath: directory.child("broken/data.mdb")))
        let store = try LMDBStore(path: directory.child("broken"))
        let error = #expect(throws: LMDBError.self) { try store.open(schema: StoreSchema([notes])) }
        #expect(error?.kind == .notAnEnvironment)
        #expect(error?.code == -30793)
        let reopened = try LMDBStore(path: directory.child("broken"))
        #expect(throws: LMDBError.self) { try reopened.open(schema: StoreSchema([notes])) }
    }

    /// The open's page walk reuses the whole-file buffer of the walk before (a larger file's):
    /// a smaller file read into it must be checked on its own bytes, so a truncated one is still
    /// refused, and an intact one still opens.
    @Test func aTruncatedFileIsRefusedAfterALargerFileWasChecked() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func filled(_ name: String, rows: Int) throws {
            let store = try LMDBStore(path: directory.child(name))
            try store.open(schema: StoreSchema([notes]))
            try store.upsert(
                (0..<rows).map {
                    Item(id: "\(name)-\($0)", values: ["title": .string(String(repeating: "x", count: 200))])
                },
                into: "notes")
            try store.close()
        }
        try filled("large", rows: 3_000)
        try filled("small", rows: 600)
        try filled("intact", rows: 600)
        let file = directory.child("small/data.mdb")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(truncate(file, off_t(size / 2)) == 0)
        for _ in 0..<2 {
            let large = try LMDBStore(path: directory.child("large"))
            try large.open(schema: StoreSchema([notes]))
            try large.close()
            let small = try LMDBStore(path: directory.child("small"))
            let error = #expect(throws: LMDBError.self) { try small.open(schema: StoreSchema([notes])) }
            #expect(error?.description.contains("truncated") == true, "\(String(describing: error))")
            let intact = try LMDBStore(path: directory.child("intact"))
            try intact.open(schema: StoreSchema([notes]))
            #expect(try intact.count("notes") == 600)
            try intact.close()
        }
    }

    @Test func aReadOnlyLocationIsReported() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let locked = directory.child("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        chmod(locked, 0o555)
        let immutable = geteuid() == 0
        if immutable { try Self.chattr("+i", locked) }
        defer {
            if immutable { try? Self.chattr("-i", locked) }
            chmod(locked, 0o755)
        }
        for path in [locked, locked + "/inner"] {
            let store = try LMDBStore(path: path)
            let error = #expect(throws: LMDBError.self) { try store.open(schema: StoreSchema([notes])) }
            #expect(error?.kind == .readOnlyLocation, "open of \(path): \(String(describing: error))")
        }
    }

    @Test func aClosedStoreRefusesReadsAndWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory)
        try store.close()
        try store.close()
        #expect((try? store.lookup(table: "notes", id: "x")) == nil)
        let error = #expect(throws: OfflineSyncError.self) { try store.count("notes") }
        #expect(error?.code == .notOpen)
        #expect(throws: OfflineSyncError.self) { try store.upsert([Item(id: "x")], into: "notes") }
    }

    @Test func relaxedDurabilityKeepsCommittedRowsAcrossClose() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for durability in LMDBStore.Durability.allCases {
            let store = try openStore(
                StoreSchema([notes]), in: directory, name: durability.rawValue, options: .init(durability: durability))
            try store.upsert(ReferenceData.items(count: 10), into: "notes")
            try store.close()
            try store.open(schema: StoreSchema([notes]))
            #expect(try store.count("notes") == 10, "durability \(durability)")
            try store.close()
        }
    }

    @Test func inconsistentOptionsAreAConfigurationError() {
        let error = #expect(throws: OfflineSyncError.self) {
            try LMDBStore(path: "/tmp/unused", options: .init(initialMapSize: 1 << 30, maximumMapSize: 1 << 20))
        }
        #expect(error?.code == .configuration)
    }

    @Test func anUndeclaredTableIsAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory)
        defer { try? store.close() }
        let error = #expect(throws: OfflineSyncError.self) { try store.read(Query(table: "missing")) }
        #expect(error?.code == .unknownTable)
    }

    private static func chattr(_ flag: String, _ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        try process.run()
        process.waitUntilExit()
    }
}
