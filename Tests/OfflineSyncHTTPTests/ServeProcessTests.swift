import Foundation
import OfflineSync
import OfflineSyncSQLite
import Synchronization
import Testing

/// `offline-sync serve` as a real process: killed with SIGKILL in the middle of a push and
/// started again over the same SQLite file, the client resumes and nothing is lost or applied twice.
@Suite("offline-sync serve process")
struct ServeProcessTests {
    /// `offline-sync`, built next to the test binary.
    static let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("offline-sync")

    /// A running `offline-sync serve`; `kill()` sends SIGKILL.
    final class ServeProcess: Sendable {
        let process: Process
        let port: Int

        init(store: String, port: Int) throws {
            let process = Process()
            process.executableURL = ServeProcessTests.executable
            process.arguments = ["serve", "--store", store, "--port", String(port)]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
            guard let range = line.range(of: "127.0.0.1:"),
                let bound = Int(line[range.upperBound...].prefix { $0.isNumber })
            else {
                process.terminate()
                throw OfflineSyncError(.configuration, "offline-sync serve did not report its port: '\(line)'")
            }
            self.port = bound
        }

        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test(
        "killed mid-push and restarted: the client resumes, nothing lost, nothing applied twice",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func killedMidPush() async throws {
        let directory = try TemporaryDirectory()
        let serverStore = "sqlite:" + directory.path("server.sqlite")
        var server = try ServeProcess(store: serverStore, port: 0)
        let port = server.port
        let device = try Device.make("device", store: SQLiteStore(path: directory.path("device.sqlite")), port: port)
        let count = 400
        _ = try device.todo.insert((0..<count).map { Device.todo(String(format: "k%04d", $0), "kept \($0)") })

        let push = Task { try await device.context.push() }
        for _ in 0..<2000 where try device.context.pendingOperationCount() > count - 100 {
            try await Task.sleep(for: .milliseconds(2))
        }
        server.kill()
        let first = await push.result
        #expect((try? first.get()) == nil, "the push stops when the server dies")
        let pending = try device.context.pendingOperationCount()
        #expect(pending > 0 && pending < count)

        server = try ServeProcess(store: serverStore, port: port)
        // An insert whose answer was lost meets its own copy on the server: done, not a conflict.
        let result = try await device.context.push()
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(try device.context.pendingOperationCount() == 0)

        let answer = try await send(
            "GET", "/tables/todoitem?$top=1000&$inlinecount=allpages&__includeDeleted=true", port: port,
            headers: [("ZUMO-API-VERSION", "2.0.0")])
        let page = answer.json as? [String: Any]
        #expect(page?["count"] as? Int == count, "each item exactly once on the server")
        let served = (page?["results"] as? [[String: Any]]) ?? []
        #expect(
            served.allSatisfy { ($0["createdAt"] as? String) == ($0["updatedAt"] as? String) },
            "every item written once")
        let local = try device.items()
        #expect(local.count == count)
        for item in served {
            let id = item["id"] as? String ?? ""
            #expect(local[id]?.version == item["version"] as? String, "'\(id)' at the server's version")
        }
        try await device.close()
        server.kill()
    }

    /// Runs `offline-sync` with `arguments` until its first line of standard output (then
    /// terminates it) or its exit; answers that line and its standard error.
    static func firstLine(_ arguments: [String]) throws -> (output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return (line, String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test(
        "serve on an IPv6 address prints its URL with the address in brackets",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func ipv6URL() async throws {
        let (output, error) = try await onOwnThread {
            try Self.firstLine(["serve", "--store", "memory:", "--host", "::1", "--port", "0"])
        }
        #expect(output.contains("http://[::1]:"), "\(output) \(error)")
    }

    @Test(
        "serve on a port in use says so in words and names --port",
        .enabled(if: FileManager.default.isExecutableFile(atPath: executable.path)))
    func portInUse() async throws {
        try await withTableServer { port in
            let (output, error) = try await onOwnThread {
                try Self.firstLine(["serve", "--store", "memory:", "--port", String(port)])
            }
            #expect(output.isEmpty)
            #expect(
                error.contains("cannot listen on 127.0.0.1:\(port): the address is already in use")
                    && error.contains("--port"), "\(error)")
            #expect(!error.contains("errno"), "\(error)")
        }
    }
}
