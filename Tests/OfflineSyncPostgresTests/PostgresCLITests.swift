import OfflineSyncTestSupport
import Foundation
import OfflineSync
import OfflineSyncPostgres
import Testing

/// The `offline-sync` commands against PostgreSQL (the cluster of this test process): conformance,
/// migrate to and from, inspect, import/export and bench.
@Suite(.enabled(if: OfflineSyncTool.isBuilt))
struct PostgresCLITests {
    static let schema = """
        {"tables": [{"name": "todoitem",
          "columns": [{"name": "text", "type": "string"}, {"name": "complete", "type": "bool"},
                      {"name": "priority", "type": "integer"}, {"name": "score", "type": "double"},
                      {"name": "due", "type": "date"}, {"name": "tags", "type": "json"}],
          "indexes": [{"name": "todoitem_complete", "columns": ["complete"]}]}]}
        """

    static let lines = """
        {"id":"b","text":"Walk the dog","complete":true,"priority":1,"score":-0.5}
        {"id":"a","text":"Buy milk \\"2%\\"","complete":false,"priority":3,"due":"2026-01-02T03:04:05.678+01:00","tags":["shop", {"aisle": 4}]}
        {"id":"c","text":"Écrire \\u00e0 Zoë","complete":false,"score":-0.0,"due":"1969-12-31T23:59:59.999Z"}
        """

    /// What `export` prints for ``lines`` on every backend.
    static let exported = """
        {"id":"a","complete":false,"due":"2026-01-02T02:04:05.678Z","priority":3,"tags":["shop",{"aisle":4}],"text":"Buy milk \\"2%\\""}
        {"id":"b","complete":true,"priority":1,"score":-0.5,"text":"Walk the dog"}
        {"id":"c","complete":false,"due":"1969-12-31T23:59:59.999Z","score":-0.0,"text":"Écrire à Zoë"}

        """

    /// A URL for a new, empty PostgreSQL schema, dropped by `cleanUp`.
    private func freshURL() throws -> (url: String, settings: PostgresConnectionSettings) {
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        return ("postgres://postgres@127.0.0.1:\(server.port)/postgres?schema=\(settings.schema)", settings)
    }

    private func importFixtures(into url: String, in directory: ScratchDirectory) throws {
        let schema = directory.path("schema.json")
        let file = directory.path("todo.jsonl")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schema))
        try Data(Self.lines.utf8).write(to: URL(fileURLWithPath: file))
        let result = try OfflineSyncTool.run([
            "import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema,
        ])
        #expect(result.status == 0, "\(result)")
    }

    @Test func conformanceRunsAgainstPostgres() throws {
        let (url, settings) = try freshURL()
        defer { try? PostgresStore.dropSchema(settings) }
        let result = try OfflineSyncTool.run(["conformance", "--store", url, "--tier", "store", "--filter", "paging"])
        #expect(result.status == 0, "\(result)")
        let last = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last.range(of: #"^[1-9]\d* passed, 0 failed, \d+ skipped$"#, options: .regularExpression) != nil,
            "\(result)")
    }

    @Test func migrateToPostgresAndBackKeepsEveryItem() throws {
        let directory = try ScratchDirectory()
        let (url, settings) = try freshURL()
        defer { try? PostgresStore.dropSchema(settings) }
        let source = "sqlite:" + directory.path("source.sqlite")
        try importFixtures(into: source, in: directory)

        let there = try OfflineSyncTool.run(["migrate", "--from", source, "--to", url])
        #expect(there.status == 0, "\(there)")
        #expect(there.stdout.contains("3 items"), "\(there)")
        #expect(try OfflineSyncTool.run(["export", "--store", url, "--table", "todoitem"]).stdout == Self.exported)

        let again = try OfflineSyncTool.run(["migrate", "--from", source, "--to", url])
        #expect(
            again.status == 1 && again.stderr.contains("already holds a store"),
            "an existing schema is refused: \(again)")

        let back = "lmdb:" + directory.path("back.lmdb") + "?map-size=64MiB"
        let returned = try OfflineSyncTool.run(["migrate", "--from", url, "--to", back])
        #expect(returned.status == 0, "\(returned)")
        #expect(try OfflineSyncTool.run(["export", "--store", back, "--table", "todoitem"]).stdout == Self.exported)
    }

    @Test func inspectShowsTheBackendAndNeverThePassword() throws {
        let directory = try ScratchDirectory()
        let (url, settings) = try freshURL()
        defer { try? PostgresStore.dropSchema(settings) }
        try importFixtures(into: url, in: directory)
        let secret = "s3cret-never-shown"
        let result = try OfflineSyncTool.run(["inspect", "--store", url], environment: ["PGPASSWORD": secret])
        #expect(result.status == 0, "\(result)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.contains(["backend", "postgres"]), "\(result)")
        #expect(rows.contains { $0.first == "todoitem" && $0.dropFirst().first == "3" }, "\(result)")
        #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))

        let missing = try OfflineSyncTool.run(["inspect", "--store", try freshURL().url])
        #expect(missing.status == 1, "\(missing)")
        #expect(!missing.stderr.isEmpty, "\(missing)")
    }

    @Test func benchRunsOnPostgresWithTinySizes() throws {
        let server = try PostgresTestServer.require()
        let result = try OfflineSyncTool.run(
            [
                "bench", "--stores", "postgres,postgres-copy", "--records", "1000", "--repetitions", "1", "--scenarios",
                "bulk-upsert,lookup",
            ],
            environment: ["OFFLINE_SYNC_BENCH_POSTGRES": "postgres://postgres@127.0.0.1:\(server.port)/postgres"])
        #expect(result.status == 0, "\(result)")
        let header = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(header.contains("postgres") && header.contains("postgres-copy"), "\(result)")
        #expect(result.stdout.contains("bulk upsert, pages of 1,000"), "\(result)")
        #expect(result.stdout.contains("lookup by random id"), "\(result)")
        #expect(result.stdout.contains("["), "each column shows its ratio to raw libpq: \(result)")
        let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("bulk upsert") || $0.hasPrefix("lookup") }
        #expect(rows.count == 4 && !rows.contains { $0.contains("failed") }, "\(result)")
    }
}
