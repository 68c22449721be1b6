import Foundation
import OfflineSync
import OfflineSyncService
@testable import OfflineSyncBenchmarking
import Testing

@Suite("Raw baselines do the same storage work as the stores")
struct RawBaselineTests {
    static let records = BenchmarkData.records(count: 2_000)

    /// The rows the query scenario must return, computed by the reference evaluator.
    static var expectedTop: [String] {
        get throws {
            let evaluator = try QueryEvaluator(query: BenchmarkData.query, schema: BenchmarkData.table(indexed: false))
            return evaluator.run(over: records.map(\.item)).items.map(\.id)
        }
    }

    static func withDirectory<T>(_ body: (String) throws -> T) throws -> T {
        let directory = NSTemporaryDirectory() + "raw-baseline-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try body(directory)
    }

    static func checkRoundTrip(_ baseline: any RawBaseline, indexed: Bool) throws {
        try baseline.create(indexed: indexed)
        try baseline.insert(records[...], rowsPerTransaction: 500, queueRows: true)
        #expect(try baseline.lookup(id: records[1234].id) == records[1234], "lookup returns the stored record")
        #expect(try baseline.lookup(id: "missing") == nil, "lookup of a missing id returns nil")
        #expect(try baseline.queryTop().map(\.id) == expectedTop, "query top 50 matches QueryEvaluator")
        var changed = Array(records.prefix(10))
        for index in changed.indices {
            changed[index].quantity = 999
            changed[index].done = false
        }
        try baseline.drainQueue(changed)
        #expect(try baseline.lookup(id: changed[3].id)?.quantity == 999, "drainQueue stores the server copy")
        baseline.close()
        try baseline.open()
        #expect(try baseline.deleteAll() == records.count, "deleteAll counts every row")
        #expect(try baseline.lookup(id: records[0].id) == nil, "deleteAll removes rows")
        baseline.close()
    }

