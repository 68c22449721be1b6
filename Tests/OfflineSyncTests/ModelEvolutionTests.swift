import Foundation
import OfflineSync
import OfflineSyncService
import Synchronization
import Testing

/// Models that change between app versions: a property added later reads as its declared default
/// in rows stored without it, and a row that still cannot be read is reported with its id and
/// skipped, or fails the read, as the app chooses.
@Suite struct ModelEvolutionTests {
    /// Version 1 of the app's model.
    struct NoteV1: SyncModel, Equatable {
        static let tableName = "note"
        var id: String
        var text: String
    }

    /// Version 2: two non-optional properties added, with the values old rows read as.
    struct NoteV2: SyncModel, Equatable {
        enum Level: String, Codable, CaseIterable, Sendable { case low, normal, high }
        static let tableName = "note"
        static let schemaOptions: [ModelSchemaOption<NoteV2>] = [
            .default(\.priority, 3), .default(\.level, .normal), .default(\.due, Date(timeIntervalSince1970: 86_400)),
        ]
        var id: String
        var text: String
        var priority: Int
        var level: Level
        var due: Date
    }

    /// Version 2 without defaults: old rows cannot be read.
    struct StrictNoteV2: SyncModel, Equatable {
        static let tableName = "note"
        var id: String
        var text: String
        var priority: Int
    }

    /// Version 2 reading its rows itself (``RowReadable``), with a default.
    struct ReadNoteV2: RowReadable, Equatable {
        static let tableName = "note"
        static let schemaOptions: [ModelSchemaOption<ReadNoteV2>] = [.default(\.priority, 3)]
        static let rowKeys = ["id", "text", "priority"]
        var id: String
        var text: String
        var priority: Int

        init(id: String, text: String, priority: Int) {
            self.id = id
            self.text = text
            self.priority = priority
        }

        init(row: inout RowReader) throws {
            id = try row.read()
            text = try row.read()
            priority = try row.read()
        }
    }

    /// A store written by version 1, reopened by version 2 (its table widened).
    private func upgradedStore() async throws -> InMemoryStore {
        let store = InMemoryStore()
        let remote = try InMemoryRemote(tables: [try TableSchema(NoteV2.self)])
        let v1 = try SyncContext(store: store, remote: remote, tables: [try TableSchema(NoteV1.self)])
        try v1.table(NoteV1.self).insert([NoteV1(id: "a", text: "old a"), NoteV1(id: "b", text: "old b")])
        try v1.close()
        return store
    }

    private func context(_ store: InMemoryStore) throws -> SyncContext {
        let remote = try InMemoryRemote(tables: [try TableSchema(NoteV2.self)])
        return try SyncContext(store: store, remote: remote, tables: [try TableSchema(NoteV2.self)])
    }

