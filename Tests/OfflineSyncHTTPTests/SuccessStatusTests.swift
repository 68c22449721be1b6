import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Testing

/// Success statuses other than the ones the table protocol's servers send. A DELETE answered 201
/// with the body `true` was reported as "DELETE … failed: 'true'", its operation kept queued and
/// sent again on every push, although the server said it had deleted.
@Suite("HTTPRemote and unusual success statuses")
struct SuccessStatusTests {
    static let item = #"{"id":"a","text":"t","updatedAt":"2026-01-01T00:00:00.000Z","version":"v2","deleted":false}"#

    /// A server answering every write with `status` (and `body`), every read with one item.
    static func answering(_ status: Int, _ body: String) -> @Sendable (ReceivedRequest) async throws -> ScriptedResponse {
        { request in
            if request.method == "GET" {
                return ScriptedResponse(status: status == 204 ? 204 : 200, body: Array(item.utf8))
            }
            return ScriptedResponse(
                status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }
    }

    @Test("a delete answered with any success status is done", arguments: [200, 201, 202, 204])
    func deleteAnsweredWithASuccessStatus(status: Int) async throws {
        try await withLoopbackServer(Self.answering(status, status == 204 ? "" : "true")) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            try await remote.delete(id: "a", from: "todo", ifMatch: nil)
            try await remote.shutdown()
        }
    }

    @Test(
        "an insert, update or read answered with a success status the protocol does not use fails saying so",
        arguments: [202, 204])
    func writeAnsweredWithoutItsItem(status: Int) async throws {
        try await withLoopbackServer(Self.answering(status, "")) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            let item = Item(id: "a", values: ["text": .string("t")])
            let inserted = await ScriptedServerRemote.failure { _ = try await remote.insert(item, into: "todo") }
            #expect(inserted?.kind == .server)
            #expect(
                inserted?.message
                    == "POST /tables/todo: the server answered \(status), a success status the table protocol does not use here (a write is answered 200 or 201 with the item; the write may have been applied, so check the server's copy before sending it again)"
            )
            let updated = await ScriptedServerRemote.failure {
                _ = try await remote.update(item, in: "todo", ifMatch: nil)
            }
            #expect(updated?.message.contains("the server answered \(status), a success status") == true)
            if status == 204 {
                let read = await ScriptedServerRemote.failure { _ = try await remote.lookup(id: "a", in: "todo") }
                #expect(read?.message.contains("(a read is answered 200 with JSON)") == true, "\(String(describing: read))")
            }
            try await remote.shutdown()
        }
    }

    @Test("an update answered 201 with the item is applied, as an insert answered 201 is")
    func updateAnswered201() async throws {
        try await withLoopbackServer(Self.answering(201, Self.item)) { port in
            let remote = try ScriptedServerRemote.remote(port: port)
            let copy = try await remote.update(Item(id: "a", values: ["text": .string("t")]), in: "todo", ifMatch: "v1")
            #expect(copy[SystemProperty.version.rawValue] == .string("v2"))
            try await remote.shutdown()
        }
    }
}
