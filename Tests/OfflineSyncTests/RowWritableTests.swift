import Foundation
import OfflineSync
import OfflineSyncService
import Testing

/// Models that write their own rows (``RowWritable``): the rows equal what their `Codable`
/// encoding gives, and a conformance that does not match it is refused before any row is written.
@Suite struct RowWritableTests {
    enum Priority: String, Codable, Sendable, CaseIterable { case low, high }
    struct Tag: Codable, Sendable, Equatable { var name: String }

    /// Every kind of property the writer has a method for, and the generic ones.
    struct Task: SyncModel, Equatable {
        static let tableName = "task"
        var id: String
        var title: String
        var note: String?
        var count: Int
        var big: Int64
        var small: Int32
        var ratio: Double
        var done: Bool
        var flagged: Bool?
        var due: Date
        var priority: Priority
        var tags: [Tag]
        var unsigned: UInt64
        var version: String?
        var updatedAt: Date?
    }

    /// ``Task`` again, writing its own rows (what a hand-written conformance looks like).
    struct WrittenTask: RowWritable, Equatable {
        static let tableName = "task"

        var task: Task
        var id: String { task.id }

        init(_ task: Task) { self.task = task }
        init(from decoder: any Decoder) throws { task = try Task(from: decoder) }
        func encode(to encoder: any Encoder) throws { try task.encode(to: encoder) }

