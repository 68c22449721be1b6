import Foundation
import OfflineSync
import OfflineSyncService
import Testing

/// Typed tables: what is derived from a model's `Codable` shape, how key paths become columns, and
/// the errors for shapes that cannot be stored. The round trips on every backend are the sync
/// tier's `typedModels` group.
@Suite struct ModelTableTests {
    struct Flags: SyncModel, Equatable {
        var id: String
        var a: Bool
        var b: Bool
        var c: Bool
        var d: Bool?
        var e: Bool
        var count: Int
        var isEven: Bool { count % 2 == 0 }
    }

    struct Renamed: SyncModel, Equatable {
        enum CodingKeys: String, CodingKey {
            case id
            case title = "text"
            case when = "due"
        }
        var id: String
        var title: String
        var when: String?

        static let schemaOptions: [ModelSchemaOption<Renamed>] = [.column(\.when, as: .date)]
    }

    struct Settings: SyncModel, Equatable {
        var id: String
        var payload: String
        var stamp: Int64
        static let schemaOptions: [ModelSchemaOption<Settings>] = [
            .column(\.payload, as: .json), .column(\.stamp, as: .date),
        ]
    }

    struct Uncountable: SyncModel {
        enum Mood: String, Codable, Sendable { case happy, sad }
        var id: String
        var mood: Mood
    }

    struct OptionalMood: SyncModel, Equatable {
        enum Mood: String, Codable, Sendable { case happy, sad }
        var id: String
        var mood: Mood?
        static let schemaOptions: [ModelSchemaOption<OptionalMood>] = [.column(\.mood, as: .string)]
    }

    struct Huge: SyncModel {
        var id: String
        var big: UInt64
    }

    struct Moment: SyncModel, Equatable {
        var id: String
        var at: Date
    }

    /// Properties in another order than the table's columns, system properties among them.
    struct Scrambled: SyncModel, Equatable {
        var id: String
        var updatedAt: Date?
        var zeta: String
        var version: String?
        var alpha: Int
        var mid: Bool?
        var when: Date
    }

