import Foundation
import Testing

@Suite("offline-sync with sync state")
struct CLISyncStateTests {
    static let systemTables = ["todoitem", "__operations", "__errors", "__config"]

    @Test(arguments: Backend.available)
    func inspectShowsPendingOperationsErrorsAndDeltaTokens(backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("synced", in: directory)
        try await SyncStateFixture.make(at: url)
        let result = try CLI.run(["inspect", "--store", url])
        #expect(result.status == 0, "\(result)")
        #expect(result.hasRow("todoitem", "4", "4", "1", "7"), "rows, pending, errors, columns: \(result)")
        #expect(
            result.rows.contains { $0.count == 6 && $0[1] == "update" && $0[3] == "1" },
            "the update of item 1: \(result)")
        #expect(
            result.rows.contains { $0.count == 6 && $0[1] == "delete" && $0[3] == "2" },
            "the delete of item 2: \(result)")
        #expect(
            result.rows.contains { $0.count > 5 && $0[1] == "update" && $0[3] == "1" && $0[4] == "412" },
            "the conflict of item 1: \(result)")
        #expect(result.rows.contains { $0.first == "todoitem" && $0.dropFirst().first == "allTodoItems" }, "\(result)")
    }

    @Test func migrationRoundTripKeepsItemsAndTheQueue() async throws {
        let chain: [Backend] = [.sqlite, .lmdb, .sqlcipher, .sqlite]
        guard chain.allSatisfy(Backend.available.contains) else { return }
        let directory = try TemporaryDirectory()
        let urls = chain.enumerated().map { $1.url("step\($0)", in: directory) }
        try await SyncStateFixture.make(at: urls[0])
        let before = try exports(of: urls[0])
        for (from, to) in zip(urls, urls.dropFirst()) {
            let result = try CLI.run(["migrate", "--from", from, "--to", to])
            #expect(result.status == 0, "\(from) → \(to): \(result)")
        }
        let after = try exports(of: urls[urls.count - 1])
        for table in CLISyncStateTests.systemTables {
            #expect(after[table] == before[table], "\(table) differs after the round trip")
            #expect(before[table]?.isEmpty == false, "\(table) is empty")
        }
        let inspectBefore = try CLI.run(["inspect", "--store", urls[0]]).rows.filter {
            $0.contains("todoitem") && !$0.contains("sqlite")
        }
        let inspectAfter = try CLI.run(["inspect", "--store", urls[urls.count - 1]]).rows.filter {
            $0.contains("todoitem") && !$0.contains("sqlite")
        }
        #expect(inspectAfter == inspectBefore)
    }

    @Test(arguments: Backend.available)
    func demoRunsTheTutorialToTheEnd(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("demo", in: directory)
        let result = try CLI.run(["demo", "--store", url])
        #expect(result.status == 0, "\(result)")
        for step in [
            "Pull from the server", "Go offline", "abortedByNetwork", "Close the store and reopen it",
            "The pending queue", "Back online: push", "HTTP 412", "Resolve the conflict", "Pull again",
            "Observe the todo list", "observed list after the pull: 3 items", "observed list after the push",
            "Final state on both sides", "local and server agree: 5 items, 0 pending operations",
        ] {
            #expect(result.stdout.contains(step), "missing '\(step)': \(result)")
        }
        let again = try CLI.run(["demo", "--store", url])
        #expect(again.status == 1)
        #expect(again.stderr.contains("--reset"), "\(again)")
        let reset = try CLI.run(["demo", "--store", url, "--reset"])
        #expect(reset.status == 0, "\(reset)")
    }

    @Test(arguments: [[:], ["OFFLINE_SYNC_STORE": "memory:"]])
    func demoWithoutAStoreLeavesNothingBehind(environment: [String: String]) throws {
        let directory = try TemporaryDirectory()
        let result = try CLI.run(["demo"], in: directory.url, environment: environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("local and server agree"), "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
        let store = result.stdout.split(separator: "\n").first { $0.contains("local store:") } ?? ""
        if let path = store.split(separator: ":").dropFirst(2).first?.split(separator: " ").first {
            #expect(!FileManager.default.fileExists(atPath: String(path)), "the temporary store \(path) was removed")
        }
    }

    private func exports(of url: String) throws -> [String: String] {
        var exports: [String: String] = [:]
        for table in CLISyncStateTests.systemTables {
            let result = try CLI.run(["export", "--store", url, "--table", table])
            #expect(result.status == 0, "\(result)")
            exports[table] = result.stdout
        }
        return exports
    }
}
