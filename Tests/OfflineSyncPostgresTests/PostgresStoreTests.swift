import OfflineSyncTestSupport
import Foundation
import OfflineSync
import OfflineSyncPostgres
import Synchronization
import Testing

/// What the PostgreSQL store adds to the conformance suite: PostgreSQL's own limits met the
/// contract's way, and write transactions serialised across store instances.
@Suite struct PostgresStoreTests {
    private static let columns = [Column("title", .string), Column("count", .integer), Column("body", .string)]
    private static let notes = TableSchema(
        "notes", columns: columns, indexes: [TableIndex("byTitle", on: ["title"])], synced: false)

    private func openStore(
        _ tables: [TableSchema] = [notes], settings: PostgresConnectionSettings? = nil
    ) throws -> PostgresStore {
        let store = PostgresStore(settings: try settings ?? PostgresTestServer.require().freshSettings())
        try store.open(schema: StoreSchema(tables))
        return store
    }

    /// A string of `count` letters that does not compress (so PostgreSQL cannot squeeze it into an index).
    private func incompressible(_ count: Int) -> String {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return String(
            decoding: (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(97 + (state >> 33) % 26)
            }, as: UTF8.self)
    }

    @Test("a database server that cannot be reached is a store-unavailable error, which a table server answers 503")
    func unreachableServerIsUnavailable() throws {
        // Port 1 on the loopback: nothing listens there, so the connection is refused.
        let store = PostgresStore(
            settings: PostgresConnectionSettings(
                host: "127.0.0.1", port: 1, user: "postgres", database: "postgres", schema: "unreachable"))
        let error = try #require(throws: (any Error).self) { try store.open(schema: StoreSchema([Self.notes])) }
        let unavailable = try #require(error as? any StoreUnavailableError, "\(error)")
        #expect(unavailable.isStoreUnavailable, "\(error)")
        let statement = PostgresError(sqlState: "42601", message: "syntax error", context: "reading")
        #expect(!statement.isStoreUnavailable, "a failed statement is not an outage")
    }

    @Test func stringsWithU0000RoundTripAndMatchQueries() throws {
        let store = try openStore()
        defer { try? store.close() }
        try store.upsert(
            [Item(id: "a", values: ["title": .string("x\u{0}y")]), Item(id: "b", values: ["title": .string("x")])],
            into: "notes")
        #expect(try store.lookup(table: "notes", id: "a")?["title"] == .string("x\u{0}y"))
        let filters = [
            "title eq 'x\u{0}y'", "startswith(title, 'x\u{0}')", "length(title) eq 3", "title gt 'x'",
        ]
        for filter in filters {
            let query = try ODataParser.query(table: "notes", filter: filter)
            #expect(try store.read(query).items.map(\.id) == ["a"], "\(filter)")
        }
        let byId = Query(table: "notes", filter: .comparison(.column("id"), .eq, .literal(.string("a\u{0}"))))
        #expect(try store.read(byId).items.isEmpty)
        #expect(try store.lookup(table: "notes", id: "a\u{0}") == nil)
    }

    @Test func namesLongerThanPostgresLimitStayDistinct() throws {
        let prefix = String(repeating: "t", count: 100)
        let first = TableSchema(prefix + "_first", columns: [Column(String(repeating: "c", count: 90) + "1", .integer)])
        let second = TableSchema(
            prefix + "_second", columns: [Column(String(repeating: "c", count: 90) + "2", .integer)])
        let store = try openStore([first, second])
        defer { try? store.close() }
        try store.upsert([Item(id: "x", values: [first.columns[0].name: .int(1)])], into: first.name)
        try store.upsert([Item(id: "x", values: [second.columns[0].name: .int(2)])], into: second.name)
        #expect(try store.lookup(table: first.name, id: "x")?[first.columns[0].name] == .int(1))
        #expect(try store.lookup(table: second.name, id: "x")?[second.columns[0].name] == .int(2))
    }

