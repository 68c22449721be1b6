import Foundation
import OfflineSync
@testable import offline_sync
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

    /// The server's change gives each record a new `updatedAt` and version (shorter than the
    /// seeded one) along with its new quantity; a raw side that wrote only the quantity would
    /// overwrite each record in place, where the store must move it.
    @Test("the raw side of the incremental pull writes the records the store receives")
    func incrementalPullWritesWhatTheStoreReceives() async throws {
        let size = BenchmarkSize.scaled(records: 1_000)
        let seeded = BenchmarkData.records(count: size.changedRecords)
        let store = InMemoryStore()
        let storeTrial = try await BenchmarkScenario.pullIncremental.prepareStore(store, size)
        try await storeTrial.run()
        var received: [Item] = []
        for record in seeded {
            received.append(try #require(try store.lookup(table: BenchmarkData.tableName, id: record.id)))
        }
        try await storeTrial.finish()

        let directory = NSTemporaryDirectory() + "raw-baseline-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = RawLMDBBaseline(path: directory, durability: .normal)
        let prepareBaseline = try #require(BenchmarkScenario.pullIncremental.prepareBaseline)
        let rawTrial = try prepareBaseline(baseline, size)
        try await rawTrial.run()
        for (record, item) in zip(seeded, received) {
            let written = try #require(try baseline.lookup(id: record.id))
            let updatedAt = try #require(item.updatedAt)
            #expect(item.version == TableService.version(updatedAt), "the store received the server's version")
            #expect(written.quantity == item["quantity"].intValue, "\(record.id): the same new quantity")
            #expect(written.quantity == record.quantity + 1)
            #expect(written.title == item["title"].stringValue && written.price == item["price"].doubleValue)
            #expect(written.createdAt == item.createdAt?.millisecondsSince1970)
            #expect(written.updatedAt > record.updatedAt && updatedAt.millisecondsSince1970 > record.updatedAt)
            #expect(written.version.utf8.count == item.version?.utf8.count, "\(record.id): a version as long")
            #expect(written.version != record.version && item.version != record.version)
        }
        try await rawTrial.finish()
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
