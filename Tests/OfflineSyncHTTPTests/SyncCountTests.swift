import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Testing

/// `offline-sync sync` asks the server for a total count only to size its progress bar: a server
/// that cannot answer one (refuses `$top=0`, as servers with a minimum page size do, or answers
/// a count that is not a number) must not stop a sync whose pull it answers well.
@Suite("sync of a server that cannot count")
struct SyncCountTests {
    @Test(
        "a server refusing the count request or answering it unreadably is pulled all the same",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: [
            ScriptedResponse(
                status: 400, headers: [("Content-Type", "application/json")],
                body: Array(#"{"error":"$top must be between 1 and 1000"}"#.utf8)),
            ScriptedResponse(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(#"{"results":[],"count":"many"}"#.utf8)),
        ])
    func countIsOptional(_ countAnswer: ScriptedResponse) async throws {
        let directory = try TemporaryDirectory()
        let store = "sqlite:" + directory.path("device.sqlite")
        let record = #"{"id":"a","text":"hello","updatedAt":"2026-01-01T00:00:00.000Z","version":"v1","deleted":false}"#
        try await withLoopbackServer({ request in
            if request.target.contains("%24top=0") || request.target.contains("$top=0") { return countAnswer }
            // The first page has the record; the page after it (`id gt 'a'`) is empty.
            let body = request.target.contains("%20gt%20") ? "[]" : "[\(record)]"
            return ScriptedResponse(
                status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }) { port in
            // On a thread of its own: waiting for the process must not hold a thread the server needs.
            let sync = try await onOwnThread {
                try ServeCommand.run([
                    "sync", "--store", store, "--remote", "http://127.0.0.1:\(port)", "--table", "todo",
                ])
            }
            #expect(sync.status == 0, "\(sync)")
            #expect(sync.output.contains("1 stored"), "\(sync)")
        }
    }
}
