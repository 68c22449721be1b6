import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import OfflineSyncHTTP
import Testing

/// ``HTTPRemote`` talking to the reference server gives the same answers as the in-process
/// ``InMemoryRemote`` (the same ``TableService`` without HTTP): every value type, awkward ids and
/// every kind of query survive the wire exactly.
@Suite("HTTPRemote against the reference server, compared with InMemoryRemote")
struct RemoteRoundTripTests {
    static let schema = TableSchema(
        "things",
        columns: [
            Column("text", .string), Column("n", .integer), Column("x", .double), Column("when", .date),
            Column("flag", .bool), Column("meta", .json),
        ])

    static let items: [Item] = [
        Item(
            id: "plain",
            values: [
                "text": "hello", "n": 1, "x": 1.5, "flag": true,
                "when": .date(
                    Timestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, millisecond: 678)!),
            ]),
        Item(
            id: "a b/c?d#e&f=g+h%41",
            values: ["text": "O'Brien & co = 100% #1 + more?", "n": .int(Int64.max), "x": -0.0]),
        Item(
            id: "ünïcødé-🚀",
            values: [
                "text": "línea\nnueva\t\"quoted\" \\ back\u{1}", "n": .int(Int64.min),
                "x": .double(.leastNonzeroMagnitude),
            ]),
        Item(
            id: "'quoted'",
            values: [
                "text": "", "x": 1e300, "flag": false, "meta": .json(#"{"a":[1,2.5,"x"],"b":null}"#),
                "when": .date(Timestamp(year: 1969, month: 7, day: 20, hour: 20, minute: 17)!),
            ]),
        Item(id: "nulls", values: ["meta": .json("[]"), "when": .date(Timestamp(year: 9999, month: 12, day: 31)!)]),
    ]

    static let queries: [Query] = [
        Query(table: "things"),
        Query(table: "things", filter: .comparison(.column("text"), .eq, .literal("O'Brien & co = 100% #1 + more?"))),
        Query(table: "things", filter: .function(.contains, [.column("text"), .literal("& co")])),
        Query(table: "things", filter: .function(.startsWith, [.column("text"), .literal("lí")])),
        Query(
            table: "things",
            filter: .comparison(.column("when"), .lt, .literal(.date(Timestamp(year: 1970, month: 1, day: 1)!)))),
        Query(table: "things", filter: .comparison(.column("n"), .eq, .literal(.int(Int64.min)))),
        Query(table: "things", filter: .comparison(.column("x"), .eq, .literal(0.0))),
        Query(table: "things", filter: .isIn(.column("id"), ["plain", "'quoted'", "ünïcødé-🚀"])),
        Query(table: "things", filter: .not(.comparison(.column("flag"), .eq, .literal(true)))),
        Query(
            table: "things",
            filter: .or(.comparison(.column("text"), .eq, .literal(.null)), .comparison(.column("n"), .gt, .literal(0)))
        ),
        Query(table: "things", filter: .comparison(.function(.year, [.column("when")]), .eq, .literal(2026))),
        Query(table: "things", orderBy: [SortKey("x", descending: true)], skip: 1, top: 2, includeTotalCount: true),
        Query(table: "things", orderBy: [SortKey("text")], selection: ["text", "flag"]),
    ]

    @Test("every value, id and query gives the same answer over HTTP as in process")
    func sameAnswers() async throws {
        let local = try InMemoryRemote(tables: [Self.schema])
        let store = InMemoryStore()
        try await withTableServer(store: store, tables: [Self.schema]) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            for item in Self.items {
                let viaHTTP = try await remote.insert(item, into: "things")
                let inProcess = try await local.insert(item, into: "things")
                #expect(Self.content(viaHTTP) == Self.content(inProcess), "insert '\(item.id)'")
                let found = try await remote.lookup(id: item.id, in: "things")
                #expect(
                    found.map(Self.content) == Self.content(viaHTTP),
                    "lookup '\(item.id)' returns what the insert returned")
            }
            for query in Self.queries {
                let viaHTTP = try await remote.readPage(query, includeDeleted: false)
                let inProcess = try await local.readPage(query, includeDeleted: false)
                #expect(viaHTTP.items.map(Self.content) == inProcess.items.map(Self.content), "\(query)")
                #expect(viaHTTP.totalCount == inProcess.totalCount, "\(query)")
            }
            try await remote.shutdown()
        }
    }

    @Test("update with the current version, a stale version, then delete, over HTTP")
    func versionsOverHTTP() async throws {
        try await withTableServer(tables: [Self.schema]) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            let id = "a b/c?d#e&f=g+h%41"
            let created = try await remote.insert(Item(id: id, values: ["text": "one"]), into: "things")
            var changed = created
            changed["text"] = "two"
            let updated = try await remote.update(changed, in: "things", ifMatch: created.version)
            #expect(updated["text"] == "two" && updated.version != created.version)
            do {
                _ = try await remote.update(changed, in: "things", ifMatch: created.version)
                Issue.record("a stale version must conflict")
            } catch let error as RemoteError {
                #expect(error.kind == .conflict && error.status == 412 && error.serverItem == updated)
            }
            try await remote.delete(id: id, from: "things", ifMatch: updated.version)
            #expect(try await remote.lookup(id: id, in: "things") == nil)
            let deleted = try await remote.readPage(Query(table: "things"), includeDeleted: true).items
            #expect(deleted.map(\.id) == [id] && deleted.first?.isDeleted == true)
            try await remote.shutdown()
        }
    }

    /// An item as a store would keep it (JSON has no date type: a date column arrives as an ISO
    /// 8601 string and the table schema turns it back into a date), without the values the server
    /// assigns (they differ between the two servers).
    static func content(_ item: Item) -> Item {
        var copy = (try? schema.normalize(item, origin: .server)) ?? item
        for property in [SystemProperty.createdAt, .updatedAt, .version] { copy.values[property.rawValue] = nil }
        return copy
    }
}
