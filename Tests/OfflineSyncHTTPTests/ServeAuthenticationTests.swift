import Foundation
import NIOSSL
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import OfflineSyncSQLite
import Testing

/// `offline-sync serve` with authentication, TLS and a per-user schema file, and `offline-sync
/// token`, as real processes.
@Suite("offline-sync serve with authentication")
struct ServeAuthenticationTests {
    static let executable = ServeCommand.executable
    static let secret = String(decoding: Tokens.secret, as: UTF8.self)

    /// Runs `offline-sync` with `arguments` and `AUTH_SECRET` set (see ``ServeProcessTests/run(_:environment:)``).
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try ServeCommand.run(arguments, environment: ["AUTH_SECRET": secret])
    }

    /// A running `offline-sync serve` with `arguments` (after `--store STORE --port 0`).
    final class Server: Sendable {
        let process: Process
        let port: Int
        /// The line serve printed once listening.
        let banner: String

        init(_ arguments: [String], store: String = "memory:") throws {
            let process = Process()
            process.executableURL = ServeAuthenticationTests.executable
            process.arguments = ["serve", "--store", store, "--port", "0"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["AUTH_SECRET": secret]) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            var line = ""
            while !line.contains("\n") {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                line += String(decoding: data, as: UTF8.self)
            }
            guard let range = line.range(of: "/tables/"),
                let bound = Int(String(line[..<range.lowerBound].reversed().prefix { $0.isNumber }.reversed()))
            else {
                process.terminate()
                process.waitUntilExit()
                throw OfflineSyncError(.configuration, "offline-sync serve did not report its port: '\(line)'")
            }
            self.port = bound
            self.banner = line
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @Test(
        "token mints what serve --auth-secret-env accepts; a per-user schema file keeps users apart",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func tokenAndPerUserSchema() async throws {
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try #"""
        { "tables": [
          { "name": "todoitem", "columns": [{ "name": "text", "type": "string" }], "perUser": true },
          { "name": "news", "columns": [{ "name": "text", "type": "string" }], "access": "anonymous" }
        ] }
        """#.write(toFile: schema, atomically: true, encoding: .utf8)
        let server = try Server([
            "--schema", schema, "--auth-secret-env", "AUTH_SECRET", "--auth-audience", "todo-app",
        ])
        defer { server.stop() }
        let minted = try Self.run([
            "token", "--secret-env", "AUTH_SECRET", "--subject", "alice", "--expires-in", "1h", "--audience",
            "todo-app",
        ])
        #expect(minted.status == 0, "\(minted.error)")
        let alice = minted.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!minted.output.contains(Self.secret) && !minted.error.contains(Self.secret))
        let bob = try Self.run([
            "token", "--secret-env", "AUTH_SECRET", "--subject", "bob", "--audience", "todo-app",
        ]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let port = server.port
        let inserted = try await AuthenticationTests.request(
            "POST", "/tables/todoitem", port: port, token: alice, body: #"{"id":"a1","text":"alice's","userId":"bob"}"#)
        #expect(inserted.status == 201)
        let owners = try await AuthenticationTests.request(
            "GET", "/tables/todoitem?$select=id,userId", port: port, token: alice)
        #expect((owners.json as? [[String: Any]])?.first?["userId"] as? String == "alice")
        #expect(
            try await AuthenticationTests.request(
                "POST", "/tables/todoitem", port: port, token: bob, body: #"{"id":"b1","text":"bob's"}"#
            ).status == 201)
        let seen = try await AuthenticationTests.request(
            "GET", "/tables/todoitem?$filter=userId%20ne%20'x'", port: port, token: bob)
        #expect(AuthenticationTests.ids(seen) == ["b1"])
        #expect(
            try await AuthenticationTests.request("GET", "/tables/todoitem/a1", port: port, token: bob).status == 404)
        #expect(try await AuthenticationTests.request("GET", "/tables/todoitem", port: port, token: nil).status == 401)
        #expect(try await AuthenticationTests.request("GET", "/tables/news", port: port, token: nil).status == 200)
        let noAudience = try Self.run(["token", "--secret-env", "AUTH_SECRET", "--subject", "alice"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try await AuthenticationTests.request("GET", "/tables/todoitem", port: port, token: noAudience)
        #expect(refused.status == 401)
        #expect(AuthenticationTests.error(refused).contains("audience"))
    }

    @Test(
        "a per-user table whose schema file declares the owner column in another letter case keeps users apart",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func ownerColumnSpelling() async throws {
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try #"""
        { "name": "todoitem", "perUser": true,
          "columns": [{ "name": "text", "type": "string" }, { "name": "UserId", "type": "string" }] }
        """#.write(toFile: schema, atomically: true, encoding: .utf8)
        let server = try Server(["--schema", schema, "--auth-secret-env", "AUTH_SECRET"])
        defer { server.stop() }
        let alice = try await Tokens.hs256("alice")
        let bob = try await Tokens.hs256("bob")
        let port = server.port
        let inserted = try await AuthenticationTests.request(
            "POST", "/tables/todoitem", port: port, token: alice, body: #"{"id":"a1","text":"mine","userId":"bob"}"#)
        #expect(inserted.status == 201, "\(AuthenticationTests.text(inserted))")
        #expect(
            try await AuthenticationTests.request("GET", "/tables/todoitem/a1", port: port, token: alice).status == 200)
        #expect(
            AuthenticationTests.ids(
                try await AuthenticationTests.request("GET", "/tables/todoitem", port: port, token: alice)) == ["a1"])
        #expect(
            try await AuthenticationTests.request("GET", "/tables/todoitem/a1", port: port, token: bob).status == 404)
        #expect(
            AuthenticationTests.ids(
                try await AuthenticationTests.request("GET", "/tables/todoitem", port: port, token: bob)) == [])
        let owners = try await AuthenticationTests.request(
            "GET", "/tables/todoitem?$select=id,UserId", port: port, token: alice)
        #expect(
            (owners.json as? [[String: Any]])?.first?["UserId"] as? String == "alice",
            "\(AuthenticationTests.text(owners))")
    }

    @Test(
        "serve refuses a non-loopback address without auth, and rules that need tokens without a key",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func refusedConfigurations() throws {
        for host in ["0.0.0.0", "::", "192.168.1.10", "127.evil.example"] {
            let open = try Self.run(["serve", "--store", "memory:", "--host", host, "--port", "0"])
            #expect(open.status != 0, "\(host)")
            #expect(open.error.contains("--insecure-no-auth"), "\(host): \(open.error)")
        }
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try #"{ "name": "todoitem", "columns": [{ "name": "text", "type": "string" }], "perUser": true }"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let perUser = try Self.run(["serve", "--store", "memory:", "--port", "0", "--schema", schema])
        #expect(perUser.status != 0)
        #expect(perUser.error.contains("checks no tokens"))
        try "short secret\n".write(toFile: directory.path("short"), atomically: true, encoding: .utf8)
        let short = try Self.run(["token", "--secret-file", directory.path("short"), "--subject", "alice"])
        #expect(short.status != 0)
        #expect(short.error.contains("at least 32"))
        #expect(!short.error.contains("short secret"))
        let weak = try Self.run([
            "serve", "--store", "memory:", "--port", "0", "--auth-secret-file", directory.path("short"),
        ])
        #expect(weak.status != 0)
        #expect(weak.error.contains("at least 32"))
        let missing = try Self.run(["token", "--secret-env", "NO_SUCH_VARIABLE_FOR_TOKENS", "--subject", "alice"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("NO_SUCH_VARIABLE_FOR_TOKENS"))
    }

    @Test(
        "serve --tls-cert --tls-key speaks HTTPS to HTTPRemote, with tokens",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func tls() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try TLSTests.Credentials(in: directory)
        let server = try Server([
            "--tls-cert", directory.path("certificate.pem"), "--tls-key", directory.path("key.pem"),
            "--auth-secret-env", "AUTH_SECRET", "--dynamic-schema",
        ])
        defer { server.stop() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([credentials.certificate])
        let device = try Device.make("alice", store: InMemoryStore(), port: server.port) {
            $0.baseURL = "https://127.0.0.1:\(server.port)"
            $0.tlsConfiguration = tls
            $0.authentication = Tokens.bearer("alice")
        }
        _ = try device.todo.insert([Device.todo("t1", "over TLS")])
        let pushed = try await device.context.push()
        #expect(pushed.succeeded, "\(pushed.errors)")
        #expect(try await device.pullAll().received == 1)
        try await device.close()
        // Plain HTTP to the TLS port is not answered as HTTP.
        await #expect(throws: (any Error).self) {
            let answer = try await send(
                "GET", "/tables/todoitem", port: server.port, headers: [("ZUMO-API-VERSION", "2.0.0")])
            if answer.status == 200 { return }
            throw OfflineSyncError(.invalidOperation, "status \(answer.status)")
        }
    }

    @Test(
        "serve listens on a non-loopback address without auth only with --insecure-no-auth, and on loopback without it",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func insecureNoAuth() async throws {
        let open = try Server(["--host", "0.0.0.0", "--insecure-no-auth"])
        defer { open.stop() }
        #expect(open.banner.contains("http://0.0.0.0:\(open.port)/tables/"), "\(open.banner)")
        #expect(open.banner.contains("without authentication"), "\(open.banner)")
        let answer = try await AuthenticationTests.request("GET", "/tables/todoitem", port: open.port, token: nil)
        #expect(answer.status == 200)
        let loopback = try Server(["--host", "127.0.0.1"])
        defer { loopback.stop() }
        #expect(
            try await AuthenticationTests.request("GET", "/tables/todoitem", port: loopback.port, token: nil).status
                == 200)
    }

    @Test(
        "through a real serve: two users see only their own rows; a token expiring mid-push is renewed once, nothing lost or applied twice",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)), arguments: [HTTPRemote.BatchWrites.never, .always])
    func twoUsersAndExpiryThroughServe(batchWrites: HTTPRemote.BatchWrites) async throws {
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try #"""
        { "name": "todoitem", "perUser": true,
          "columns": [{ "name": "text", "type": "string" }, { "name": "complete", "type": "bool" }] }
        """#.write(toFile: schema, atomically: true, encoding: .utf8)
        let storePath = directory.path("server.sqlite")
        let server = try Server(
            ["--schema", schema, "--auth-secret-env", "AUTH_SECRET", "--auth-clock-skew", "0"],
            store: "sqlite:\(storePath)")
        var running = true
        defer { if running { server.stop() } }
        let source = try await TokenSource(subject: "alice")
        let alice = try Device.make("alice", store: InMemoryStore(), port: server.port, batchWrites: batchWrites) {
            $0.authentication = source.authentication
        }
        let bob = try Device.make("bob", store: InMemoryStore(), port: server.port, batchWrites: batchWrites) {
            $0.authentication = .zumo(token: { try await Tokens.hs256("bob") })
        }
        let aliceCount = 150
        let bobCount = 40
        _ = try alice.todo.insert((0..<aliceCount).map { Device.todo(String(format: "alice-%03d", $0), "a\($0)") })
        _ = try bob.todo.insert((0..<bobCount).map { Device.todo(String(format: "bob-%03d", $0), "b\($0)") })
        // From the second token fetch on (after the first write, or first batch of a batched
        // push, was applied), Alice's hook hands out a token that expired an hour ago, until the
        // client asks it to refresh after the server's 401.
        source.expire(after: 2, with: try await Tokens.hs256(Tokens.claims("alice", lifetime: -3600)))
        let pushed = try await alice.context.push()
        #expect(pushed.succeeded, "\(pushed.errors)")
        #expect(source.refreshes == 1)
        #expect(try alice.context.pendingOperationCount() == 0)
        #expect(try await bob.context.push().succeeded)

        #expect(try await bob.pullAll().received == bobCount)
        #expect(try bob.items().keys.allSatisfy { $0.hasPrefix("bob-") })
        try bob.todo.delete(id: "bob-000")
        var edited = try #require(try bob.todo.lookup(id: "bob-001"))
        edited["complete"] = true
        try bob.todo.update(edited)
        #expect(try await bob.context.push().succeeded)
        #expect(try await alice.pullAll().received == aliceCount)
        #expect(try alice.items().count == aliceCount)
        #expect(try alice.items().keys.allSatisfy { $0.hasPrefix("alice-") })
        try await alice.close()
        try await bob.close()
        server.stop()
        running = false

        // The server's own rows: each stamped with its owner, each of Alice's written once.
        let store = SQLiteStore(path: storePath)
        try store.open(schema: StoreSchema([]))
        defer { try? store.close() }
        let rows = try store.read(Query(table: "todoitem", top: 1000)).items
        #expect(rows.count == aliceCount + bobCount)
        for row in rows {
            let owner = row.id.hasPrefix("alice-") ? "alice" : "bob"
            #expect(row["userId"] == .string(owner), "\(row.id)")
            if owner == "alice" {
                #expect(row.version == TableServiceVersion.first(of: row), "\(row.id) was written more than once")
            }
        }
        #expect(try store.lookup(table: "todoitem", id: "bob-000")?.isDeleted == true)
        #expect(try store.lookup(table: "todoitem", id: "bob-001")?["complete"] == true)
    }
}
