import Foundation
import NIOSSL
import OfflineSync
import OfflineSyncHTTP
import Testing

/// `offline-sync serve` with authentication, TLS and a per-user schema file, and `offline-sync
/// token`, as real processes.
@Suite("offline-sync serve with authentication")
struct ServeAuthenticationTests {
    static let executable = ServeProcessTests.executable
    static let secret = String(decoding: Tokens.secret, as: UTF8.self)

    /// Runs `offline-sync` with `arguments` and `AUTH_SECRET` set; returns its status, standard
    /// output and standard error.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["AUTH_SECRET": secret]) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    /// A running `offline-sync serve` with `arguments` (after `--store memory: --port 0`).
    final class Server: Sendable {
        let process: Process
        let port: Int

        init(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = ServeAuthenticationTests.executable
            process.arguments = ["serve", "--store", "memory:", "--port", "0"] + arguments
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
            guard let range = line.range(of: "127.0.0.1:"),
                let bound = Int(line[range.upperBound...].prefix { $0.isNumber })
            else {
                process.terminate()
                process.waitUntilExit()
                throw OfflineSyncError(.configuration, "offline-sync serve did not report its port: '\(line)'")
            }
            self.port = bound
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
        "serve refuses a non-loopback address without auth, and rules that need tokens without a key",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func refusedConfigurations() throws {
        let open = try Self.run(["serve", "--store", "memory:", "--host", "0.0.0.0", "--port", "0"])
        #expect(open.status != 0)
        #expect(open.error.contains("--insecure-no-auth"))
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
}
