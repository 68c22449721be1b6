import Foundation
import OfflineSync
import OfflineSyncService

/// A model holding every kind of value a typed table stores: each column type, optionals, an enum
/// with a `String` raw value and one with an `Int` raw value, a nested struct and an array (both
/// `json` columns), `Date` and ``OfflineSync/Timestamp``, and the four system properties.
struct Gadget: SyncModel, Hashable {
    enum Size: String, Codable, CaseIterable, Sendable { case small, medium, large }
    enum Rank: Int, Codable, CaseIterable, Sendable { case low = 1, high = 2 }
    struct Spec: Codable, Hashable, Sendable {
        var weight: Double
        var colors: [String]
        var checked: Timestamp?
    }

    static let tableName = "gadget"
    static let schemaOptions: [ModelSchemaOption<Gadget>] = [.index("byNameCount", on: \.name, \.count)]

    var id: String
    var name: String
    var active: Bool
    var count: Int
    var small: Int16
    var ratio: Double
    var made: Date
    var stamp: Timestamp
    var note: String?
    var due: Date?
    var size: Size
    var rank: Rank?
    var spec: Spec
    var tags: [String]
    var score: Double?
    var createdAt: Date?
    var updatedAt: Timestamp?
    var version: String?
    var deleted: Bool?

    /// A copy without system properties, as a model reads before its first push.
    var unsynced: Gadget {
        var copy = self
        copy.createdAt = nil
        copy.updatedAt = nil
        copy.version = nil
        copy.deleted = nil
        return copy
    }
}

/// ``Gadget`` writing its own rows (``OfflineSync/RowWritable``) instead of encoding them.
struct WrittenGadget: RowWritable, Hashable {
    static let tableName = "gadget"

    var gadget: Gadget
    var id: String { gadget.id }

    init(_ gadget: Gadget) { self.gadget = gadget }
    init(from decoder: any Decoder) throws { gadget = try Gadget(from: decoder) }
    func encode(to encoder: any Encoder) throws { try gadget.encode(to: encoder) }

    static let rowKeys = [
        "id", "name", "active", "count", "small", "ratio", "made", "stamp", "note", "due", "size", "rank", "spec", "tags",
        "score", "createdAt", "updatedAt", "version", "deleted",
    ]

    func writeRow(to row: inout RowWriter) throws {
        try row.write(gadget.id)
        try row.write(gadget.name)
        try row.write(gadget.active)
        try row.write(gadget.count)
        try row.write(gadget.small)
        try row.write(gadget.ratio)
        try row.write(gadget.made)
        try row.write(gadget.stamp)
        try row.write(gadget.note)
        try row.write(gadget.due)
        try row.write(gadget.size)
        try row.write(gadget.rank)
        try row.write(gadget.spec)
        try row.write(gadget.tags)
        try row.write(gadget.score)
        try row.write(gadget.createdAt)
        try row.write(gadget.updatedAt)
        try row.write(gadget.version)
        try row.write(gadget.deleted)
    }
}

/// Another model of the same table that knows two of its columns.
struct GadgetName: SyncModel, Hashable {
    var id: String
    var name: String
}

/// Typed models (``OfflineSync/ModelTable``) over the store under test: every value kind, nulls,
/// system properties, the derived schema, typed queries and pulled rows.
enum SyncTierTypedModels {
    static let schema: TableSchema = (try? TableSchema(Gadget.self)) ?? TableSchema("gadget", columns: [])

