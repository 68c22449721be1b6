import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Testing

/// A 409 or 412 whose body is another item than the one written is not passed off as the server's
/// copy: a push handler would take it or resolve against it (server wins stored nothing and
/// aborted the whole push). The conflict comes without a server item and says what was carried.
@Suite("HTTPRemote conflict answers carrying another item")
struct ConflictAnswerTests {
    static let unrelated = #"{"id":"unrelated","text":"zzz","updatedAt":"2026-01-01T00:00:00.000Z","version":"v9"}"#

    @Test(
        "an insert answered 409 and an update answered 412 with an unrelated item are conflicts without a server item")
    func unrelatedItemIsNotTheServerCopy() async throws {
        try await withLoopbackServer({ request in
            ScriptedResponse(
                status: request.method == "POST" ? 409 : 412, headers: [("Content-Type", "application/json")],
                body: Array(Self.unrelated.utf8))
        }) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            for write in [
                RemoteWrite(.insert, table: "todoitem", item: Item(id: "a")),
                RemoteWrite(.update, table: "todoitem", item: Item(id: "a"), ifMatch: "v1"),
            ] {
                do {
                    _ = try await remote.perform(write)
                    Issue.record("\(write.kind) should be a conflict")
                } catch let error as RemoteError {
                    #expect(error.kind == .conflict, "\(error)")
                    #expect(error.serverItem == nil, "\(write.kind): \(String(describing: error.serverItem))")
                    #expect(error.message.contains("carried item 'unrelated'"), "\(error)")
                }
            }
            // The server's copy of the item itself is still handed over.
            let own = #"{"id":"b","text":"theirs","version":"v2"}"#
            try await withLoopbackServer({ _ in
                ScriptedResponse(status: 409, headers: [("Content-Type", "application/json")], body: Array(own.utf8))
            }) { port in
                let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
                do {
                    _ = try await remote.insert(Item(id: "b"), into: "todoitem")
                    Issue.record("the insert should be a conflict")
                } catch let error as RemoteError {
                    #expect(error.serverItem?["text"] == "theirs", "\(error)")
                }
                try await remote.shutdown()
            }
            try await remote.shutdown()
        }
    }
}
