import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncStores
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `offline-sync sync` pulling from a real `offline-sync serve` process into each backend.
@Suite("offline-sync sync")
struct CLISyncTests {
    static let itemCount = 250

    /// Sends one table request to the server and returns its status.
    static func request(_ method: String, _ path: String, port: Int, body: String? = nil) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test(
        "sync pulls a served table into each backend; export and query read it; a second sync pulls only changes",
        arguments: Backend.available)
    func syncPullsAServedTable(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let server = try CLIDemoRemoteTests.ServeProcess(store: "sqlite:" + directory.path("server.sqlite"))
        defer { server.stop() }
        for index in 0..<Self.itemCount {
            let status = try await Self.request(
                "POST", "/tables/todoitem", port: server.port,
                body:
                    #"{"id": "i\#(String(format: "%04d", index))", "text": "item \#(index)", "complete": \#(index % 2 == 0)}"#
            )
            #expect(status == 201)
        }
        #expect(try await Self.request("DELETE", "/tables/todoitem/i0007", port: server.port) == 200)

        let store = backend.url("device", in: directory)
        let remote = "http://127.0.0.1:\(server.port)"
        let pulled = try CLI.run([
            "sync", "--store", store, "--remote", remote, "--table", "todoitem", "--query-id", "all",
        ])
        #expect(pulled.status == 0, "\(pulled)")
        #expect(pulled.stdout.contains("pulled \(Self.itemCount) records of todoitem"), "\(pulled)")

        let exported = try CLI.run(["export", "--store", store, "--table", "todoitem"])
        #expect(exported.status == 0, "\(exported)")
        let lines = exported.stdout.split(separator: "\n")
        #expect(lines.count == Self.itemCount - 1, "the item deleted on the server is not kept")
        #expect(!exported.stdout.contains("i0007"))
        let query = try CLI.run([
            "query", "--store", store, "--table", "todoitem", "--filter", "id eq 'i0042'", "--format", "jsonl",
        ])
        #expect(query.stdout.contains("item 42"), "\(query)")

        #expect(
            try await Self.request("PATCH", "/tables/todoitem/i0001", port: server.port, body: #"{"text": "changed"}"#)
                == 200)
        let again = try CLI.run([
            "sync", "--store", store, "--remote", remote, "--table", "todoitem", "--query-id", "all",
        ])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("pulled 1 record of") || again.stdout.contains("pulled 2 records"), "\(again)")
        let changed = try CLI.run([
            "query", "--store", store, "--table", "todoitem", "--filter", "id eq 'i0001'", "--format", "jsonl",
        ])
        #expect(changed.stdout.contains("changed"))
    }

    @Test("rows imported without updatedAt are stamped when serve starts, so an incremental sync pulls them")
    func importedRowsReachAnIncrementalSync() async throws {
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try Data(
            #"{"tables": [{"name": "todoitem", "columns": [{"name": "text", "type": "string"}], "synced": true}]}"#.utf8
        ).write(to: URL(fileURLWithPath: schema))
        let lines = (0..<3).map { #"{"id": "imported-\#($0)", "text": "line \#($0)"}"# }
        let file = directory.path("items.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let serverStore = "sqlite:" + directory.path("server.sqlite")
        let imported = try CLI.run([
            "import", "--store", serverStore, "--table", "todoitem", "--file", file, "--schema", schema,
        ])
        #expect(imported.status == 0, "\(imported)")

        let server = try CLIDemoRemoteTests.ServeProcess(store: serverStore)
        defer { server.stop() }
        let device = "sqlite:" + directory.path("device.sqlite")
        let remote = "http://127.0.0.1:\(server.port)"
        let pulled = try CLI.run([
            "sync", "--store", device, "--remote", remote, "--table", "todoitem", "--query-id", "all",
        ])
        #expect(pulled.status == 0, "\(pulled)")
        #expect(pulled.stdout.contains("pulled 3 records of todoitem"), "\(pulled)")
        let query = try CLI.run([
            "query", "--store", device, "--table", "todoitem", "--filter", "id eq 'imported-2'", "--format", "jsonl",
        ])
        #expect(query.stdout.contains("line 2") && query.stdout.contains("version"), "\(query)")

        #expect(try await Self.request("POST", "/tables/todoitem", port: server.port, body: #"{"id": "new"}"#) == 201)
        let again = try CLI.run([
            "sync", "--store", device, "--remote", remote, "--table", "todoitem", "--query-id", "all",
        ])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("pulled 1 record of"), "\(again)")
    }

    @Test("sync from a server that is not running fails with an error naming it")
    func syncFromNowhere() throws {
        let directory = try TemporaryDirectory()
        let result = try CLI.run([
            "sync", "--store", "sqlite:" + directory.path("device.sqlite"), "--remote", "http://127.0.0.1:9",
            "--table", "todoitem",
        ])
        #expect(result.status != 0)
        #expect(result.stderr.contains("127.0.0.1:9"), "\(result)")
    }

    @Test("a remote URL with a password is refused without repeating the password")
    func syncWithCredentialsInTheURL() throws {
        let directory = try TemporaryDirectory()
        for remote in [
            "http://alice:hunter2-secret@127.0.0.1:9", "htp://alice:hunter2-secret@127.0.0.1:9",
            "HTTP://alice:hunter2-secret@127.0.0.1:9",
        ] {
            let result = try CLI.run([
                "sync", "--store", "sqlite:" + directory.path("device.sqlite"), "--remote", remote, "--table", "todoitem",
            ])
            #expect(result.status != 0, "\(result)")
            #expect(result.stderr.contains("127.0.0.1"), "\(result)")
            #expect(!result.stderr.contains("hunter2") && !result.stdout.contains("hunter2"), "\(result)")
        }
    }

    @Test("sync reads the remote's scheme in any case, as URLs do")
    func syncWithAnUppercaseScheme() throws {
        let directory = try TemporaryDirectory()
        let result = try CLI.run([
            "sync", "--store", "sqlite:" + directory.path("device.sqlite"), "--remote", "HTTPS://127.0.0.1:9",
            "--table", "todoitem",
        ])
        #expect(result.status != 0, "nothing listens on port 9: \(result)")
        #expect(!result.stderr.contains("is not an http:// or https:// URL"), "\(result)")
    }

    /// The `text` of item `id` on the server.
    static func serverText(_ id: String, port: Int) async throws -> String? {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/tables/todoitem/\(id)")!)
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["text"] as? String
    }

    /// Edits items of the device store as an app would: each edit queued by the sync engine.
    static func editLocally(_ store: String, _ texts: [String: String]) throws {
        BuiltInStores.register()
        let todo = TableSchema("todoitem", columns: [Column("text", .string)])
        let context = try SyncContext(
            store: try StoreRegistry.shared.makeStore(store), remote: try InMemoryRemote(tables: [todo]), tables: [todo])
        let table = try context.table("todoitem")
        for (id, text) in texts {
            var item = try #require(try table.lookup(id: id))
            item["text"] = .string(text)
            try table.update(item)
        }
        try context.close()
    }

    @Test("a queued edit the server refuses as a conflict stops sync and names --resolve; local or server settles it")
    func syncResolvesConflicts() async throws {
        let directory = try TemporaryDirectory()
        let server = try CLIDemoRemoteTests.ServeProcess(store: "sqlite:" + directory.path("server.sqlite"))
        defer { server.stop() }
        for id in ["a", "b"] {
            #expect(
                try await Self.request(
                    "POST", "/tables/todoitem", port: server.port, body: #"{"id": "\#(id)", "text": "first"}"#) == 201)
        }
        let store = "sqlite:" + directory.path("device.sqlite")
        let sync = ["sync", "--store", store, "--remote", "http://127.0.0.1:\(server.port)", "--table", "todoitem"]
        #expect(try CLI.run(sync).status == 0)

        try Self.editLocally(store, ["a": "mine", "b": "mine"])
        for id in ["a", "b"] {
            #expect(
                try await Self.request("PATCH", "/tables/todoitem/\(id)", port: server.port, body: #"{"text": "theirs"}"#)
                    == 200)
        }
        let refused = try CLI.run(sync)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("refused 2 queued edits"), "\(refused)")
        #expect(refused.stderr.contains("--resolve local") && refused.stderr.contains("--resolve server"), "\(refused)")
        #expect(!refused.stderr.contains("operationErrors()"), "no Swift API in the CLI's advice: \(refused)")
        #expect(try CLI.run(sync).status == 1, "the edits stay queued")

        let local = try CLI.run(sync + ["--resolve", "local"])
        #expect(local.status == 0, "\(local)")
        #expect(try await Self.serverText("a", port: server.port) == "mine")
        #expect(try await Self.serverText("b", port: server.port) == "mine")

        try Self.editLocally(store, ["a": "mine again"])
        #expect(
            try await Self.request("PATCH", "/tables/todoitem/a", port: server.port, body: #"{"text": "theirs again"}"#)
                == 200)
        let taken = try CLI.run(sync + ["--resolve", "server"])
        #expect(taken.status == 0, "\(taken)")
        #expect(try await Self.serverText("a", port: server.port) == "theirs again")
        let query = try CLI.run(["query", "--store", store, "--table", "todoitem", "--format", "jsonl"])
        #expect(query.stdout.contains("theirs again") && !query.stdout.contains("mine again"), "\(query)")
        let inspect = try CLI.run(["inspect", "--store", store])
        #expect(inspect.stdout.contains("todoitem  2     0        0"), "nothing pending, no error: \(inspect)")
    }
}
