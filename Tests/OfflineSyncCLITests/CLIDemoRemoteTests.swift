import Foundation
import OfflineSync
import OfflineSyncStores
import Testing

/// `offline-sync demo --remote` against a real `offline-sync serve` process.
@Suite("offline-sync demo --remote")
struct CLIDemoRemoteTests {
    /// A running `offline-sync serve` on a free port; `stop()` ends it by its pid.
    final class ServeProcess {
        let process = Process()
        let port: Int

        init(store: String) throws {
            process.executableURL = CLI.executable
            process.arguments = ["serve", "--store", store, "--port", "0"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
            guard let range = line.range(of: "127.0.0.1:"),
                let bound = Int(line[range.upperBound...].prefix { $0.isNumber })
            else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw OfflineSyncError(.configuration, "offline-sync serve did not report its port: '\(line)'")
            }
            port = bound
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    @Test func demoRunsTheTutorialAgainstARealServer() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(store: "sqlite:" + directory.path("server.sqlite"))
        defer { server.stop() }
        let result = try CLI.run(["demo", "--remote", "http://127.0.0.1:\(server.port)"])
        #expect(result.status == 0, "\(result)")
        for step in [
            "the server at http://127.0.0.1:\(server.port) holding 3 todo items", "abortedByNetwork",
            "server still holds 3 items", "HTTP 412", "local and server agree: 5 items, 0 pending operations",
        ] {
            #expect(result.stdout.contains(step), "missing '\(step)': \(result)")
        }
    }

    @Test func rowsAnotherClientStoredWithoutCompleteReadAsNotComplete() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.sqlite")
        BuiltInStores.register()
        let store = try StoreRegistry.shared.makeStore("sqlite:" + path)
        try store.open(
            schema: StoreSchema([TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])]))
        try store.upsert([Item(id: "legacy", values: ["text": "Stored without complete"])], into: "todoitem")
        try store.close()
        let server = try ServeProcess(store: "sqlite:" + path)
        defer { server.stop() }
        let result = try CLI.run(["demo", "--remote", "http://127.0.0.1:\(server.port)"])
        #expect(result.status == 0, "\(result)")
        for step in [
            "holding 4 todo items", "[ ] Stored without complete",
            "local and server agree: 6 items, 0 pending operations",
        ] {
            #expect(result.stdout.contains(step), "missing '\(step)': \(result)")
        }
        #expect(!result.stdout.contains("skipped"), "\(result)")
    }

    @Test func anUnreachableServerIsNamedWithTheCommandThatStartsOne() throws {
        let result = try CLI.run(["demo", "--remote", "http://127.0.0.1:1"])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("no server answers at http://127.0.0.1:1"), "\(result)")
        #expect(result.stderr.contains("connection was refused"), "\(result)")
        #expect(result.stderr.contains("'offline-sync serve --store sqlite:server.sqlite --port 1'"), "\(result)")
    }

    @Test func aSecondRunKeepsTheServersItemsAndSeedsNothingTwice() throws {
        let directory = try TemporaryDirectory()
        let server = try ServeProcess(store: "sqlite:" + directory.path("server.sqlite"))
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        let first = try CLI.run(["demo", "--remote", url])
        #expect(first.status == 0, "\(first)")
        let second = try CLI.run(["demo", "--remote", url])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("holding 5 todo items"), "\(second)")
        #expect(second.stdout.contains("local and server agree: 7 items, 0 pending operations"), "\(second)")
    }
}
