import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// Two `offline-sync serve` processes over one store file with `--dynamic-schema`, as a
/// deployment runs several behind a load balancer: a table or column that a write through one
/// process adds is served by the other at once, and a write through the other keeps it.
@Suite("serve processes sharing a store", .tags(.slow), .skippedInFastRuns)
struct ServeSharedStoreTests {
    static let key = String(repeating: "5a", count: 32)

    @Test(
        "a table and a column added through one serve process are answered, queried and kept by another",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ["sqlite", "sqlcipher", "lmdb"])
    func schemaChangesReachTheOtherProcess(backend: String) async throws {
        let directory = try TemporaryDirectory()
        let store =
            backend == "sqlcipher"
            ? "sqlcipher:\(directory.path("store"))?key-env=SHARED_STORE_KEY" : "\(backend):\(directory.path("store"))"
        let environment = ["SHARED_STORE_KEY": Self.key]
        let first = try ServeProcess(
            store: store, port: 0, options: ["--dynamic-schema"], environment: environment)
        defer { first.kill() }
        let second = try ServeProcess(
            store: store, port: 0, options: ["--dynamic-schema"], environment: environment)
        defer { second.kill() }
        let headers = [("ZUMO-API-VERSION", "2.0.0"), ("Content-Type", "application/json")]
        func call(_ server: ServeProcess, _ method: String, _ target: String, _ body: String? = nil)
            async throws -> (status: Int, text: String)
        {
            let answer = try await send(
                method, target, port: server.port, headers: headers, body: body.map { Array($0.utf8) })
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        }

        #expect(try await call(first, "POST", "/tables/todoitem", #"{"id":"a","text":"one"}"#).status == 201)
        // The second process widens the table with a column the first has never seen.
        let widened = try await call(second, "POST", "/tables/todoitem", #"{"id":"b","text":"two","label":"red"}"#)
        #expect(widened.status == 201, "\(widened)")

        let lookup = try await call(first, "GET", "/tables/todoitem/b")
        #expect(lookup.status == 200 && lookup.text.contains(#""label":"red""#), "\(lookup)")
        let page = try await call(first, "GET", "/tables/todoitem?$filter=label%20eq%20'red'")
        #expect(page.status == 200 && page.text.contains(#""id":"b""#) && !page.text.contains(#""id":"a""#), "\(page)")
        let patched = try await call(first, "PATCH", "/tables/todoitem/b", #"{"id":"b","text":"three"}"#)
        #expect(patched.status == 200 && patched.text.contains(#""label":"red""#), "\(patched)")
        let kept = try await call(second, "GET", "/tables/todoitem/b")
        #expect(kept.text.contains(#""label":"red""#) && kept.text.contains(#""text":"three""#), "\(kept)")

        // A table the second process creates.
        #expect(try await call(second, "POST", "/tables/tags", #"{"id":"t","name":"x"}"#).status == 201)
        let tags = try await call(first, "GET", "/tables/tags")
        #expect(tags.status == 200 && tags.text.contains(#""name":"x""#), "\(tags)")
    }

    /// The store at `path` of `backend`, as the process's own instance (keyed with ``key``).
    static func store(_ backend: String, at path: String) throws -> any LocalStore {
        switch backend {
        case "sqlcipher": return try SQLCipherStore(path: path, key: .raw(Array(repeating: 0x5a, count: 32)))
        case "lmdb": return try LMDBStore(path: path)
        default: return SQLiteStore(path: path)
        }
    }

    @Test(
        "a store that another process widened says so, reads and writes its rows without losing the new column, and sees it once reopened",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ["sqlite", "sqlcipher", "lmdb"])
    func anInstanceOutlivesAnotherProcesssSchemaChange(backend: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store")
        let url = backend == "sqlcipher" ? "sqlcipher:\(path)?key-env=SHARED_STORE_KEY" : "\(backend):\(path)"
        let store = try Self.store(backend, at: path)
        try store.open(schema: StoreSchema([TableSchema("notes", columns: [Column("title", .string)], synced: false)]))
        defer { try? store.close() }
        try store.upsert([Item(id: "n1", values: ["title": "mine"])], into: "notes")
        #expect(try !store.storedSchemaChanged(), "its own writes change no schema")

        // Another process declares a column (and a table) and writes a row with it.
        let schema = directory.path("wider.json")
        try Data(
            #"{"tables": [{"name": "notes", "synced": false, "columns": [{"name": "title", "type": "string"}, {"name": "label", "type": "string"}]}, {"name": "tags", "synced": false, "columns": [{"name": "name", "type": "string"}]}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: schema))
        let rows = directory.path("rows.jsonl")
        try Data(#"{"id":"n2","title":"theirs","label":"red"}"#.utf8).write(to: URL(fileURLWithPath: rows))
        let imported = try ServeCommand.run(
            ["import", "--store", url, "--table", "notes", "--file", rows, "--schema", schema],
            environment: ["SHARED_STORE_KEY": Self.key])
        try #require(imported.status == 0, "\(imported.error)")
        #expect(try store.storedSchemaChanged())

        // A write that rewrites the new row keeps the column it did not know; reading it is no error.
        try store.write { transaction in
            var row = try #require(try transaction.lookup(table: "notes", id: "n2"))
            row["title"] = .string("rewritten")
            try transaction.upsert([row], into: "notes", origin: .local)
        }
        #expect(try store.lookup(table: "notes", id: "n2")?["title"].stringValue == "rewritten")
        let exported = try ServeCommand.run(
            ["export", "--store", url, "--table", "notes"], environment: ["SHARED_STORE_KEY": Self.key])
        #expect(
            exported.output.contains(#""label":"red""#) && exported.output.contains(#""title":"rewritten""#),
            "\(exported)")

        try store.close()
        try store.open(schema: StoreSchema([]))
        #expect(try !store.storedSchemaChanged())
        #expect(try store.schema.table(named: "notes")?.column(named: "label") != nil)
        #expect(try store.schema.table(named: "tags") != nil)
        #expect(try store.lookup(table: "notes", id: "n2")?["label"].stringValue == "red")
    }
}
