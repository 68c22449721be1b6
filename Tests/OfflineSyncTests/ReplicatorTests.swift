import OfflineSync
import OfflineSyncService
import Testing

/// ``Replicator`` over the in-process remote: two devices share one ``InMemoryRemote``, so what
/// one pushes the other pulls. The change stream through real `serve` processes is tested in
/// `OfflineSyncHTTPTests` (`ReplicatorServeTests`).
@Suite struct ReplicatorTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    /// A device: its own store and context over the shared remote.
    struct Device {
        let context: SyncContext
        let table: SyncTable

        init(_ remote: InMemoryRemote) throws {
            context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [ReplicatorTests.todo])
            table = try context.table("todo")
        }

        func replicator(signal: (any ChangeSignal)? = nil, pollInterval: Duration = .milliseconds(20)) -> Replicator {
            Replicator(
                context: context, pulls: [PullRequest(table: "todo", queryId: "all")], signal: signal,
                options: .init(
                    pushDelay: .milliseconds(5), pollInterval: pollInterval,
                    backoff: RetryBackoff(initial: .milliseconds(5), maximum: .milliseconds(20))))
        }
    }

    /// Waits for the first element of `sequence` that satisfies `condition`.
    static func first<S: AsyncSequence>(_ sequence: S, where condition: (S.Element) throws -> Bool) async throws
        -> S.Element?
    {
        for try await element in sequence where try condition(element) { return element }
        return nil
    }

    @Test func anEditOnOneDeviceReachesAnotherDevicesObservedQueryByPollingWithoutAPullCall() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let a = try Device(remote)
        let b = try Device(remote)
        let runA = Task { try await a.replicator().run() }
        let runB = Task { try await b.replicator().run() }
        defer {
            runA.cancel()
            runB.cancel()
        }
        try a.table.insert(Item(id: "1", values: ["text": "buy milk"]))
        let seen = try await Self.first(b.table.observe(Query(table: "todo"))) { $0.items.contains { $0.id == "1" } }
        #expect(seen?.items.first?["text"] == .string("buy milk"))
    }

    @Test func statusShowsThePendingOperationsAndThenTheTablesLastSync() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let device = try Device(remote)
        remote.setOffline(true)
        let replicator = device.replicator()
        let run = Task { try await replicator.run() }
        defer { run.cancel() }
        try device.table.insert(Item(id: "1", values: ["text": "a"]))
        let offline = try await Self.first(replicator.status) { $0.pendingOperationCount == 1 && $0.lastError != nil }
        #expect(offline?.lastError?.kind == .network)
        #expect(offline?.lastError?.retryIn != nil)
        remote.setOffline(false)
        let synced = try await Self.first(replicator.status) {
            $0.pendingOperationCount == 0 && $0.lastSyncedAt["todo"] != nil && $0.lastError == nil
        }
        #expect(synced?.hasSynced(["todo"]) == true)
        #expect(try remote.items(in: "todo").map(\.id) == ["1"])
    }

    @Test func syncNowPushesAndPullsAndReturnsWhenDone() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let a = try Device(remote)
        let b = try Device(remote)
        let replicatorB = b.replicator(pollInterval: .seconds(3600))
        let run = Task { try await replicatorB.run() }
        defer { run.cancel() }
        _ = try await Self.first(replicatorB.status) { $0.lastSyncedAt["todo"] != nil }
        try a.table.insert(Item(id: "1", values: ["text": "a"]))
        try await a.context.push()
        try await replicatorB.syncNow()
        #expect(try b.table.lookup(id: "1") != nil)
    }

    @Test func syncNowIsRefusedWhilePausedAndResumePushesWhatWasQueued() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let device = try Device(remote)
        let replicator = device.replicator()
        let run = Task { try await replicator.run() }
        defer { run.cancel() }
        _ = try await Self.first(replicator.status) { $0.lastSyncedAt["todo"] != nil }
        replicator.pause()
        #expect(replicator.currentStatus.isPaused)
        await #expect(throws: OfflineSyncError.self) { try await replicator.syncNow() }
        try device.table.insert(Item(id: "1", values: ["text": "a"]))
        replicator.resume()
        try await replicator.syncNow()
        #expect(try remote.items(in: "todo").map(\.id) == ["1"])
        #expect(try device.context.pendingOperationCount() == 0)
    }

    @Test func cancellingTheRunStopsItAndEndsTheStatusSequence() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let device = try Device(remote)
        let replicator = device.replicator()
        let run = Task { try await replicator.run() }
        let statuses = replicator.status
        _ = try await Self.first(statuses) { $0.lastSyncedAt["todo"] != nil }
        run.cancel()
        try await run.value
        var last: ReplicatorStatus?
        for await status in statuses { last = status }
        #expect(last?.connection == .offline)
        #expect(replicator.currentStatus.isUploading == false)
        await #expect(throws: OfflineSyncError.self) { try await replicator.syncNow() }
    }

    @Test func aSecondConcurrentRunIsRefused() async throws {
        let remote = try InMemoryRemote(tables: [Self.todo])
        let replicator = try Device(remote).replicator()
        let run = Task { try await replicator.run() }
        defer { run.cancel() }
        _ = try await Self.first(replicator.status) { $0.connection != .offline }
        await #expect(throws: OfflineSyncError.self) { try await replicator.run() }
    }

    @Test func aServerWithoutAChangeStreamIsPolled() async throws {
        struct NoStream: ChangeSignal {
            func listen(to tables: [String], _ receive: @escaping @Sendable (ChangeSignalEvent) async -> Void) async throws {
                throw ChangeSignalError(.unsupported, status: 404, message: "no change stream")
            }
        }
        let remote = try InMemoryRemote(tables: [Self.todo])
        let a = try Device(remote)
        let b = try Device(remote)
        let replicatorB = b.replicator(signal: NoStream())
        let run = Task { try await replicatorB.run() }
        defer { run.cancel() }
        let polling = try await Self.first(replicatorB.status) { $0.changeSource == .polling }
        #expect(polling != nil)
        try a.table.insert(Item(id: "1", values: ["text": "a"]))
        try await a.context.push()
        _ = try await Self.first(b.table.observe(Query(table: "todo"))) { !$0.items.isEmpty }
        #expect(replicatorB.currentStatus.changeSource == .polling)
    }

    @Test func backoffDoublesWithinItsJitterUpToTheMaximumAndHonoursRetryAfter() {
        let backoff = RetryBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        var generator = SeededRandom(seed: 7)
        for failures in 1...8 {
            let ceiling = min(Duration.milliseconds(100) * (1 << (failures - 1)), .seconds(1))
            for _ in 0..<20 {
                let delay = backoff.delay(afterFailures: failures, using: &generator)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "failure \(failures): \(delay)")
            }
        }
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(5), using: &generator) == .seconds(5))
        // A Retry-After of years (or of more seconds than an Int holds) is waited for an hour.
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(Int.max), using: &generator) == .seconds(3600))
        let short = RetryBackoff(initial: .milliseconds(10), maximum: .seconds(1), longestRetryAfter: .seconds(60))
        #expect(short.delay(afterFailures: 3, retryAfter: .seconds(86_400), using: &generator) == .seconds(60))
    }
}