    /// Dates with whole milliseconds, as stores keep them.
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    static let gadgets: [Gadget] = [
        Gadget(
            id: "g1", name: "anvil", active: true, count: 3, small: -7, ratio: 0.1, made: date(1_700_000_000_123),
            stamp: Timestamp(millisecondsSince1970: 1_600_000_000_001), note: "heavy", due: date(1_800_000_000_000),
            size: .large, rank: .high, spec: Gadget.Spec(weight: 12.5, colors: ["black", "grey"], checked: .epoch),
            tags: ["iron", "tool"], score: -0.0),
        Gadget(
            id: "g2", name: "bell ✓ \"quoted\" 'single'", active: false, count: Int(Int64.min), small: Int16.max,
            ratio: -1e300, made: date(-86_400_000), stamp: Timestamp.minimum, note: nil, due: nil, size: .small,
            rank: nil, spec: Gadget.Spec(weight: 0, colors: [], checked: nil), tags: [], score: nil),
        Gadget(
            id: "g3", name: "bucket", active: true, count: Int(Int64.max), small: 0, ratio: .leastNonzeroMagnitude,
            made: date(0), stamp: Timestamp.maximum, note: "", due: date(1_700_000_000_000), size: .medium, rank: .low,
            spec: Gadget.Spec(weight: 2, colors: ["red"], checked: Timestamp(millisecondsSince1970: 42)),
            tags: ["a", "b", "c"], score: 1.5),
    ]

    static func fixture(_ c: CaseContext) throws -> SyncFixture {
        let remote = try InMemoryRemote(tables: [SyncFixture.todoSchema, SyncFixture.tagSchema, schema])
        return try SyncFixture.make(
            store: ThrowingStore(wrapping: try c.makeStore()), remote: remote, extraTables: [schema])
    }

    static func typedCase(_ name: String, _ body: @escaping @Sendable (SyncFixture, CaseContext) async throws -> Void)
        -> ConformanceCase
    {
        ConformanceCase(name) { c in
            let fixture = try fixture(c)
            try await body(fixture, c)
            fixture.checkInvariants(c)
        }
    }