    @Test func valuesLargerThanAnIndexEntryRoundTripInIndexedColumnsAndAreFound() throws {
        let store = try openStore()
        defer { try? store.close() }
        let large = incompressible(100_000)
        let rows = [
            Item(id: "large", values: ["title": .string(large)]),
            Item(id: "larger", values: ["title": .string(large + "b")]),
            Item(id: "prefix", values: ["title": .string(String(large.prefix(200)))]),
            Item(id: "short", values: ["title": .string("a")]),
        ]
        try store.upsert(rows, into: "notes")
        #expect(try store.lookup(table: "notes", id: "large") == rows[0])
        let queries = [
            Query(table: "notes", filter: .comparison(.column("title"), .eq, .literal(.string(large)))),
            Query(table: "notes", filter: .comparison(.column("title"), .gt, .literal(.string(large)))),
            Query(table: "notes", filter: .comparison(.literal(.string(large)), .ge, .column("title"))),
            Query(table: "notes", orderBy: [SortKey("title", descending: true)]),
            Query(table: "notes", orderBy: [SortKey("title")], skip: 1, top: 2),
        ]
        for query in queries {
            let expected = try QueryEvaluator(query: query, schema: PostgresStoreTests.notes).run(over: rows)
            #expect(try store.read(query).items.map(\.id) == expected.items.map(\.id), "\(query)")
        }
    }

    @Test func writeTransactionsOfTwoStoresOnOneSchemaNeverInterleave() async throws {
        let settings = try PostgresTestServer.require().freshSettings()
        let stores = try [openStore(settings: settings), openStore(settings: settings)]
        defer { stores.forEach { try? $0.close() } }
        try stores[0].upsert([Item(id: "counter", values: ["count": .int(0)])], into: "notes")
        let rounds = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask {
                    for _ in 0..<rounds {
                        try store.write { transaction in
                            let current = try transaction.lookup(table: "notes", id: "counter")?["count"]
                            guard case .int(let value) = current else { return }
                            try transaction.upsert(
                                [Item(id: "counter", values: ["count": .int(value + 1)])], into: "notes", origin: .local
                            )
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try stores[1].lookup(table: "notes", id: "counter")?["count"] == .int(Int64(2 * rounds)))
    }

    @Test func reopeningInAnotherInstanceSeesTheWidenedSchema() throws {
        let settings = try PostgresTestServer.require().freshSettings()
        let first = try openStore(settings: settings)
        try first.upsert([Item(id: "a", values: ["title": .string("one")])], into: "notes")
        try first.close()
        let wider = TableSchema(
            "notes", columns: PostgresStoreTests.columns + [Column("done", .bool)],
            indexes: PostgresStoreTests.notes.indexes,
            synced: false)
        let second = try openStore([wider], settings: settings)
        defer { try? second.close() }
        #expect(try second.schema.table(named: "notes")?.column(named: "done")?.type == .bool)
        try second.upsert([Item(id: "b", values: ["done": .bool(true)])], into: "notes")
        #expect(try second.lookup(table: "notes", id: "a") == Item(id: "a", values: ["title": .string("one")]))
    }

    @Test func infoNamesTheServerAndNeverAPassword() throws {
        let server = try PostgresTestServer.require()
        setenv("OFFLINE_SYNC_TEST_PG_PASSWORD", "s3cr3t-value", 1)
        var settings = server.freshSettings()
        settings.passwordEnvironmentVariable = "OFFLINE_SYNC_TEST_PG_PASSWORD"
        let store = try openStore(settings: settings)
        defer { try? store.close() }
        let text = "\(store.info)"
        #expect(text.contains("PostgreSQL version"))
        #expect(!text.contains("s3cr3t-value"))
    }
}

/// A store whose server connection is cut carries on.
@Suite struct PostgresReconnectionTests {
    @Test func aReadAfterTheServerEndedTheConnectionReconnectsAndAnswers() throws {
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        let store = PostgresStore(settings: settings)
        try store.open(schema: StoreSchema([TableSchema("notes", columns: [Column("title", .string)], synced: false)]))
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["title": .string("kept")])], into: "notes")
        try terminateBackends(naming: settings.schema, on: server)
        #expect(try store.lookup(table: "notes", id: "a")?["title"] == .string("kept"))
    }

    @Test func aWriteAfterTheServerEndedTheConnectionReconnectsAndCommits() throws {
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        let store = PostgresStore(settings: settings)
        try store.open(schema: StoreSchema([TableSchema("notes", columns: [Column("title", .string)], synced: false)]))
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["title": .string("kept")])], into: "notes")
        try terminateBackends(naming: settings.schema, on: server)
        try store.upsert([Item(id: "b", values: ["title": .string("after")])], into: "notes")
        #expect(try store.count("notes") == 2)
    }

    /// Ends the server processes whose last statement names `schema` (this test's store only).
    private func terminateBackends(naming schema: String, on server: PostgresTestServer) throws {
        try PostgresTestServer.run(
            "/usr/bin/psql",
            [
                "-h", "127.0.0.1", "-p", String(server.port), "-U", "postgres", "-d", "postgres", "-Atc",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%\(schema)%'",
            ])
    }
}
