import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import OfflineSyncSQLite
import OfflineSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// ``Replicator`` with ``ChangeStream`` against real `offline-sync serve` processes, over SQLite
/// and over PostgreSQL: other devices' writes reach an observed query with no pull call, a killed
/// server is recovered from, per-user tables tell no other user, a server without the stream is
/// polled, a 401 in the middle is renewed, and `offline-sync sync --watch` converges both ways.
@Suite("Replicator and the change stream through offline-sync serve", .serialized)
struct ReplicatorServeTests {
    static let executable = ServeCommand.executable
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }
    static let secret = String(decoding: Tokens.secret, as: UTF8.self)

    /// A running `offline-sync serve` (`--port 0` unless a port is given, read back from its banner).
    final class Serve: @unchecked Sendable {
        let process: Process
        let port: Int
        var url: String { "http://127.0.0.1:\(port)" }

        init(_ arguments: [String], port: Int = 0) throws {
            let process = Process()
            process.executableURL = ReplicatorServeTests.executable
            process.arguments = ["serve", "--port", "\(port)"] + arguments
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
            guard let range = line.range(of: "http://127.0.0.1:"),
                let bound = Int(line[range.upperBound...].prefix { $0.isNumber })
            else {
                Foundation.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw OfflineSyncError(.configuration, "offline-sync serve did not report its port: '\(line)'")
            }
            self.port = bound
        }

        func kill() {
            guard process.isRunning else { return }
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }

        deinit { kill() }
    }

    /// A device: an in-memory store, its remote and change stream, and a replicator pulling every
    /// todo item incrementally.
    final class LiveDevice: @unchecked Sendable {
        static let todo = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])
        let context: SyncContext
        let remote: HTTPRemote
        let stream: ChangeStream
        let replicator: Replicator
        let todo: SyncTable
        private var run: Task<Void, any Error>?

        init(url: String, authentication: HTTPAuthentication? = nil, pollInterval: Duration = .seconds(3600)) throws {
            var configuration = HTTPRemote.Configuration(baseURL: url, authentication: authentication)
            configuration.connectTimeout = .milliseconds(500)
            configuration.retryDelay = .milliseconds(20)
            remote = try HTTPRemote(configuration: configuration)
            stream = ChangeStream(configuration: configuration)
            context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Self.todo])
            todo = try context.table("todoitem")
            replicator = Replicator(
                context: context, pulls: [PullRequest(table: "todoitem", queryId: "all")], signal: stream,
                options: .init(
                    pushDelay: .milliseconds(5), pollInterval: pollInterval,
                    backoff: RetryBackoff(initial: .milliseconds(50), maximum: .milliseconds(500))))
        }

        func start() {
            let replicator = self.replicator
            run = Task { try await replicator.run() }
        }

        /// Waits until the replicator's status satisfies `condition`.
        @discardableResult
        func status(where condition: (ReplicatorStatus) -> Bool) async -> ReplicatorStatus? {
            for await status in replicator.status where condition(status) { return status }
            return nil
        }

        /// Waits until the observed todo list satisfies `condition`, and returns it.
        @discardableResult
        func observed(where condition: ([Item]) -> Bool) async throws -> [Item] {
            for try await result in try todo.observe() where condition(result.items) { return result.items }
            return []
        }

        func close() async {
            run?.cancel()
            _ = try? await run?.value
            try? context.close()
            try? await stream.shutdown()
            try? await remote.shutdown()
        }
    }

    /// The store a `serve` of these tests runs over: an SQLite file, or a new schema of this test
    /// process's PostgreSQL cluster (``PostgresTestServer``).
    enum ServeStore: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres

        var testDescription: String { rawValue }

        func url(in directory: TemporaryDirectory) throws -> String {
            switch self {
            case .sqlite: return "sqlite:" + directory.path("serve.sqlite")
            case .postgres: return try PostgresTestServer.require().freshURL()
            }
        }
    }

    static func item(_ id: String, _ text: String) -> Item {
        Item(id: id, values: ["text": .string(text), "complete": .bool(false)])
    }

    @Test(
        "an insert on device A reaches device B's observed query through the change stream, with no pull call",
        .enabled(if: isBuilt), arguments: ServeStore.allCases)
    func insertReachesAnotherDeviceWithoutPull(_ store: ServeStore) async throws {
        let directory = try TemporaryDirectory()
        let server = try Serve(["--store", try store.url(in: directory)])
        defer { server.stop() }
        let a = try LiveDevice(url: server.url)
        let b = try LiveDevice(url: server.url)
        a.start()
        b.start()
        for device in [a, b] {
            await device.status { $0.connection == .connected && $0.changeSource == .stream && $0.lastSyncedAt["todoitem"] != nil }
        }
        try a.todo.insert(Self.item("from-a", "hello from A"))
        let seen = try await b.observed { $0.contains { $0.id == "from-a" } }
        #expect(seen.first { $0.id == "from-a" }?["text"] == .string("hello from A"))
        #expect(b.replicator.currentStatus.changeSource == .stream)
        await a.close()
        await b.close()
    }

    @Test(
        "serve killed with SIGKILL and restarted mid-session: both devices recover and converge, nothing lost or duplicated",
        .enabled(if: isBuilt))
    func killedServerIsRecoveredFrom() async throws {
        let directory = try TemporaryDirectory()
        let store = "sqlite:" + directory.path("server.sqlite")
        // Pages of 1,000, so that one read below sees the whole table.
        var server = try Serve(["--store", store, "--page-size", "1000"])
        let port = server.port
        let a = try LiveDevice(url: server.url)
        let b = try LiveDevice(url: server.url)
        a.start()
        b.start()
        for device in [a, b] { await device.status { $0.connection == .connected && $0.changeSource == .stream } }
        for round in 0..<3 {
            if round == 1 {
                // Killed once the first round reached it: the server holds data, the devices are connected.
                for device in [a, b] { await device.status { $0.pendingOperationCount == 0 } }
                server.kill()
            }
            if round == 2 { server = try Serve(["--store", store, "--page-size", "1000"], port: port) }
            for index in 0..<10 {
                try a.todo.insert(Self.item("a-\(round)-\(index)", "A \(round).\(index)"))
                try b.todo.insert(Self.item("b-\(round)-\(index)", "B \(round).\(index)"))
            }
        }
        defer { server.stop() }
        let expected = Set((0..<3).flatMap { round in (0..<10).flatMap { ["a-\(round)-\($0)", "b-\(round)-\($0)"] } })
        for device in [a, b] {
            let items = try await device.observed { Set($0.map(\.id)) == expected }
            #expect(items.count == 60)
            await device.status { $0.pendingOperationCount == 0 && $0.connection == .connected }
        }
        let served = try await a.remote.readPage(Query(table: "todoitem", top: 1000), includeDeleted: true).items
        #expect(served.count == 60)
        #expect(Set(served.map(\.id)) == expected)
        for item in served {
            let parts = item.id.split(separator: "-")
            #expect(item["text"] == .string("\(parts[0].uppercased()) \(parts[1]).\(parts[2])"))
        }
        await a.close()
        await b.close()
    }

    @Test(
        "a per-user table's writes are announced to its owner's streams only", .enabled(if: isBuilt),
        arguments: ServeStore.allCases)
    func perUserTableSignalsOnlyItsOwner(_ store: ServeStore) async throws {
        let directory = try TemporaryDirectory()
        let schema = directory.path("schema.json")
        try #"""
        { "tables": [
          { "name": "todoitem", "columns": [{ "name": "text", "type": "string" }], "perUser": true },
          { "name": "news", "columns": [{ "name": "text", "type": "string" }], "access": "anonymous" }
        ] }
        """#.write(toFile: schema, atomically: true, encoding: .utf8)
        let server = try Serve([
            "--store", try store.url(in: directory), "--schema", schema, "--auth-secret-env", "AUTH_SECRET",
        ])
        defer { server.stop() }
        let alice = try await Tokens.hs256("alice")
        let bob = try await Tokens.hs256("bob")
        func configuration(_ token: String) -> HTTPRemote.Configuration {
            HTTPRemote.Configuration(baseURL: server.url, authentication: .bearer(token: { token }))
        }
        let events = Locked<[String: [ChangeSignalEvent]]>([:])
        let (ready, readySignal) = AsyncStream<String>.makeStream()
        var listeners: [Task<Void, any Error>] = []
        var streams: [ChangeStream] = []
        for (user, token) in [("alice", alice), ("bob", bob)] {
            let stream = ChangeStream(configuration: configuration(token))
            streams.append(stream)
            listeners.append(
                Task {
                    try await stream.listen(to: ["todoitem", "news"]) { event in
                        if event == .connected { readySignal.yield(user) }
                        events.withLock { $0[user, default: []].append(event) }
                    }
                })
        }
        var connected = Set<String>()
        for await user in ready {
            connected.insert(user)
            if connected.count == 2 { break }
        }
        let writer = try HTTPRemote(configuration: configuration(alice))
        _ = try await writer.insert(Item(id: "secret", values: ["text": "alice only"]), into: "todoitem")
        _ = try await writer.insert(Item(id: "headline", values: ["text": "for everyone"]), into: "news")
        func tables(_ user: String) -> [String] {
            events.withLock { $0[user] ?? [] }.compactMap {
                if case .changed(let table, _) = $0 { return table } else { return nil }
            }
        }
        // Bob's stream announces the news; the per-user write committed before it would have come
        // first (changes are kept one per table, in the order the tables first changed).
        while !tables("bob").contains("news") || !tables("alice").contains("news") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!tables("bob").contains("todoitem"))
        #expect(tables("alice").contains("todoitem"))
        for listener in listeners { listener.cancel() }
        for stream in streams { try? await stream.shutdown() }
        try await writer.shutdown()
    }

    @Test(
        "a server without the change stream is polled, and the devices converge", .enabled(if: isBuilt),
        arguments: ServeStore.allCases)
    func serverWithoutStreamIsPolled(_ store: ServeStore) async throws {
        let directory = try TemporaryDirectory()
        let server = try Serve(["--store", try store.url(in: directory), "--no-change-stream"])
        defer { server.stop() }
        let a = try LiveDevice(url: server.url, pollInterval: .milliseconds(100))
        let b = try LiveDevice(url: server.url, pollInterval: .milliseconds(100))
        a.start()
        b.start()
        await b.status { $0.changeSource == .polling && $0.connection == .connected }
        try a.todo.insert(Self.item("polled", "found by polling"))
        let seen = try await b.observed { $0.contains { $0.id == "polled" } }
        #expect(seen.count == 1)
        #expect(b.replicator.currentStatus.changeSource == .polling)
        await a.close()
        await b.close()
    }

    @Test(
        "a 401 in the middle of a session renews the token and the session goes on", .enabled(if: isBuilt),
        arguments: ServeStore.allCases)
    func expiredTokenIsRenewed(_ store: ServeStore) async throws {
        let directory = try TemporaryDirectory()
        let server = try Serve(["--store", try store.url(in: directory), "--auth-secret-env", "AUTH_SECRET"])
        defer { server.stop() }
        let current = Locked(try await Tokens.hs256("carol"))
        let renewals = Locked(0)
        let authentication = HTTPAuthentication.bearer(
            token: { current.withLock { $0 } },
            refresh: {
                let token = try await Tokens.hs256("carol")
                current.withLock { $0 = token }
                renewals.withLock { $0 += 1 }
                return token
            })
        let a = try LiveDevice(url: server.url, authentication: authentication)
        let b = try LiveDevice(url: server.url, authentication: .bearer(token: { try await Tokens.hs256("carol") }))
        a.start()
        b.start()
        for device in [a, b] { await device.status { $0.connection == .connected && $0.lastSyncedAt["todoitem"] != nil } }
        // The token expires in the middle of the session.
        let expired = try await Tokens.hs256(Tokens.claims("carol", lifetime: -600))
        current.withLock { $0 = expired }
        try a.todo.insert(Self.item("after-expiry", "written with a renewed token"))
        _ = try await b.observed { $0.contains { $0.id == "after-expiry" } }
        await a.status { $0.pendingOperationCount == 0 }
        #expect(renewals.withLock { $0 } >= 1)
        #expect(a.replicator.currentStatus.lastError?.kind != .authentication)
        await a.close()
        await b.close()
    }

    /// Runs `offline-sync sync --watch` on an SQLite store until `arrived` holds for its table,
    /// then interrupts it; returns its exit status and output.
    func watch(_ server: Serve, extra: [String], directory: TemporaryDirectory, writer: HTTPRemote) async throws
        -> (status: Int32, output: String)
    {
        let path = directory.path("watch.sqlite")
        let process = Process()
        process.executableURL = Self.executable
        process.arguments =
            ["sync", "--store", "sqlite:" + path, "--remote", server.url, "--table", "todoitem", "--watch"] + extra
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var printed = ""
        while !printed.contains("connected (") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            printed += String(decoding: data, as: UTF8.self)
        }
        _ = try await writer.insert(Item(id: "watched", values: ["text": "arrived while watching"]), into: "todoitem")
        while true {
            let store = SQLiteStore(path: path)
            try store.open(schema: StoreSchema([]))
            let found = try store.lookup(table: "todoitem", id: "watched")
            try store.close()
            if found != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.interrupt()
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, printed + String(decoding: rest, as: UTF8.self))
    }

    @Test("sync --watch keeps a store in sync through the change stream and stops cleanly on SIGINT", .enabled(if: isBuilt))
    func syncWatchWithStream() async throws {
        let server = try Serve(["--store", "memory:"])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let writer = try HTTPRemote(configuration: .init(baseURL: server.url))
        _ = try await writer.insert(Item(id: "first", values: ["text": "before"]), into: "todoitem")
        let (status, output) = try await watch(server, extra: [], directory: directory, writer: writer)
        try await writer.shutdown()
        #expect(status == 0, "\(output)")
        #expect(output.contains("connected (change stream)"), "\(output)")
        #expect(output.contains("stopped; 0 operations queued"), "\(output)")
    }

    @Test("sync --watch polls a server without the change stream", .enabled(if: isBuilt))
    func syncWatchPolls() async throws {
        let server = try Serve(["--store", "memory:", "--no-change-stream"])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let writer = try HTTPRemote(configuration: .init(baseURL: server.url))
        _ = try await writer.insert(Item(id: "first", values: ["text": "before"]), into: "todoitem")
        let (status, output) = try await watch(
            server, extra: ["--poll-interval", "0.2"], directory: directory, writer: writer)
        try await writer.shutdown()
        #expect(status == 0, "\(output)")
        #expect(output.contains("connected (polling)"), "\(output)")
    }
}