    /// A hand-written `encode(to:)` that writes its keys backwards, `id` last.
    struct Backwards: SyncModel, Equatable {
        var id: String
        var first: String
        var second: Int
        var third: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(third, forKey: .third)
            try container.encode(second, forKey: .second)
            try container.encode(first, forKey: .first)
            try container.encode(id, forKey: .id)
        }
    }

    static func context(_ tables: [TableSchema]) throws -> SyncContext {
        try SyncContext(store: InMemoryStore(), remote: InMemoryRemote(tables: tables), tables: tables)
    }

    struct Contact: SyncModel, Equatable {
        static let tableName = "contact"
        var id: String
        var owner: UUID
        var homepage: URL
        var friend: UUID?
        var blog: URL?
        var name: String
    }

    @Test("UUID and URL properties, optional or not, are string columns that round-trip and filter")
    func uuidAndURLPropertiesAreStringColumns() throws {
        let schema = try TableSchema(Contact.self)
        #expect(["owner", "homepage", "friend", "blog"].allSatisfy { schema.column(named: $0)?.type == .string })
        let table = try Self.context([schema]).table(Contact.self)
        let owner = UUID()
        let contacts = [
            Contact(
                id: "a", owner: owner, homepage: URL(string: "https://example.com/a?q=1")!, friend: UUID(), blog: nil,
                name: "Ann"),
            Contact(
                id: "b", owner: UUID(), homepage: URL(string: "https://example.com/b")!, friend: nil,
                blog: URL(string: "https://blog.example.com")!, name: "Bob"),
        ]
        try table.insert(contacts)
        #expect(try table.read() == contacts)
        #expect(try table.read(.filter(\.owner == owner)).map(\.id) == ["a"])
        #expect(try table.read(.filter(\.blog != nil)).map(\.id) == ["b"])
    }

    struct Ledger: SyncModel {
        static let tableName = "ledger"
        var id: String
        var balance: Decimal
    }

    @Test("a Decimal property is refused with an error naming it and what to store instead")
    func decimalIsRefusedClearly() throws {
        let error = try #require(throws: OfflineSyncError.self) { try TableSchema(Ledger.self) }
        #expect(error.message.contains("Decimal is not supported") && !error.message.contains(".."), "\(error)")
    }

    @Test func keyPathsOfManyBooleansNameTheirOwnColumns() throws {
        let schema = try TableSchema(Flags.self)
        let table = try Self.context([schema]).table(Flags.self)
        let query = try table.query(.filter(\.a == true && \.b == false && \.c == true && \.d == nil && \.e == true))
        #expect(
            query.filter?.description
                == "(((((a eq true) and (b eq false)) and (c eq true)) and (d eq null)) and (e eq true))")
    }

    @Test func theDerivedSchemaTypesEachColumnAndMakesTheSystemPropertiesImplicit() throws {
        let schema = try TableSchema(Flags.self, name: "flags")
        #expect(schema.name == "flags")
        #expect(schema.synced)
        #expect(schema.column(named: "a")?.type == .bool)
        #expect(schema.column(named: "d")?.type == .bool)
        #expect(schema.column(named: "count")?.type == .integer)
        #expect(schema.column(named: "isEven") == nil)
        #expect(schema.column(named: "updatedAt")?.type == .date)
    }

    @Test func aComputedPropertyIsNotAColumn() throws {
        let table = try Self.context([TableSchema(Flags.self)]).table(Flags.self)
        #expect {
            try table.read(.filter(\.isEven == true))
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidQuery && "\(error)".contains("Flags")
                && "\(error)".contains("stored column")
        }
    }

    @Test func codingKeysRenameColumnsAndKeyPathsFollowThem() throws {
        let schema = try TableSchema(Renamed.self)
        #expect(schema.column(named: "text")?.type == .string)
        #expect(schema.column(named: "due")?.type == .date)
        let table = try Self.context([schema]).table(Renamed.self)
        let inserted = try table.insert(Renamed(id: "r", title: "hello", when: "2026-01-02T03:04:05.678Z"))
        #expect(inserted.id == "r")
        #expect(try table.untyped.lookup(id: "r")?["due"] == .date(Timestamp(iso8601: "2026-01-02T03:04:05.678Z")!))
        #expect(try table.lookup(id: "r") == inserted)
        let query = try table.query(.filter(\.when > "2026-01-01T00:00:00.000Z").order(by: \.title))
        #expect(
            query.description == "table=Renamed&$filter=(due gt datetimeoffset'2026-01-01T00:00:00.000Z')&$orderby=text"
        )
        #expect(try table.read(.filter(\.when > "2026-01-01T00:00:00.000Z")).map(\.id) == ["r"])
    }

    @Test func declaredColumnTypesConvertStringsToJSONAndMillisecondsToDates() throws {
        let schema = try TableSchema(Settings.self)
        #expect(schema.column(named: "payload")?.type == .json)
        #expect(schema.column(named: "stamp")?.type == .date)
        let table = try Self.context([schema]).table(Settings.self)
        let settings = Settings(id: "s", payload: #"{"a":[1,2]}"#, stamp: 1_700_000_000_000)
        try table.insert(settings)
        let row = try table.untyped.lookup(id: "s")
        #expect(row?["payload"] == .json(#"{"a":[1,2]}"#))
        #expect(row?["stamp"] == .date(Timestamp(millisecondsSince1970: 1_700_000_000_000)))
        #expect(try table.lookup(id: "s") == settings)
    }

    @Test("a typed observation yields nothing for a push that changes only what the model does not hold")
    func aTypedObservationSkipsResultsThatReadAsTheSameModels() async throws {
        let schema = try TableSchema(Moment.self)
        let context = try Self.context([schema])
        let table = try context.table(Moment.self)
        try table.insert(Moment(id: "a", at: Date(timeIntervalSince1970: 1)))
        let observation = try table.observe()
        var results = observation.makeAsyncIterator()
        #expect(try await results.next()?.map(\.id) == ["a"])
        // The iterator waits while the push commits, so the push's result reaches it on its own
        // (not coalesced with the insert below, which follows after the iterator had time to
        // read it).
        let waiting = results
        let second = Task {
            var results = waiting
            return (try await results.next()?.map(\.id), results)
        }
        let pushed = try await context.push()
        #expect(pushed.succeeded)
        // The row changed (the server's version and updatedAt), but not what Moment holds.
        #expect(try table.untyped.lookup(id: "a")?["version"].isNull == false)
        try await Task.sleep(for: .milliseconds(200))
        try table.insert(Moment(id: "b", at: Date(timeIntervalSince1970: 2)))
        let (ids, advanced) = try await second.value
        #expect(ids == ["a", "b"])
        results = advanced
        try table.update(Moment(id: "a", at: Date(timeIntervalSince1970: 3)))
        #expect(try await results.next()?.first?.at == Date(timeIntervalSince1970: 3))
    }

    @Test("text that is not one JSON array or object is refused at insert, not at push")
    func aJSONColumnRefusesTextThatIsNotJSON() throws {
        let table = try Self.context([try TableSchema(Settings.self)]).table(Settings.self)
        for text in ["not json", "42", #""quoted""#, "{\"a\":", "[1] [2]", ""] {
            let error = try #require(throws: OfflineSyncError.self, "payload \(text)") {
                try table.insert(Settings(id: "s", payload: text, stamp: 0))
            }
            #expect(error.code == .invalidValue && error.message.contains("'payload'"), "\(error)")
        }
        #expect(try table.read().isEmpty)
        #expect(try table.untyped.context.pendingOperationCount() == 0)
    }

    @Test func anEnumThatIsNotCaseIterableIsNamedInTheSchemaError() {
        #expect {
            try TableSchema(Uncountable.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("mood")
                && "\(error)".contains("CaseIterable")
        }
    }

    @Test func anOptionalEnumThatIsNotCaseIterableIsStoredWithItsDeclaredType() throws {
        let schema = try TableSchema(OptionalMood.self)
        #expect(schema.column(named: "mood")?.type == .string)
        let table = try Self.context([schema]).table(OptionalMood.self)
        try table.insert([OptionalMood(id: "a", mood: .sad), OptionalMood(id: "b", mood: nil)])
        #expect(try table.read(.filter(\.mood == .sad)).map(\.id) == ["a"])
        #expect(try table.lookup(id: "a") == OptionalMood(id: "a", mood: .sad))
        #expect(try table.lookup(id: "b") == OptionalMood(id: "b", mood: nil))
    }

    @Test func anUnsignedValueBeyondInt64IsAnErrorNamingTheColumn() throws {
        let table = try Self.context([TableSchema(Huge.self)]).table(Huge.self)
        #expect {
            try table.insert(Huge(id: "h", big: UInt64.max))
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidValue && "\(error)".contains("big")
        }
        try table.insert(Huge(id: "ok", big: UInt64(Int64.max)))
        #expect(try table.lookup(id: "ok")?.big == UInt64(Int64.max))
    }

    @Test func datesAreRoundedToTheNearestMillisecond() throws {
        let table = try Self.context([TableSchema(Moment.self)]).table(Moment.self)
        try table.insert(Moment(id: "m", at: Date(timeIntervalSince1970: 1.0006)))
        #expect(try table.untyped.lookup(id: "m")?["at"] == .date(Timestamp(millisecondsSince1970: 1001)))
        #expect(try table.lookup(id: "m")?.at == Date(timeIntervalSince1970: 1.001))
    }

    @Test func aStoreTableWithoutTheModelsColumnsIsRefusedWhenTheTableIsOpened() throws {
        let narrow = TableSchema("Flags", columns: [Column("a", .bool)])
        #expect {
            try Self.context([narrow]).table(Flags.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .unknownColumn && "\(error)".contains("'b'")
        }
        let retyped = TableSchema(
            "Flags",
            columns: ["a", "b", "c", "d", "e"].map { Column($0, .bool) } + [Column("count", .string)])
        #expect {
            try Self.context([retyped]).table(Flags.self)
        } throws: { error in
            (error as? OfflineSyncError)?.code == .invalidSchema && "\(error)".contains("count")
        }
    }

    @Test func modelsWhoseKeysComeInAnotherOrderThanTheColumnsAreStoredColumnByColumn() throws {
        let schema = TableSchema(
            "Scrambled",
            columns: [
                Column("alpha", .integer), Column("extra", .string), Column("mid", .bool), Column("when", .date),
                Column("zeta", .string),
            ])
        let table = try Self.context([schema]).table(Scrambled.self)
        let models = (0..<5).map { n in
            Scrambled(
                id: "s\(n)", updatedAt: Date(timeIntervalSince1970: 9), zeta: "z\(n)", version: "v", alpha: n * 10,
                mid: n == 2 ? nil : n % 2 == 0, when: Date(timeIntervalSince1970: Double(n)))
        }
        try table.insert(models)
        for (n, model) in models.enumerated() {
            let row = try #require(try table.untyped.lookup(id: model.id))
            #expect(row["alpha"] == .int(Int64(n * 10)))
            #expect(row["zeta"] == .string("z\(n)"))
            #expect(row["mid"] == (n == 2 ? .null : .bool(n % 2 == 0)))
            #expect(row["when"] == .date(Timestamp(millisecondsSince1970: Int64(n) * 1000)))
            // System properties are never written by the app; the store left them empty.
            #expect(row["version"] == .null)
            #expect(row["updatedAt"] == .null)
            #expect(row["extra"] == .null)
            var stored = model
            stored.updatedAt = nil
            stored.version = nil
            #expect(try table.lookup(id: model.id) == stored)
        }

        let backwards = try Self.context([TableSchema(Backwards.self)]).table(Backwards.self)
        try backwards.insert([
            Backwards(id: "b1", first: "one", second: 1, third: true),
            Backwards(id: "b2", first: "two", second: 2, third: false),
        ])
        #expect(try backwards.lookup(id: "b2") == Backwards(id: "b2", first: "two", second: 2, third: false))
        #expect(try backwards.untyped.lookup(id: "b1")?["first"] == .string("one"))
        #expect(try backwards.untyped.lookup(id: "b1")?["second"] == .int(1))
    }

    @Test func insertWithAnEmptyIdReturnsTheModelWithItsNewId() throws {
        let table = try Self.context([TableSchema(Flags.self)]).table(Flags.self)
        let inserted = try table.insert(Flags(id: "", a: true, b: false, c: false, d: nil, e: true, count: 4))
        #expect(inserted.id.count == 36)
        #expect(try table.lookup(id: inserted.id) == inserted)
        try table.delete(inserted)
        #expect(try table.lookup(id: inserted.id) == nil)
    }
}