    @Test func aPropertyAddedLaterReadsAsItsDeclaredDefaultInRowsStoredWithoutIt() async throws {
        let context = try context(try await upgradedStore())
        let notes = try context.table(NoteV2.self)
        let day = Date(timeIntervalSince1970: 86_400)
        #expect(
            try notes.read(.all.order(by: \.id)) == [
                NoteV2(id: "a", text: "old a", priority: 3, level: .normal, due: day),
                NoteV2(id: "b", text: "old b", priority: 3, level: .normal, due: day),
            ])
        try notes.insert(NoteV2(id: "c", text: "new", priority: 1, level: .high, due: day))
        #expect(try notes.lookup(id: "c")?.priority == 1, "a stored value wins over the default")
        #expect(try notes.read(.filter(\.priority == 1)).map(\.id) == ["c"], "queries see stored values")
        #expect(
            try context.store.lookup(table: "note", id: "a")?["priority"] == .null,
            "the default is read, never written by itself")
    }

    @Test func aRowWithoutANonOptionalValueFailsTheReadNamingItsIdAndColumn() async throws {
        let store = try await upgradedStore()
        let remote = try InMemoryRemote(tables: [try TableSchema(StrictNoteV2.self)])
        let context = try SyncContext(store: store, remote: remote, tables: [try TableSchema(StrictNoteV2.self)])
        let notes = try context.table(StrictNoteV2.self)
        let error = #expect(throws: OfflineSyncError.self) { try notes.read() }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("item 'a'") == true, "\(String(describing: error))")
        #expect(error?.message.contains("column 'priority'") == true, "\(String(describing: error))")
    }

    @Test func skippedRowsAreLeftOutAndReportedWithTheirIds() async throws {
        let store = try await upgradedStore()
        let remote = try InMemoryRemote(tables: [try TableSchema(StrictNoteV2.self)])
        let context = try SyncContext(store: store, remote: remote, tables: [try TableSchema(StrictNoteV2.self)])
        let reported = Reports()
        let notes = try context.table(StrictNoteV2.self, undecodableRows: .skip { reported.add($0) })
        try notes.insert(StrictNoteV2(id: "c", text: "new", priority: 1))
        #expect(try notes.read(.all.order(by: \.id)) == [StrictNoteV2(id: "c", text: "new", priority: 1)])
        #expect(reported.rows.map(\.id) == ["a", "b"])
        #expect(reported.rows.allSatisfy { $0.table == "note" && $0.reason.contains("column 'priority'") })
        #expect(try notes.lookup(id: "a") == nil, "an unreadable row looks up as missing")
        #expect(try notes.first(.all.order(by: \.id)) == StrictNoteV2(id: "c", text: "new", priority: 1))
        #expect(reported.rows.count >= 3, "the lookup and first reported what they skipped")
    }

    @Test func anObservationThatSkipsRowsGoesOnWithTheOthers() async throws {
        let store = try await upgradedStore()
        let remote = try InMemoryRemote(tables: [try TableSchema(StrictNoteV2.self)])
        let context = try SyncContext(store: store, remote: remote, tables: [try TableSchema(StrictNoteV2.self)])
        let reported = Reports()
        let notes = try context.table(StrictNoteV2.self, undecodableRows: .skip { reported.add($0) })
        var results = try notes.observe(.all.order(by: \.id)).makeAsyncIterator()
        #expect(try await results.next() == [])
        try notes.insert(StrictNoteV2(id: "c", text: "new", priority: 1))
        #expect(try await results.next()?.map(\.id) == ["c"])
        #expect(Set(reported.rows.map(\.id)) == ["a", "b"])

        let failing = try context.table(StrictNoteV2.self)
        var strict = try failing.observe().makeAsyncIterator()
        await #expect(throws: OfflineSyncError.self) { try await strict.next() }
    }

    @Test func aRowReadableModelReadsDefaultsAndReportsRowsAsTheDecodablePathDoes() async throws {
        let store = try await upgradedStore()
        let remote = try InMemoryRemote(tables: [try TableSchema(ReadNoteV2.self)])
        let context = try SyncContext(store: store, remote: remote, tables: [try TableSchema(ReadNoteV2.self)])
        let notes = try context.table(ReadNoteV2.self)
        #expect(try notes.read(.all.order(by: \.id)).map(\.priority) == [3, 3])
        try context.table("note").insert(Item(id: "d", values: ["priority": 5]))
        let error = #expect(throws: OfflineSyncError.self) { try notes.read() }
        #expect(error?.message.contains("item 'd'") == true, "\(String(describing: error))")
        #expect(error?.message.contains("column 'text'") == true, "\(String(describing: error))")
        let reported = Reports()
        let skipping = try context.table(ReadNoteV2.self, undecodableRows: .skip { reported.add($0) })
        #expect(try skipping.read(.all.order(by: \.id)).map(\.id) == ["a", "b"])
        #expect(reported.rows.map(\.id) == ["d"])
    }

    @Test func aDefaultForASystemPropertyIsRefusedNamingIt() throws {
        struct OnSystem: SyncModel {
            static let schemaOptions: [ModelSchemaOption<OnSystem>] = [.default(\.version, "v0")]
            var id: String
            var version: String?
        }
        let error = #expect(throws: OfflineSyncError.self) { try TableSchema(OnSystem.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("'version'") == true, "\(String(describing: error))")
    }

    /// Rows reported by a skipping table, from any task.
    final class Reports: Sendable {
        private let reported = Mutex<[UndecodableRow]>([])
        var rows: [UndecodableRow] { reported.withLock { $0 } }
        func add(_ row: UndecodableRow) { reported.withLock { $0.append(row) } }
    }
}
