import OfflineSync
import Testing

@testable import offline_sync

/// What `sync` learns from pulled records beyond the table it declared.
@Suite struct LearnedColumnsTests {
    static func record(_ id: String, _ values: [String: Value]) -> Item { Item(id: id, values: values) }

    @Test func columnsBeyondTheDeclaredOnesAreLearnedOnceWithTheirTypes() {
        var learned = LearnedColumns(declared: ["text"])
        learned.note([
            Self.record("a", ["text": "x", "n": .int(1), "gone": .null, "updatedAt": .string("2026-01-01T00:00:00Z")]),
            Self.record("b", ["n": .double(1.5), "flag": .bool(true), "TEXT": "shadow", "bad name": .int(1)]),
        ])
        #expect(learned.take() == [Column("flag", .bool), Column("n", .double)])
        #expect(learned.unstorable == ["TEXT", "bad name"])
        learned.note([Self.record("c", ["n": .int(2), "flag": .bool(false), "later": "y"])])
        #expect(learned.take() == [Column("later", .string)], "columns already learned are not learned again")
    }

    /// A remote answering each read with the next of `pages` (writes are not used here).
    final class ScriptedPages: RemoteService {
        let pages: Locked<[[Item]]>
        init(_ pages: [[Item]]) { self.pages = Locked(pages) }
        func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
            QueryResult(items: pages.withLock { $0.isEmpty ? [] : $0.removeFirst() })
        }
        func insert(_ item: Item, into table: String) async throws -> Item { item }
        func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item { item }
        func delete(id: String, from table: String, ifMatch version: String?) async throws {}
        func lookup(id: String, in table: String) async throws -> Item? { nil }
    }

    /// Each name that cannot be a column is reported once, in the round it first appears, even
    /// when it sorts before a name reported earlier (counting reported names reported the wrong one).
    @Test func eachUnstorableNameIsReportedInItsOwnRound() async throws {
        let table = TableSchema("t", columns: [Column("text", .string)])
        let watcher = ColumnWatchingRemote(
            ScriptedPages([
                [Self.record("a", ["z-late": .int(1), "n": .int(1)])],
                [Self.record("b", ["a-early": .int(1), "z-late": .int(2)])],
                [Self.record("c", ["z-late": .int(3)])],
                [Self.record("d", ["fresh": .int(4)])],
            ]), table: table)
        _ = try await watcher.readPage(Query(table: "t"), includeDeleted: true)
        var round = watcher.takeNewColumns()
        #expect(round.columns == [Column("n", .integer)])
        #expect(round.unstorable == ["z-late"])
        _ = try await watcher.readPage(Query(table: "t"), includeDeleted: true)
        round = watcher.takeNewColumns()
        #expect(round.columns.isEmpty)
        #expect(round.unstorable == ["a-early"])
        _ = try await watcher.readPage(Query(table: "t"), includeDeleted: true)
        #expect(watcher.takeNewColumns().unstorable.isEmpty)
        // Pages of another table teach nothing.
        _ = try await watcher.readPage(Query(table: "other"), includeDeleted: true)
        #expect(watcher.takeNewColumns().columns.isEmpty)
    }
}