    /// Runs `scenario`'s store trial on a memory store and its raw trial on raw LMDB, both at
    /// 1,000 records, and returns, for each id, the row the store holds afterwards and the
    /// record the raw side holds.
    static func storedByBothSides(_ scenario: BenchmarkScenario, ids: [String]) async throws
        -> [(stored: Item, written: BenchmarkRecord)]
    {
        let size = BenchmarkSize.scaled(records: 1_000)
        let store = InMemoryStore()
        let storeTrial = try await scenario.prepareStore(store, size)
        try await storeTrial.run()
        var stored: [Item] = []
        for id in ids { stored.append(try #require(try store.lookup(table: BenchmarkData.tableName, id: id))) }
        try await storeTrial.finish()

        let directory = NSTemporaryDirectory() + "raw-baseline-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = RawLMDBBaseline(path: directory, durability: .normal)
        let prepareBaseline = try #require(scenario.prepareBaseline)
        let rawTrial = try prepareBaseline(baseline, size)
        try await rawTrial.run()
        var pairs: [(stored: Item, written: BenchmarkRecord)] = []
        for (id, item) in zip(ids, stored) {
            let written = try #require(try baseline.lookup(id: id))
            pairs.append((item, written))
        }
        try await rawTrial.finish()
        return pairs
    }

    /// Checks that `written` holds the app values of `stored`.
    static func expectSameAppValues(_ stored: Item, _ written: BenchmarkRecord) {
        #expect(written.title == stored["title"].stringValue, "\(written.id): title")
        #expect(written.quantity == stored["quantity"].intValue, "\(written.id): quantity")
        #expect(written.price == stored["price"].doubleValue, "\(written.id): price")
        #expect(written.done == stored["done"].boolValue, "\(written.id): done")
        #expect(written.due == stored["due"].dateValue?.millisecondsSince1970, "\(written.id): due")
    }

    /// A local insert holds the app columns only; a raw side that also wrote the server's
    /// times and version would write about a third more bytes per row than the store.
    @Test("the raw side of a batched enqueue writes what a local insert holds")
    func enqueueWritesWhatALocalInsertHolds() async throws {
        let ids = BenchmarkData.records(count: 20).map(\.id)
        for (stored, written) in try await Self.storedByBothSides(.enqueueBatch, ids: ids) {
            Self.expectSameAppValues(stored, written)
            #expect(stored.version == nil && stored.updatedAt == nil && stored.createdAt == nil)
            #expect(written.version.isEmpty && written.updatedAt == 0 && written.createdAt == 0, "\(written.id)")
        }
    }

    @Test("the raw side of the typed Codable enqueue writes what a local insert holds, read through Codable")
    func typedEnqueueWritesWhatALocalInsertHolds() async throws {
        let records = BenchmarkData.records(count: 200)
        let encoder = RawRecordEncoder()
        for record in records {
            #expect(try encoder.record(of: record.model) == record.localRecord, "\(record.id)")
        }
        let ids = records.prefix(20).map(\.id)
        for (stored, written) in try await Self.storedByBothSides(.typedEnqueueBatch, ids: ids) {
            Self.expectSameAppValues(stored, written)
            #expect(written.version.isEmpty && written.updatedAt == 0 && written.createdAt == 0, "\(written.id)")
        }
        // A model the record has no field for is refused, not stored half-read.
        struct Stranger: Encodable { var id = "x", colour = "red" }
        #expect(throws: EncodingError.self) { try encoder.record(of: Stranger()) }
    }

    /// A push stores the server's copy of each insert, which adds its times and version to the
    /// local row; a raw side that rewrote a row it already held would overwrite it in place.
    @Test("the raw side of a push writes the server's copies over local rows")
    func pushWritesTheServersCopies() async throws {
        let ids = BenchmarkData.records(count: 20).map(\.id)
        for (stored, written) in try await Self.storedByBothSides(.push, ids: ids) {
            Self.expectSameAppValues(stored, written)
            let updatedAt = try #require(stored.updatedAt)
            #expect(stored.version == TableService.version(updatedAt), "the store holds the server's version")
            #expect(stored.createdAt == updatedAt)
            #expect(written.version.utf8.count == stored.version?.utf8.count, "\(written.id): a version as long")
            #expect(written.createdAt == written.updatedAt && written.updatedAt > 0, "\(written.id)")
        }
    }

    /// The server's change gives each record a new `updatedAt` and version (shorter than the
    /// seeded one) along with its new quantity; a raw side that wrote only the quantity would
    /// overwrite each record in place, where the store must move it.
    @Test("the raw side of the incremental pull writes the records the store receives")
    func incrementalPullWritesWhatTheStoreReceives() async throws {
        let seeded = BenchmarkData.records(count: BenchmarkSize.scaled(records: 1_000).changedRecords)
        let pairs = try await Self.storedByBothSides(.pullIncremental, ids: seeded.map(\.id))
        for (record, (stored, written)) in zip(seeded, pairs) {
            Self.expectSameAppValues(stored, written)
            let updatedAt = try #require(stored.updatedAt)
            #expect(stored.version == TableService.version(updatedAt), "the store received the server's version")
            #expect(written.quantity == record.quantity + 1)
            #expect(written.createdAt == stored.createdAt?.millisecondsSince1970)
            #expect(written.updatedAt > record.updatedAt && updatedAt.millisecondsSince1970 > record.updatedAt)
            #expect(written.version.utf8.count == stored.version?.utf8.count, "\(record.id): a version as long")
            #expect(written.version != record.version && stored.version != record.version)
        }
    }

    @Test("raw SQLite stores, finds, queries and deletes records", arguments: [false, true])
    func rawSQLiteRoundTrip(indexed: Bool) throws {
        try Self.withDirectory { directory in
            try Self.checkRoundTrip(
                RawSQLiteBaseline(library: .system, path: directory + "/raw.sqlite", durability: .normal),
                indexed: indexed)
        }
    }

    @Test("raw LMDB stores, finds, queries and deletes records", arguments: [false, true])
    func rawLMDBRoundTrip(indexed: Bool) throws {
        try Self.withDirectory { directory in
            try Self.checkRoundTrip(RawLMDBBaseline(path: directory, durability: .normal), indexed: indexed)
        }
    }

    @Test("raw SQLCipher, loaded with dlopen, stores records in an encrypted file")
    func rawSQLCipherEncrypts() throws {
        try Self.withDirectory { directory in
            let path = directory + "/raw.sqlcipher"
            let baseline = try RawSQLiteBaseline(
                library: .sqlcipher, path: path, durability: .normal, key: .benchmarkRawKey)
            let system = try RawSQLiteBaseline(library: .system, path: directory + "/plain.sqlite", durability: .normal)
            #expect(baseline.libraryVersion != system.libraryVersion, "SQLCipher's SQLite is not the system SQLite")
            try Self.checkRoundTrip(baseline, indexed: false)
            let header = try #require(FileManager.default.contents(atPath: path)).prefix(16)
            #expect(header != Data("SQLite format 3\0".utf8), "the file header is encrypted")
        }
    }
}
