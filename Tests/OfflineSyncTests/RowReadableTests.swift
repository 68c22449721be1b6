import Foundation
import OfflineSync
import OfflineSyncService
import Testing

/// Models that read their own rows (``RowReadable``): they read what their `Decodable`
/// conformance reads from the same rows, and a conformance that does not match it is refused
/// before any row is read.
@Suite struct RowReadableTests {
    enum Priority: String, Codable, Sendable, CaseIterable { case low, high }
    struct Tag: Codable, Sendable, Equatable { var name: String }

    /// Every kind of property the reader has a method for, and the generic ones.
    struct Task: SyncModel, Equatable {
        static let tableName = "task"
        var id: String
        var title: String
        var note: String?
        var count: Int
        var maybe: Int?
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

    /// ``Task`` again, reading its own rows.
    struct ReadTask: RowReadable, Equatable {
        static let tableName = "task"
        var task: Task
        var id: String { task.id }

        init(_ task: Task) { self.task = task }
        init(from decoder: any Decoder) throws { task = try Task(from: decoder) }
        func encode(to encoder: any Encoder) throws { try task.encode(to: encoder) }

        static let rowKeys = [
            "id", "title", "note", "count", "maybe", "big", "small", "ratio", "done", "flagged", "due", "priority",
            "tags", "unsigned", "version", "updatedAt",
        ]
        init(row: inout RowReader) throws {
            task = Task(
                id: try row.read(), title: try row.read(), note: try row.read(), count: try row.read(),
                maybe: try row.read(), big: try row.read(), small: try row.read(), ratio: try row.read(),
                done: try row.read(), flagged: try row.read(), due: try row.read(), priority: try row.read(),
                tags: try row.read(), unsigned: try row.read(), version: try row.read(), updatedAt: try row.read())
        }
    }

    /// Reads two keys into each other's properties.
    struct Swapped: RowReadable {
        var id: String
        var first: String
        var second: String
        static let rowKeys = ["id", "first", "second"]
        init(row: inout RowReader) throws {
            id = try row.read()
            second = try row.read()
            first = try row.read()
        }
    }

    /// Reads fewer values than its keys.
    struct ShortReader: RowReadable {
        var id: String
        var name: String
        static let rowKeys = ["id", "name"]
        init(row: inout RowReader) throws {
            id = try row.read()
            name = "constant"
        }
    }

    /// Names a key its `Codable` form does not hold.
    struct ExtraKey: RowReadable {
        var id: String
        var name: String
        static let rowKeys = ["id", "name", "nickname"]
        init(row: inout RowReader) throws {
            id = try row.read()
            name = try row.read()
            _ = try row.read() as String?
        }
    }

    static func context(_ tables: [TableSchema]) throws -> SyncContext {
        try SyncContext(store: InMemoryStore(), remote: InMemoryRemote(tables: tables), tables: tables)
    }

    static func sample(_ index: Int) -> Task {
        Task(
            id: "t\(index)", title: "task \(index)", note: index % 2 == 0 ? nil : "note \(index)", count: index,
            maybe: index % 3 == 0 ? nil : -index, big: Int64(index) << 40, small: Int32(-index),
            ratio: Double(index) / 3, done: index % 3 == 0, flagged: index % 2 == 0 ? true : nil,
            due: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), priority: index % 2 == 0 ? .low : .high,
            tags: [Tag(name: "a\(index)")], unsigned: UInt64(index), version: nil, updatedAt: nil)
    }

    @Test func rowsReadByTheModelEqualTheModelsItsDecodableConformanceReads() async throws {
        let schema = try TableSchema(ReadTask.self)
        let context = try Self.context([schema])
        let decoded = try context.table(Task.self)
        let read = try context.table(ReadTask.self)
        try decoded.insert((0..<20).map(Self.sample))
        try await context.push()
        let byDecoding = try decoded.read(.all.order(by: \.id))
        #expect(byDecoding.allSatisfy { $0.version != nil && $0.updatedAt != nil }, "pushed rows carry system properties")
        #expect(try read.read(.all.order(by: \.id)).map(\.task) == byDecoding)
        #expect(try read.lookup(id: "t7")?.task == byDecoding.first { $0.id == "t7" })
    }

    @Test func aConformanceReadingKeysIntoTheWrongPropertiesIsRefusedNamingTheKey() {
        let error = #expect(throws: OfflineSyncError.self) { try TableSchema(Swapped.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("init(row:)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("'first'") == true, "\(String(describing: error))")
    }

    @Test func aConformanceReadingFewerValuesThanItsKeysIsRefused() {
        let error = #expect(throws: OfflineSyncError.self) { try TableSchema(ShortReader.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("ShortReader") == true, "\(String(describing: error))")
    }

    @Test func aKeyTheCodableFormDoesNotHoldIsRefusedNamingIt() {
        let error = #expect(throws: OfflineSyncError.self) { try TableSchema(ExtraKey.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("'nickname'") == true, "\(String(describing: error))")
    }
}