        static let rowKeys = [
            "id", "title", "note", "count", "big", "small", "ratio", "done", "flagged", "due", "priority", "tags",
            "unsigned", "version", "updatedAt",
        ]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(task.id)
            try row.write(task.title)
            try row.write(task.note)
            try row.write(task.count)
            try row.write(task.big)
            try row.write(task.small)
            try row.write(task.ratio)
            try row.write(task.done)
            try row.write(task.flagged)
            try row.write(task.due)
            try row.write(task.priority)
            try row.write(task.tags)
            try row.write(task.unsigned)
            try row.write(task.version)
            try row.write(task.updatedAt)
        }
    }

    /// Writes two keys the wrong way round.
    struct Swapped: RowWritable {
        var id: String
        var first: String
        var second: String
        static let rowKeys = ["id", "first", "second"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(second)
            try row.write(first)
        }
    }

    /// Names a key its `Codable` encoding does not write.
    struct ExtraKey: RowWritable {
        var id: String
        var name: String
        static let rowKeys = ["id", "name", "nickname"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(name)
            try row.write(name)
        }
    }

    /// Writes fewer values than its keys.
    struct ShortWriter: RowWritable {
        var id: String
        var name: String
        var age: Int
        static let rowKeys = ["id", "name", "age"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(name)
        }
    }

    /// Writes more values than its keys.
    struct LongWriter: RowWritable {
        var id: String
        var name: String
        static let rowKeys = ["id", "name"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(name)
            try row.write(name)
            try row.write(7)
        }
    }

    /// Renames a property through `CodingKeys`; the conformance writes the coding key.
    struct Renamed: RowWritable, Equatable {
        enum CodingKeys: String, CodingKey {
            case id
            case title = "text"
        }
        var id: String
        var title: String
        static let rowKeys = ["id", "text"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(title)
        }
    }

    /// Renames a property, but the conformance writes the property's name.
    struct RenamedWrongly: RowWritable {
        enum CodingKeys: String, CodingKey {
            case id
            case title = "text"
        }
        var id: String
        var title: String
        static let rowKeys = ["id", "title"]
        func writeRow(to row: inout RowWriter) throws {
            try row.write(id)
            try row.write(title)
        }
    }

    static func context(_ tables: [TableSchema]) throws -> SyncContext {
        try SyncContext(store: InMemoryStore(), remote: InMemoryRemote(tables: tables), tables: tables)
    }

    static func sample(_ index: Int) -> WrittenTask {
        WrittenTask(Task(
            id: "t\(index)", title: "task \(index)", note: index % 2 == 0 ? nil : "note \(index)", count: index,
            big: Int64(index) << 40, small: Int32(-index), ratio: Double(index) / 3, done: index % 3 == 0,
            flagged: index % 2 == 0 ? true : nil, due: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
            priority: index % 2 == 0 ? .low : .high, tags: [Tag(name: "a\(index)")], unsigned: UInt64(index),
            version: "v\(index)", updatedAt: Date(timeIntervalSince1970: 5)))
    }

    @Test("written rows equal the rows the same model's Codable encoding gives, and read back as the models")
    func writtenRowsEqualEncodedRows() throws {
        let schema = try TableSchema(WrittenTask.self)
        #expect(schema == (try TableSchema(Task.self)))
        let context = try Self.context([schema])
        let written = try context.table(WrittenTask.self)
        let encoded = try context.table(Task.self)
        let models = (0..<20).map(Self.sample)
        try written.insert(models)
        for model in models {
            let row = try written.untyped.lookup(id: model.id)
            #expect(row == (try encoded.item(from: model.task)))
            #expect(try written.item(from: model) == (try encoded.item(from: model.task)))
            var expected = model
            expected.task.version = nil  // system properties are never written from the model
            expected.task.updatedAt = nil
            #expect(try written.lookup(id: model.id) == expected)
        }
        #expect(try context.pendingOperationCount() == 20)
    }

    @Test("an update through the writer keeps the stored system properties and the columns the model lacks")
    func updatesKeepWhatTheModelDoesNotWrite() throws {
        let wide = TableSchema(
            "Renamed", columns: [Column("text", .string), Column("extra", .string)])
        let context = try Self.context([wide])
        let table = try context.table(Renamed.self)
        try table.untyped.insert(Item(id: "r", values: ["text": .string("old"), "extra": .string("kept")]))
        try table.update(Renamed(id: "r", title: "new"))
        let row = try table.untyped.lookup(id: "r")
        #expect(row?["text"] == .string("new"))
        #expect(row?["extra"] == .string("kept"))
        #expect(try table.lookup(id: "r") == Renamed(id: "r", title: "new"))
    }

    @Test("a conformance that writes values under the wrong keys is refused naming the key")
    func swappedKeysAreRefused() {
        #expect {
            try TableSchema(Swapped.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("writeRow")
                && "\(error)".contains("'first'")
        }
    }

    @Test("a conformance naming a key the Codable encoding does not write is refused naming it")
    func extraKeysAreRefused() {
        #expect {
            try TableSchema(ExtraKey.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("'nickname'")
        }
        #expect {
            try TableSchema(RenamedWrongly.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("'title'")
        }
    }

    @Test("a conformance that writes fewer or more values than its keys is refused")
    func shortWritersAreRefused() {
        #expect {
            try TableSchema(ShortWriter.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("wrote 2 values")
        }
        #expect {
            try TableSchema(LongWriter.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("wrote 4 values")
        }
    }

    @Test("a value that cannot be stored fails the whole insert naming the model and the column")
    func unstorableValuesNameTheModel() throws {
        let context = try Self.context([try TableSchema(WrittenTask.self)])
        let table = try context.table(WrittenTask.self)
        var bad = Self.sample(7)
        bad.task.unsigned = UInt64.max
        #expect {
            try table.insert([Self.sample(1), bad])
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidValue && "\(error)".contains("'t7'")
                && "\(error)".contains("unsigned")
        }
        #expect(try table.read().isEmpty)
        #expect(try context.pendingOperationCount() == 0)
    }

    @Test("a batch of several chunks is stored whole, and refused whole for an id given twice or already stored")
    func batchesOfSeveralChunks() throws {
        let context = try Self.context([try TableSchema(WrittenTask.self)])
        let table = try context.table(WrittenTask.self)
        let encoded = try context.table(Task.self)
        let models = (0..<600).map(Self.sample)
        var repeated = models.map { model -> WrittenTask in
            var copy = model
            copy.task.id = "again-" + model.id
            return copy
        }
        repeated[550].task.id = repeated[3].id
        #expect {
            _ = try table.insert(repeated)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidOperation && "\(error)".contains("'again-t3' appears twice")
        }
        #expect(try table.read().isEmpty)
        #expect(try context.pendingOperationCount() == 0)

        try table.insert(models)
        #expect(try context.pendingOperationCount() == 600)
        for index in [0, 255, 256, 511, 512, 599] {
            #expect(try table.untyped.lookup(id: "t\(index)") == (try encoded.item(from: models[index].task)))
        }
        var clash = repeated
        clash[550].task.id = "t42"
        #expect {
            _ = try table.insert(clash)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .conflict && "\(error)".contains("'t42'")
        }
        #expect(try table.read().count == 600)
        // An insert never pushed, then deleted, leaves nothing queued: the id may be inserted again.
        try table.delete(models[7])
        var reinserted = clash
        reinserted[550].task.id = "t7"
        _ = try table.insert(reinserted)
        #expect(try table.read().count == 1_199)
        #expect(try context.pendingOperationCount() == 1_199)
    }

    @Test("an empty insert writes nothing, not even the queue's sequence")
    func emptyInsertsWriteNothing() throws {
        let store = InMemoryStore()
        let schema = try TableSchema(WrittenTask.self)
        let context = try SyncContext(store: store, remote: InMemoryRemote(tables: [schema]), tables: [schema])
        let table = try context.table(WrittenTask.self)
        #expect(try table.insert([WrittenTask]()).isEmpty)
        #expect(try store.read(Query(table: SystemTables.config)).items.isEmpty)
    }

    @Test("models inserted with an empty id get a new one, as through Codable")
    func emptyIdsAreReplaced() throws {
        let context = try Self.context([try TableSchema(WrittenTask.self)])
        let table = try context.table(WrittenTask.self)
        var model = Self.sample(3)
        model.task.id = ""
        let stored = try table.insert(model)
        #expect(!stored.id.isEmpty)
        #expect(try table.lookup(id: stored.id)?.task.title == "task 3")
    }
}
