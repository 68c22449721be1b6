import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Synchronization
import Testing

/// `offline-sync sync` learns a table's columns from the server's first records when the store
/// does not declare it. A first sync that finds the server's table empty must not declare it
/// without columns: a declared table keeps its columns, so every later sync would drop the
/// values of all the records it pulls.
@Suite("sync of an empty server table")
struct SyncEmptyTableTests {
    @Test(
        "a first sync of an empty table declares nothing, so the next sync learns the columns and stores the values",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func emptyTableThenRecords() async throws {
        let directory = try TemporaryDirectory()
        let store = "sqlite:" + directory.path("device.sqlite")
        let record = #"{"id":"a","text":"hello","updatedAt":"2026-01-01T00:00:00.000Z","version":"v1","deleted":false}"#
        let filled = Mutex(false)
        try await withLoopbackServer({ request in
            let body: String
            if !filled.withLock({ $0 }) {
                body = request.target.contains("inlinecount") ? #"{"results":[],"count":0}"# : "[]"
            } else if request.target.contains("inlinecount") {
                body = #"{"results":[],"count":1}"#
            } else {
                // The first page has the record; the page after it (`id gt 'a'`) is empty.
                body = request.target.contains("%20gt%20") ? "[]" : "[\(record)]"
            }
            return ScriptedResponse(
                status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }) { port in
            let sync = ["sync", "--store", store, "--remote", "http://127.0.0.1:\(port)", "--table", "todo"]
            // On a thread of its own: waiting for the process must not hold a thread the server needs.
            let empty = try await onOwnThread { try ServeCommand.run(sync) }
            #expect(empty.status == 0, "\(empty)")
            #expect(empty.output.contains("the server's table is empty"), "\(empty)")
            filled.withLock { $0 = true }
            let full = try await onOwnThread { try ServeCommand.run(sync) }
            #expect(full.status == 0, "\(full)")
        }
        let export = try ServeCommand.run(["export", "--store", store, "--table", "todo"])
        #expect(export.output.contains(#""text":"hello""#), "the record's column was stored: \(export)")
    }
}
