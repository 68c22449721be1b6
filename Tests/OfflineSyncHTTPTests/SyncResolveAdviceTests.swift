import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import OfflineSyncSQLite
import Testing

/// `offline-sync sync --resolve` against a server whose conflict answers carry no copy of the
/// item: the edits stay queued, and the error says why `--resolve` did not settle them instead
/// of advising to run again with `--resolve`, which would fail the same way.
@Suite("sync --resolve when the server's conflicts carry no item")
struct SyncResolveAdviceTests {
    /// An SQLite device store in `directory` whose table `todo` holds one insert waiting to be
    /// pushed; returns its path.
    static func deviceWithAQueuedInsert(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("device.sqlite")
        let todo = TableSchema("todo", columns: [Column("text", .string)])
        let context = try SyncContext(
            store: SQLiteStore(path: path), remote: try InMemoryRemote(tables: [todo]), tables: [todo])
        _ = try context.table("todo").insert(Item(id: "a", values: ["text": .string("mine")]))
        try context.close()
        return path
    }

    @Test(
        "the error names the missing server copy and does not advise --resolve again; the edit stays queued",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ["local", "server"])
    func resolveWithoutServerCopy(_ winner: String) async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.deviceWithAQueuedInsert(in: directory)
        try await withLoopbackServer({ request in
            request.method == "GET"
                ? ScriptedResponse.emptyPage
                : ScriptedResponse(status: 409)
        }) { port in
            // On a thread of its own: waiting for the process must not hold a thread the server needs.
            let sync = try await onOwnThread {
                try ServeCommand.run([
                    "sync", "--store", "sqlite:" + path, "--remote", "http://127.0.0.1:\(port)", "--table", "todo",
                    "--resolve", winner,
                ])
            }
            #expect(sync.status == 1, "\(sync)")
            #expect(sync.error.contains("even with --resolve \(winner)"), "\(sync)")
            #expect(sync.error.contains("carried no copy of the item"), "\(sync)")
            #expect(!sync.error.contains("Run again with --resolve"), "\(sync)")
        }
        let inspect = try ServeCommand.run(["inspect", "--store", "sqlite:" + path])
        #expect(
            inspect.output.contains("todo   1     1        1"), "the insert stays queued with its error: \(inspect)")
    }

    @Test(
        "edits refused for another reason than a conflict are not sent to --resolve, which settles only conflicts",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func refusalsThatAreNotConflicts() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.deviceWithAQueuedInsert(in: directory)
        try await withLoopbackServer({ request in
            request.method == "GET"
                ? ScriptedResponse.emptyPage
                : ScriptedResponse(
                    status: 400, headers: [("Content-Type", "application/json")],
                    body: Array(#"{"error":"text is too long"}"#.utf8))
        }) { port in
            // On a thread of its own: waiting for the process must not hold a thread the server needs.
            let sync = try await onOwnThread {
                try ServeCommand.run([
                    "sync", "--store", "sqlite:" + path, "--remote", "http://127.0.0.1:\(port)", "--table", "todo",
                ])
            }
            #expect(sync.status == 1, "\(sync)")
            #expect(sync.error.contains("none of them a conflict"), "\(sync)")
            #expect(!sync.error.contains("Run again with --resolve"), "\(sync)")
        }
    }
}
