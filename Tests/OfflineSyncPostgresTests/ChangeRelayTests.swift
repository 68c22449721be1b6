import OfflineSyncTestSupport
import Foundation
import OfflineSync
import OfflineSyncHTTP
import OfflineSyncPostgres
import OfflineSyncService
import Testing

/// The change stream across `serve` processes over one PostgreSQL schema (`LISTEN`/`NOTIFY`), and
/// ``PostgresNotificationChannel`` itself.
@Suite("change stream over PostgreSQL", .serialized)
struct ChangeRelayTests {
    static let table = TableSchema("todoitem", columns: [Column("text", .string)])

    @Test("a notification reaches the other channels of the database, never its own sender")
    func notificationReachesOtherChannels() async throws {
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        let sender = PostgresNotificationChannel(settings: settings)
        let receiver = PostgresNotificationChannel(settings: settings)
        let heard = Locked<[(listener: String, payload: String)]>([])
        let listeners = [("sender", sender), ("receiver", receiver)].map { name, channel in
            Task { try await channel.receive { payload in heard.withLock { $0.append((name, payload)) } } }
        }
        defer {
            listeners.forEach { $0.cancel() }
            sender.close()
        }
        // LISTEN is in force once receive has connected: send until the receiver hears one.
        var sent = 0
        while heard.withLock({ $0.isEmpty }) {
            sender.send("hello \(sent)")
            sent += 1
            try await Task.sleep(for: .milliseconds(50))
        }
        let last = "hello \(sent)"
        sender.send(last)
        while !heard.withLock({ $0.contains { $0.payload == last } }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(heard.withLock { $0.allSatisfy { $0.listener == "receiver" } })
    }

    @Test(
        "three serve processes over one schema: a write through any of them reaches the subscribers of every one",
        .enabled(if: OfflineSyncTool.isBuilt), .timeLimit(.minutes(2)))
    func writesReachSubscribersOfEveryProcess() async throws {
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        let setup = PostgresStore(settings: settings)
        try setup.open(schema: StoreSchema([TableService.served(Self.table)]))
        try setup.close()
        defer { try? PostgresStore.dropSchema(settings) }
        let directory = try ScratchDirectory()
        let url = "postgres://postgres@127.0.0.1:\(server.port)/postgres?schema=\(settings.schema)"
        let processes = try (0..<3).map {
            try ServeProcess(store: url, log: directory.url.appendingPathComponent("serve\($0).log"))
        }
        defer { processes.forEach { $0.stop() } }

        // One subscriber on each process, noting the newest updatedAt it was told of.
        let newest = Locked<[Int: Timestamp]>([:])
        let (ready, readySignal) = AsyncStream<Int>.makeStream()
        var streams: [ChangeStream] = []
        var listeners: [Task<Void, any Error>] = []
        for (index, process) in processes.enumerated() {
            let stream = ChangeStream(configuration: .init(baseURL: process.baseURL))
            streams.append(stream)
            listeners.append(
                Task {
                    try await stream.listen(to: ["todoitem"]) { event in
                        switch event {
                        case .connected: readySignal.yield(index)
                        case .changed(_, let updatedAt?):
                            newest.withLock { $0[index] = max($0[index] ?? .minimum, updatedAt) }
                        case .changed: break
                        }
                    }
                })
        }
        var connected = Set<Int>()
        for await index in ready {
            connected.insert(index)
            if connected.count == 3 { break }
        }
        // The relays LISTEN as their processes start; a process's first write may come before
        // another's LISTEN is in force, so the relays are warmed until every subscriber hears one.
        let writers = try processes.map { try HTTPRemote(configuration: .init(baseURL: $0.baseURL)) }
        var warm = 0
        while newest.withLock({ $0.count }) < 3 {
            _ = try await writers[0].insert(Item(id: "warm-\(warm)", values: ["text": "warm"]), into: "todoitem")
            warm += 1
            try await Task.sleep(for: .milliseconds(50))
        }
        for round in 0..<3 {
            for (index, writer) in writers.enumerated() {
                let stored = try await writer.insert(
                    Item(id: "p\(index)-\(round)", values: ["text": .string("through process \(index)")]), into: "todoitem")
                let updatedAt = try #require(stored.updatedAt)
                while newest.withLock({ state in (0..<3).contains { (state[$0] ?? .minimum) < updatedAt } }) {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        #expect(newest.withLock { $0.count } == 3)
        listeners.forEach { $0.cancel() }
        for stream in streams { try? await stream.shutdown() }
        for writer in writers { try await writer.shutdown() }
    }
}
