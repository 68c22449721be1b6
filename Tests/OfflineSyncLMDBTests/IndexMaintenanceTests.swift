import CLMDB
import OfflineSync
import Testing

@testable import OfflineSyncLMDB

/// Index sub-databases hold exactly one key per row after upserts and deletes: a stale key
/// would not change query answers (the evaluator drops its row), so it is counted directly.
@Suite struct IndexMaintenanceTests {
    @Test func replacingAndDeletingRowsLeavesOneKeyPerRowInEveryIndex() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        try store.upsert(ReferenceData.items(count: 120, seed: 3), into: "notes")
        // The same ids with other values (and some indexed columns now absent), twice in one
        // transaction for a few ids, then deletes of rows that exist and rows that do not.
        let replaced = ReferenceData.items(count: 120, seed: 9).map { item in
            var item = item
            if item.id.hasSuffix("7") { item.values["title"] = nil }
            return item
        }
        try store.write { transaction in
            try transaction.upsert(replaced, into: "notes", origin: .local)
            try transaction.upsert(Array(replaced.prefix(10)), into: "notes", origin: .local)
        }
        try store.delete(ids: (0..<200).filter { $0 % 4 == 0 }.map { "n\($0)" }, from: "notes")
        let rows = try store.count("notes")
        try store.close()

        let counts = try Self.entryCounts(
            at: directory.child("store"), of: indexedNotes.indexes.map { "index:notes:\($0.name)" })
        for (name, count) in counts {
            #expect(count == rows, "\(name) holds \(count) keys for \(rows) rows")
        }
    }

    @Test func purgingAWholeTableEmptiesItsIndexesAndLeavesOtherTables() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let other = TableSchema(
            "other", columns: [Column("rank", .integer)], indexes: [TableIndex("otherRank", on: ["rank"])])
        let store = try openStore(StoreSchema([indexedNotes, other]), in: directory)
        try store.upsert(ReferenceData.items(count: 150, seed: 5), into: "notes")
        try store.upsert([Item(id: "kept", values: ["rank": 1])], into: "other")
        let removed = try store.write { try $0.delete(matching: Query(table: "notes", orderBy: [SortKey("rank")])) }
        #expect(removed == 150)
        #expect(try store.count("notes") == 0)
        #expect(try store.read(Query(table: "notes", filter: ReferenceData.cmp("rank", .ge, .int(.min)))).items.isEmpty)
        #expect(try store.count("other") == 1)
        // Rows written afterwards are indexed again, and a rolled-back purge removes nothing.
        try store.upsert(ReferenceData.items(count: 20, seed: 6), into: "notes")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                _ = try transaction.delete(matching: Query(table: "notes"))
                throw Abort()
            }
        }
        let expected = ReferenceData.items(count: 20, seed: 6).filter { $0["rank"].intValue.map { $0 >= 2 } ?? false }
        #expect(
            try store.read(Query(table: "notes", filter: ReferenceData.cmp("rank", .ge, 2))).items.count
                == expected.count)
        try store.close()
        let counts = try Self.entryCounts(
            at: directory.child("store"), of: indexedNotes.indexes.map { "index:notes:\($0.name)" })
        for (name, count) in counts { #expect(count == 20, "\(name) holds \(count) keys for 20 rows") }
    }

    @Test func recordCodecReadsOnlyTheColumnsMappedToSlots() {
        let names = notes.columns.map(\.name)
        var buffer: [UInt8] = []
        let item = Item(id: "x", values: ["title": "kept", "rank": 7, "score": 1.5, "done": true])
        RecordCodec.encode(item, columns: RecordCodec.ColumnOrdinals(names), into: &buffer)
        let slots = names.map { name in ["done": 0, "title": 1, "due": 2][name] ?? -1 }
        var values: [Value] = [.null, .null, .int(99)]
        let decoded = buffer.withUnsafeBytes { RecordCodec.decode($0, slots: slots, into: &values) }
        #expect(decoded)
        #expect(values == [.bool(true), .string("kept"), .int(99)], "absent columns leave their slot alone")
        #expect([UInt8]([1, 1]).withUnsafeBytes { RecordCodec.decode($0, slots: slots, into: &values) } == false)
    }

    /// The number of entries of each named sub-database, read with the C API.
    private static func entryCounts(at path: String, of names: [String]) throws -> [(String, Int)] {
        var environment: OpaquePointer?
        try check(mdb_env_create(&environment))
        defer { mdb_env_close(environment) }
        try check(mdb_env_set_maxdbs(environment, 64))
        try check(mdb_env_open(environment, path, UInt32(MDB_RDONLY), 0o644))
        var transaction: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction))
        defer { mdb_txn_abort(transaction) }
        return try names.map { name in
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(transaction, name, 0, &dbi))
            var stat = MDB_stat()
            try check(mdb_stat(transaction, dbi, &stat))
            return (name, stat.ms_entries)
        }
    }

    private static func check(_ code: Int32) throws {
        guard code == 0 else { throw OfflineSyncError(.storage, String(cString: mdb_strerror(code))) }
    }
}
