import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import OfflineSyncSQLite
import Synchronization
import Testing

/// A server that asks ``HTTPRemote`` to come back later (`Retry-After` on a 429 or 503, as
/// `serve` answers while its store is locked) is waited for, instead of being retried past within
/// a few hundred milliseconds; a pause longer than a request may take fails at once, saying so.
@Suite("HTTPRemote waits as Retry-After asks")
struct RetryAfterTests {
    @Test("a read answered 503 with Retry-After waits as asked, and then succeeds")
    func retryAfterIsWaitedFor() async throws {
        let log = RequestLog()
        let first = Mutex<ContinuousClock.Instant?>(nil)
        try await withLoopbackServer({ request in
            log.append(request)
            // Busy for a second from the first request, as `serve` is while its store is locked.
            let start = first.withLock { first in
                let start = first ?? .now
                first = start
                return start
            }
            guard ContinuousClock.now - start >= .seconds(1) else {
                return ScriptedResponse(status: 503, headers: [("Retry-After", "1")])
            }
            return ScriptedResponse.emptyPage
        }) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            let page = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
            #expect(page.items.isEmpty)
            try await remote.shutdown()
        }
        #expect(log.all.count == 2, "one wait of a second, not retries past it: \(log.all.count) requests")
    }

    @Test("429 with Retry-After is retried after the pause it asks for")
    func tooManyRequestsIsRetried() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            if log.all.count == 1 { return ScriptedResponse(status: 429, headers: [("Retry-After", "1")]) }
            return ScriptedResponse.emptyPage
        }) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            let clock = ContinuousClock()
            let elapsed = try await clock.measure {
                _ = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
            }
            #expect(elapsed >= .seconds(1), "\(elapsed)")
            try await remote.shutdown()
        }
        #expect(log.all.count == 2)
    }

    @Test(
        "a Retry-After longer than a request may take fails at once, saying what the server asked",
        arguments: ["3600", "99999999999999999999999"])
    func longRetryAfterFailsAtOnce(_ seconds: String) async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return ScriptedResponse(status: 503, headers: [("Retry-After", seconds)])
        }) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            let error = await ScriptedServerRemote.failure {
                _ = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
            }
            #expect(error?.kind == .server && error?.status == 503)
            #expect(error?.message.contains("retried after '\(seconds)'") == true, "\(String(describing: error))")
            try await remote.shutdown()
        }
        #expect(log.all.count == 1)
    }

    @Test("a push answered 503 with Retry-After stops and keeps its operations queued, without errors")
    func pushAnswered503KeepsTheQueue() async throws {
        let store = BusyWritesStore()
        try await withTableServer(store: store) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todoItemSchema])
            try context.table("todoitem").insert(Item(id: "1", values: ["text": "a"]))
            try context.table("todoitem").insert(Item(id: "2", values: ["text": "b"]))
            store.busy.withLock { $0 = true }
            do {
                try await context.push()
                Issue.record("a push answered 503 must stop")
            } catch let failure as PushFailure {
                #expect(failure.status == .abortedByNetwork, "\(failure)")
                #expect(failure.retryAfter == .seconds(1), "\(failure)")
            }
            #expect(try context.operationErrors().isEmpty)
            #expect(try context.pendingOperationCount() == 2)
            store.busy.withLock { $0 = false }
            let result = try await context.push()
            #expect(result.succeeded && result.completedCount == 2)
            #expect(try store.read(Query(table: "todoitem")).items.map(\.id).sorted() == ["1", "2"])
            try await remote.shutdown()
        }
    }

    @Test(
        "a Replicator whose push is answered 503 with Retry-After waits as asked before pushing again",
        .timeLimit(.minutes(1)))
    func replicatorWaitsAsAPushAnswerAsks() async throws {
        let store = BusyWritesStore()
        try await withTableServer(store: store) { port in
            store.busy.withLock { $0 = true }
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todoItemSchema])
            let replicator = Replicator(
                context: context, pulls: [PullRequest(table: "todoitem", queryId: "all")],
                options: .init(
                    pushDelay: .milliseconds(5), pollInterval: .seconds(3600),
                    backoff: RetryBackoff(initial: .milliseconds(5), maximum: .milliseconds(20))))
            let run = Task { try await replicator.run() }
            try context.table("todoitem").insert(Item(id: "1", values: ["text": "a"]))
            var refused: ReplicatorStatus?
            for await status in replicator.status where status.lastError != nil {
                refused = status
                break
            }
            // The back-off alone would retry within 20 ms; the server asked for a second.
            #expect(refused?.lastError?.retryIn.map { $0 >= .seconds(1) } == true, "\(String(describing: refused))")
            #expect(refused?.lastError?.kind == .network, "\(String(describing: refused))")
            #expect(refused?.operationErrorCount == 0)
            let attempts = store.refusedWrites.withLock { $0 }
            try await Task.sleep(for: .milliseconds(500))
            #expect(store.refusedWrites.withLock { $0 } == attempts, "no push before the second has passed")
            store.busy.withLock { $0 = false }
            for await status in replicator.status where status.pendingOperationCount == 0 && status.lastError == nil {
                break
            }
            #expect(try store.read(Query(table: "todoitem")).items.map(\.id) == ["1"])
            run.cancel()
            _ = await run.result
            try await remote.shutdown()
        }
    }
}

/// A server's store whose writes fail as a locked SQLite database does while ``busy`` is set (a
/// ``StoreUnavailableError``, which the server answers 503 with `Retry-After: 1`).
private final class BusyWritesStore: ForwardingStore {
    let inner: any LocalStore = InMemoryStore()
    let busy = Mutex(false)
    /// The writes refused so far.
    let refusedWrites = Mutex(0)

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        if busy.withLock({ $0 }) {
            refusedWrites.withLock { $0 += 1 }
            throw SQLiteError(
                code: .busy, extendedCode: 5, sqliteMessage: "database is locked",
                context: "writing table todoitem")
        }
        return try inner.write(body)
    }
}
