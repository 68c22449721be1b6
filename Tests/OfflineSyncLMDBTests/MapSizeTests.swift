import Foundation
import OfflineSync
import OfflineSyncService
import Testing

@testable import OfflineSyncLMDB

@Suite struct MapSizeTests {
    private func fiveColumnItems(_ range: Range<Int>) -> [Item] {
        range.map { number in
            Item(
                id: String(format: "item-%08d", number),
                values: [
                    "title": .string("title \(number)"), "rank": .int(Int64(number)),
                    "score": .double(Double(number) / 3),
                    "due": .date(Timestamp(millisecondsSince1970: Int64(number) * 1000)),
                    "done": .bool(number % 2 == 0),
                ])
        }
    }

    @Test func aSixtyFourKiBMapGrowsThroughOneHundredThousandItems() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(
            StoreSchema([indexedNotes]), in: directory,
            options: .init(initialMapSize: 64 << 10, durability: .noSync))
        defer { try? store.close() }
        for start in stride(from: 0, to: 100_000, by: 20_000) {
            try store.upsert(fiveColumnItems(start..<start + 20_000), into: "notes")
        }
        #expect(try store.count("notes") == 100_000)
        #expect(try store.lookup(table: "notes", id: "item-00099999")?["rank"] == .int(99_999))
        let ranked = try store.read(
            Query(
                table: "notes", filter: ReferenceData.cmp("rank", .ge, 99_990),
                orderBy: [SortKey("rank", descending: true)]))
        #expect(ranked.items.map(\.id) == (99_990..<100_000).reversed().map { String(format: "item-%08d", $0) })
        let mapSize = store.info.properties.first { $0.name == "map size" }.flatMap { Int($0.value) } ?? 0
        #expect(mapSize > 64 << 10)
    }

    @Test func readersKeepReadingConsistentSnapshotsWhileWritesGrowTheMap() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(
            StoreSchema([indexedNotes]), in: directory,
            options: .init(initialMapSize: 64 << 10, durability: .noSync))
        defer { try? store.close() }
        let batches = 20
        let batchSize = 500
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for batch in 0..<batches {
                    try store.upsert(self.fiveColumnItems(batch * batchSize..<(batch + 1) * batchSize), into: "notes")
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    var last = 0
                    while last < batches * batchSize {
                        try Task.checkCancellation()
                        let count = try store.count("notes")
                        #expect(count % batchSize == 0 && count >= last, "a reader saw \(count) rows after \(last)")
                        last = count
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.count("notes") == batches * batchSize)
    }

    @Test func theMaximumMapSizeStopsAWriteAndLeavesTheStoreIntact() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(
            StoreSchema([notes]), in: directory,
            options: .init(initialMapSize: 64 << 10, maximumMapSize: 256 << 10))
        defer { try? store.close() }
        try store.upsert(fiveColumnItems(0..<10), into: "notes")
        let error = #expect(throws: LMDBError.self) {
            try store.upsert(
                [Item(id: "huge", values: ["title": .string(String(repeating: "z", count: 1 << 20))])], into: "notes")
        }
        #expect(error?.kind == .mapSizeLimit)
        #expect(error?.isStoreFull == true)
        #expect(error?.description.contains("maximumMapSize") == true)
        #expect(try store.count("notes") == 10)
        try store.upsert(fiveColumnItems(10..<12), into: "notes")
        #expect(try store.count("notes") == 12)
    }

    @Test func aServerWhoseStoreIsFullAnswers507AndStaysWritable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let table = TableSchema("notes", columns: [Column("title", .string)])
        let store = try openStore(
            StoreSchema([table]), in: directory, options: .init(initialMapSize: 64 << 10, maximumMapSize: 256 << 10))
        defer { try? store.close() }
        let logged = Locked<[String]>([])
        let service = try TableService(store: store, failureLog: { line in logged.withLock { $0.append(line) } })
        _ = try service.insert(Item(id: "small", values: ["title": "kept"]), into: "notes")
        let huge = Item(id: "huge", values: ["title": .string(String(repeating: "z", count: 1 << 20))])
        let error = #expect(throws: RemoteError.self) { try service.insert(huge, into: "notes") }
        #expect(error?.status == 507)
        #expect(error?.message.contains("full") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("maximumMapSize") == false, "no internals in the answer")
        #expect(logged.withLock { $0 }.contains { $0.contains("maximumMapSize") }, "the detail is logged")
        // Nothing was written, and smaller writes go on.
        #expect(try store.lookup(table: "notes", id: "huge") == nil)
        _ = try service.insert(Item(id: "after", values: ["title": "still writable"]), into: "notes")
        #expect(try store.count("notes") == 2)
    }

    /// LMDB holds 1,023 sub-databases; a served table takes two (its rows and its pull index).
    /// A table created past that is a 507 naming the table, and the store goes on serving.
    @Test func aServerWhoseStoreHasNoRoomForAnotherTableAnswers507() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tables = (0..<505).map {
            TableService.served(TableSchema("t\($0)", columns: [Column("x", .integer)], indexes: [], synced: true))
        }
        let store = try openStore(StoreSchema(tables), in: directory)
        defer { try? store.close() }
        let logged = Locked<[String]>([])
        let service = try TableService(
            store: store, options: .init(widensSchema: true, maximumTableCount: 10_000),
            failureLog: { line in logged.withLock { $0.append(line) } })
        var refusal: RemoteError?
        var name = ""
        for number in 0..<20 {
            name = "more\(number)"
            do {
                _ = try service.insert(Item(id: "a", values: ["x": 1]), into: name, creatingTable: true)
            } catch let error as RemoteError {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "a table past LMDB's sub-databases is refused")
        #expect(error.status == 507, "\(error)")
        #expect(error.message.contains("'\(name)'"), "\(error.message)")
        #expect(!error.message.contains("MDB"), "no internals in the answer: \(error.message)")
        #expect(logged.withLock { $0 }.contains { $0.contains(name) && $0.contains("MDB_DBS_FULL") }, "the detail is logged")
        _ = try service.insert(Item(id: "a", values: ["x": 1]), into: "t504")
        #expect(try store.count("t504") == 1)
        #expect(try store.schema.table(named: name) == nil)
    }

    @Test func aMapGrownByAnotherProcessIsAdopted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory, options: .init(initialMapSize: 64 << 10))
        defer { try? store.close() }
        try store.upsert(fiveColumnItems(0..<5), into: "notes")
        var dump = "VERSION=3\nformat=bytevalue\ndatabase=foreign\ntype=btree\nmapsize=16777216\nHEADER=END\n"
        let value = String(repeating: "61", count: 1000)
        for number in 0..<2000 {
            dump +=
                " " + Array(String(format: "k%06d", number).utf8).map { String(format: "%02x", $0) }.joined() + "\n "
                + value + "\n"
        }
        dump += "DATA=END\n"
        let input = directory.child("foreign.dump")
        try dump.write(toFile: input, atomically: true, encoding: .utf8)
        let load = Process()
        load.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_load")
        load.arguments = ["-f", input, directory.child("store")]
        try load.run()
        load.waitUntilExit()
        #expect(load.terminationStatus == 0)
        #expect(try store.count("notes") == 5)
        let mapSize = store.info.properties.first { $0.name == "map size" }.flatMap { Int($0.value) } ?? 0
        #expect(mapSize >= 16 << 20, "the map size set by mdb_load is adopted")
        try store.upsert(fiveColumnItems(5..<500), into: "notes")
        #expect(try store.count("notes") == 500)
    }
}
