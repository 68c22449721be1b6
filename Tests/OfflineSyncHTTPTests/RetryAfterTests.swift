import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
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
}