    static let group = ConformanceGroup(
        "typedModels", tier: .sync,
        cases: [
            typedCase("every value kind round-trips through a typed table") { f, c in
                let table = try f.context.table(Gadget.self)
                try table.insert(gadgets)
                for gadget in gadgets {
                    c.expectEqual(try table.lookup(id: gadget.id), gadget, "lookup of '\(gadget.id)'")
                }
                c.expectEqual(try table.read(.all.order(by: \.id)), gadgets, "read of every gadget")
                let row = try f.store.lookup(table: "gadget", id: "g1")
                c.expectEqual(
                    row?["made"], .date(Timestamp(millisecondsSince1970: 1_700_000_000_123)), "g1 made, stored")
                c.expectEqual(row?["size"], .string("large"), "g1 size, stored as its raw value")
                c.expectEqual(row?["rank"], .int(2), "g1 rank, stored as its raw value")
                c.expectEqual(row?["tags"], .json(#"["iron","tool"]"#), "g1 tags, stored as JSON")
                c.expectEqual(
                    row?["spec"],
                    .json(#"{"checked":"1970-01-01T00:00:00.000Z","colors":["black","grey"],"weight":12.5}"#),
                    "g1 spec, stored as JSON")
                c.expectEqual(row?["score"], .double(-0.0), "g1 score keeps the sign of -0.0")
                c.expect(
                    (try table.lookup(id: "g1")?.score).map { $0.sign == .minus } ?? false,
                    "g1 score reads back as -0.0")
            },
            typedCase("a model that writes its own rows stores what its Codable encoding stores") { f, c in
                let encoded = try f.context.table(Gadget.self)
                let written = try f.context.table(WrittenGadget.self)
                try encoded.insert(gadgets)
                let copies = gadgets.map { gadget -> Gadget in
                    var copy = gadget
                    copy.id = "w" + gadget.id
                    copy.version = "never written"
                    return copy
                }
                try written.insert(copies.map(WrittenGadget.init))
                for (gadget, copy) in zip(gadgets, copies) {
                    let original = try f.store.lookup(table: "gadget", id: gadget.id)
                    let stored = try f.store.lookup(table: "gadget", id: copy.id)
                    c.expectEqual(stored?.values, original?.values, "row of '\(copy.id)', written, against '\(gadget.id)', encoded")
                    c.expectEqual(try written.lookup(id: copy.id)?.gadget.unsynced, copy.unsynced, "'\(copy.id)' read back")
                }
                // Several chunks of rows written into reused storage.
                let many = (0..<600).map { index -> WrittenGadget in
                    var copy = gadgets[index % gadgets.count]
                    copy.id = "m\(index)"
                    copy.count = index
                    return WrittenGadget(copy)
                }
                try written.insert(many)
                for index in [0, 255, 256, 599] {
                    c.expectEqual(try written.lookup(id: "m\(index)")?.gadget, many[index].gadget, "'m\(index)' of 600")
                }
                c.expectEqual(try written.read().count, 606, "gadgets after 600 written in one batch")
                var changed = copies[0]
                changed.note = nil
                changed.name = "renamed"
                try written.update(WrittenGadget(changed))
                c.expectEqual(try encoded.lookup(id: changed.id)?.unsynced, changed.unsynced, "'\(changed.id)' after an update")
                c.expectEqual(try f.context.pendingOperationCount(), gadgets.count * 2 + 600, "queued inserts")
            },
            typedCase("nil properties are stored as nulls and read back as nil") { f, c in
                let table = try f.context.table(Gadget.self)
                try table.insert(gadgets[1])
                let row = try f.store.lookup(table: "gadget", id: "g2")
                for column in ["note", "due", "rank", "score"] {
                    c.expectEqual(row?[column], .null, "g2 \(column), stored")
                }
                c.expectEqual(try table.lookup(id: "g2"), gadgets[1], "g2 read back")
                var changed = gadgets[0]
                try table.insert(changed)
                changed.note = nil
                changed.rank = nil
                try table.update(changed)
                c.expectEqual(
                    try f.store.lookup(table: "gadget", id: "g1")?["note"], .null, "g1 note after update to nil")
                c.expectEqual(try table.lookup(id: "g1"), changed, "g1 after update to nil")
            },
            typedCase("system properties are read from the row and never written from the model") { f, c in
                let table = try f.context.table(Gadget.self)
                var forged = gadgets[0]
                forged.version = "forged"
                forged.updatedAt = Timestamp.maximum
                forged.createdAt = date(5)
                forged.deleted = true
                try table.insert(forged)
                let row = try f.store.lookup(table: "gadget", id: "g1")
                for property in SystemProperty.allCases {
                    c.expectEqual(row?[property.rawValue], .null, "\(property.rawValue) after insert")
                }
                try await f.context.push()
                let server = try f.serverItem("g1", table: "gadget")
                _ = try await table.pull(queryId: "allGadgets")
                let pulled = try table.lookup(id: "g1")
                c.expectEqual(pulled?.version, server?.version, "version read from the row")
                c.expectEqual(pulled?.updatedAt, server?.updatedAt, "updatedAt read from the row")
                c.expectEqual(
                    pulled?.createdAt.flatMap(\.timestampValue), server?.createdAt, "createdAt read from the row")
                c.expectEqual(pulled?.deleted, false, "deleted read from the row")
                c.expectEqual(pulled?.unsynced, gadgets[0], "the other properties")
                guard var edited = pulled else { return }
                edited.name = "anvil 2"
                edited.version = "stale"
                try table.update(edited)
                c.expectEqual(
                    try f.store.lookup(table: "gadget", id: "g1")?.version, server?.version,
                    "stored version after an update from a model with another version")
                let pushed = try await f.context.push()
                c.expect(pushed.succeeded, "push of the update (If-Match is the stored version): \(pushed.errors)")
                c.expectEqual(try f.serverItem("g1", table: "gadget")?["name"], "anvil 2", "server name after the push")
            },
            typedCase("an update through a model keeps the columns the model does not hold") { f, c in
                try f.context.table(Gadget.self).insert(gadgets[0])
                let names = try f.context.table(GadgetName.self, name: "gadget")
                c.expectEqual(try names.lookup(id: "g1"), GadgetName(id: "g1", name: "anvil"), "narrow model read")
                try names.update(GadgetName(id: "g1", name: "renamed"))
                var expected = gadgets[0]
                expected.name = "renamed"
                c.expectEqual(
                    try f.context.table(Gadget.self).lookup(id: "g1"), expected, "full model after the update")
                try names.insert(GadgetName(id: "g9", name: "bare"))
                c.expectThrows(
                    "reading a row without the model's non-optional columns", code: .invalidValue,
                    mentioning: ["g9", "active"]
                ) {
                    try f.context.table(Gadget.self).lookup(id: "g9")
                }
            },
            typedCase("the schema derived from a model opens the store with the model's column types") { f, c in
                let stored = try f.store.schema.table(named: "gadget")
                let expected: [String: ColumnType] = [
                    "name": .string, "active": .bool, "count": .integer, "small": .integer, "ratio": .double,
                    "made": .date, "stamp": .date, "note": .string, "due": .date, "size": .string, "rank": .integer,
                    "spec": .json, "tags": .json, "score": .double, "createdAt": .date, "updatedAt": .date,
                    "version": .string, "deleted": .bool,
                ]
                for (column, type) in expected {
                    c.expectEqual(stored?.column(named: column)?.type, type, "stored type of '\(column)'")
                }
                c.expectEqual(stored?.columns.count, expected.count, "stored column count")
                c.expectEqual(
                    stored?.indexes.first { $0.name == "byNameCount" }?.columns, ["name", "count"], "declared index")
            },
            typedCase("typed queries select and order what the same conditions select in Swift") { f, c in
                let table = try f.context.table(Gadget.self)
                try table.insert(gadgets)
                func expect(_ query: ModelQuery<Gadget>, _ expected: [Gadget], _ what: String) {
                    do {
                        c.expectEqual(try table.read(query).map(\.id), expected.map(\.id), what)
                    } catch {
                        c.fail("\(what): \(error)")
                    }
                }
                let byId = gadgets.sorted { $0.id < $1.id }
                expect(
                    .filter(\.active == true && \.count > 3).order(by: \.id), byId.filter { $0.active && $0.count > 3 },
                    "active and count > 3")
                expect(
                    .filter(.hasPrefix(\.name, "b")).order(by: \.id), byId.filter { $0.name.hasPrefix("b") },
                    "name starts with b")
                expect(.filter(\.due == nil), byId.filter { $0.due == nil }, "due is nil")
                expect(.filter(\.note != nil).order(by: \.id), byId.filter { $0.note != nil }, "note is not nil")
                expect(.filter(\.size == .large), byId.filter { $0.size == .large }, "size is large")
                expect(
                    .filter(.isIn(\.rank, [.low, .high])).order(by: \.id), byId.filter { $0.rank != nil },
                    "rank in low, high")
                expect(
                    .filter(\.made < date(1)).order(by: \.id), byId.filter { $0.made < date(1) },
                    "made before 1970 + 1 ms")
                expect(.filter(!.contains(\.name, "e")), byId.filter { !$0.name.contains("e") }, "name without e")
                expect(
                    .all.order(by: \.made, descending: true), byId.sorted { $0.made > $1.made },
                    "ordered by made, descending")
                expect(
                    .all.order(by: \.ratio).skip(1).top(1), [byId.sorted { $0.ratio < $1.ratio }[1]], "second by ratio")
                c.expectEqual(
                    try table.query(.filter(\.active == false && .hasPrefix(\.name, "A")).order(by: \.name).top(50))
                        .description,
                    "table=gadget&$filter=((active eq false) and startswith(name, 'A'))&$orderby=name&$top=50",
                    "printed query")
            },
            typedCase("pulled rows read as models, and a typed pull query filters on the server") { f, c in
                let table = try f.context.table(Gadget.self)
                for gadget in gadgets {
                    _ = try f.remote.service.insert(try table.item(from: gadget), into: "gadget")
                }
                let pulled = try await table.pull(.filter(\.active == true), queryId: "activeGadgets")
                c.expectEqual(pulled.received, 2, "records pulled")
                let local = try table.read(.all.order(by: \.id))
                c.expectEqual(
                    local.map(\.unsynced), gadgets.filter(\.active), "pulled models without system properties")
                c.expect(
                    local.allSatisfy { $0.version != nil && $0.updatedAt != nil },
                    "pulled models carry system properties")
            },
            typedCase("a typed purge of the whole table resets its delta tokens, so the next pull restores it") { f, c in
                let table = try f.context.table(Gadget.self)
                for gadget in gadgets {
                    _ = try f.remote.service.insert(try table.item(from: gadget), into: "gadget")
                }
                _ = try await table.pull(queryId: "allGadgets")
                _ = try await table.pull(.filter(\.active == true), queryId: "activeGadgets")
                c.expectEqual(try table.read().count, gadgets.count, "gadgets after the pulls")
                let removed = try await table.purge()
                c.expectEqual(removed, gadgets.count, "gadgets purged")
                c.expect(
                    try table.untyped.deltaToken(queryId: "allGadgets") == nil
                        && table.untyped.deltaToken(queryId: "activeGadgets") == nil,
                    "every token of the table reset by the typed purge, as by the untyped one")
                let restored = try await table.pull(queryId: "allGadgets")
                c.expectEqual(restored.received, gadgets.count, "records pulled again after the purge")
                c.expectEqual(
                    try table.read(.all.order(by: \.id)).map(\.unsynced), gadgets, "gadgets restored by the pull")
            },
            typedCase("a typed observation yields models at once and after a local edit, a push and a pull") { f, c in
                let table = try f.context.table(Gadget.self)
                try table.insert(gadgets[0])
                var results = try table.observe(.filter(\.active == true).order(by: \.id)).makeAsyncIterator()
                c.expectEqual(
                    try await SyncTierObservation.next(&results, c, "first models"), [gadgets[0]], "first models")
                try table.insert(gadgets[1])  // inactive: the result is unchanged, nothing is yielded
                try table.insert(gadgets[2])
                c.expectEqual(
                    try await SyncTierObservation.next(&results, c, "models after a local insert"),
                    [gadgets[0], gadgets[2]],
                    "models after a local insert (the inactive one left out)")
                let pushed = try await f.context.push()
                c.expect(pushed.succeeded, "push: \(pushed.errors)")
                let afterPush = try await SyncTierObservation.next(&results, c, "models after the push")
                c.expectEqual(afterPush?.map(\.id), ["g1", "g3"], "ids after the push")
                c.expect(
                    afterPush?.allSatisfy { $0.version != nil && $0.updatedAt != nil } ?? false,
                    "models after the push carry the server's version and updatedAt")
                var fourth = gadgets[0]
                fourth.id = "g4"
                _ = try f.remote.service.insert(try table.item(from: fourth), into: "gadget")
                _ = try await table.pull(queryId: "allGadgets")
                let afterPull = try await SyncTierObservation.next(&results, c, "models after the pull")
                c.expectEqual(afterPull?.map(\.id), ["g1", "g3", "g4"], "ids after the pull")
                c.expectEqual(afterPull?.last?.unsynced, fourth, "the pulled model")
                try table.delete(gadgets[0])
                c.expectEqual(
                    try await SyncTierObservation.next(&results, c, "models after a delete")?.map(\.id), ["g3", "g4"],
                    "ids after a delete")
            },
            typedCase("cancelling the task consuming a typed observation ends it and unregisters it") { f, c in
                let (started, signal) = AsyncStream<Void>.makeStream()
                let observation = try f.context.table(Gadget.self).observe()
                let observer = Task {
                    var count = 0
                    for try await _ in observation {
                        count += 1
                        signal.yield()
                    }
                    return count
                }
                var ready = started.makeAsyncIterator()
                _ = await ready.next()
                c.expectEqual(f.context.observationCounts.observers, 1, "observers while observing")
                observer.cancel()
                _ = try await observer.value
                c.expectEqual(f.context.observationCounts.observers, 0, "observers after cancelling")
            },
        ])
}

extension Date {
    /// The timestamp of this date (whole milliseconds).
    fileprivate var timestampValue: Timestamp? {
        Timestamp(millisecondsSince1970: Int64((timeIntervalSince1970 * 1000).rounded()))
    }
}
