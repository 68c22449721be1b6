import OfflineSync
import OfflineSyncService
import Testing

@testable import OfflineSyncSQLite

/// What SQLite plans for the page query a server answers during an incremental pull.
@Suite struct PullIndexPlanTests {
    /// A page after the token (T, "r9") as `TableService` receives it from a pull, without deleted rows.
    static func pullPage(of table: String) -> Query {
        let stamp = FilterExpression.literal(.date(Timestamp(millisecondsSince1970: 1_700_000_000_000)))
        let token = FilterExpression.and(
            .comparison(.column("updatedAt"), .ge, stamp),
            .or(.comparison(.column("updatedAt"), .gt, stamp), .comparison(.column("id"), .gt, .literal("r9"))))
        return Query(
            table: table, filter: .and(token, .comparison(.column("deleted"), .ne, .literal(true))),
            orderBy: [SortKey("updatedAt"), SortKey("id")], top: 50)
    }

    /// The `detail` lines of `EXPLAIN QUERY PLAN` for the engine's SQL of `query`.
    static func plan(_ query: Query, on table: TableSchema) throws -> [String] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = SQLiteStore(path: directory.file("server.db"))
        try store.open(schema: StoreSchema([table]))
        defer { try? store.close() }
        return try store.engine.withConnection { connection in
            let select = try #require(SQLQuery.select(query, on: TableLayout(table), columns: table.columns))
            var details: [String] = []
            try connection.forEachRow("EXPLAIN QUERY PLAN " + select.sql, select.arguments, cached: false) {
                details.append($0.text(3))
            }
            return details
        }
    }

    @Test func aServedTablesPullPageIsReadInOrderFromThePullIndex() throws {
        let table = TableService.served(TableSchema("todo", columns: [Column("text", .string)]))
        let plan = try Self.plan(Self.pullPage(of: "todo"), on: table)
        #expect(plan.contains { $0.contains("USING INDEX") && $0.contains(TableService.pullIndex.name) }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "no sort of the whole table: \(plan)")
    }

    @Test func withoutThePullIndexThePageSortsTheWholeTable() throws {
        let plan = try Self.plan(Self.pullPage(of: "todo"), on: TableSchema("todo", columns: [Column("text", .string)]))
        #expect(plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
