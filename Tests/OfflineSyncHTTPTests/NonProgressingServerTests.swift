import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Synchronization
import Testing

/// A pull from a server that ignores `$filter`, `$skip` or `$top` (a proxy that drops the query,
/// a hand-written endpoint) ends with an error that names the option, after the request that
/// shows it, instead of asking for the same page forever.
@Suite("A pull from a server that ignores the query stops with a clear error")
struct NonProgressingServerTests {
    /// A page of records, as an Azure server sends it.
    static func page(_ records: [(id: String, updatedAt: String)]) -> ScriptedResponse {
        let objects = records.map {
            #"{"id":"\#($0.id)","text":"t","updatedAt":"\#($0.updatedAt)","version":"AAA=","deleted":false}"#
        }
        return ScriptedResponse(
            status: 200, headers: [("Content-Type", "application/json")],
            body: Array("[\(objects.joined(separator: ","))]".utf8))
    }

    /// Runs `pull` against a server answering request N (from 1) with `answer(N)`, and returns the
    /// error it throws and the number of requests. After 50 requests the server answers 500, so a
    /// pull that loops fails the test instead of hanging it.
    static func pull(
        answer: @escaping @Sendable (Int) -> ScriptedResponse,
        _ pull: @escaping @Sendable (Device) async throws -> Void
    ) async throws -> (error: String, requests: Int) {
        let requests = Atomic<Int>(0)
        let error = try await withLoopbackServer({ _ in
            let number = requests.add(1, ordering: .relaxed).newValue
            return number > 50 ? ScriptedResponse(status: 500) : answer(number)
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port)
            let outcome: String
            do {
                try await pull(device)
                outcome = "no error"
            } catch {
                outcome = "\(error)"
            }
            try await device.close()
            return outcome
        }
        return (error, requests.load(ordering: .relaxed))
    }

    static let same = page([("a", "2026-01-02T00:00:00.000Z"), ("b", "2026-01-02T00:00:00.000Z")])

    @Test func aFullPullFromAServerIgnoringFilterStopsAtTheSecondPage() async throws {
        let (error, requests) = try await Self.pull(answer: { _ in Self.same }) { device in
            try await device.todo.pull()
        }
        #expect(error.contains("$filter") && error.contains("'b'"), "\(error)")
        #expect(requests == 2)
    }

    @Test func anIncrementalPullFromAServerIgnoringSkipStopsWhenThePageComesBack() async throws {
        let (error, requests) = try await Self.pull(answer: { _ in Self.same }) { device in
            try await device.pullAll()
        }
        // The second page repeats the first one's last record (as a server keeping finer
        // timestamps than it sends may), so the third request skips it; the same page again
        // shows the server ignores $skip.
        #expect(error.contains("$skip"), "\(error)")
        #expect(requests == 3)
    }

    @Test func anIncrementalPullAnsweredWithOlderRecordsThanItsTokenStops() async throws {
        let (error, requests) = try await Self.pull(answer: { number in
            number == 1
                ? Self.page([("new", "2026-01-02T00:00:00.000Z")]) : Self.page([("old", "2025-01-01T00:00:00.000Z")])
        }) { device in
            try await device.pullAll()
        }
        #expect(error.contains("$filter") && error.contains("'old'"), "\(error)")
        #expect(requests == 2)
    }

    @Test func aPageLargerThanAskedForStops() async throws {
        let big = Self.page((0..<5).map { ("r\($0)", "2026-01-02T00:00:00.00\($0)Z") })
        for incremental in [false, true] {
            let (error, requests) = try await Self.pull(answer: { _ in big }) { device in
                if incremental {
                    try await device.todo.pull(queryId: "all", options: PullOptions(pageSize: 2))
                } else {
                    try await device.todo.pull(options: PullOptions(pageSize: 2))
                }
            }
            #expect(error.contains("$top") && error.contains("5 records"), "\(error)")
            #expect(requests == 1)
        }
    }
}
