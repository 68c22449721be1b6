import Foundation
import OfflineSync

#if canImport(Glibc)
    import Glibc
#endif

/// `offline-sync`, built next to the test binary.
enum OfflineSyncTool {
    static let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("offline-sync")

    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    /// What one run printed and returned.
    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String

        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    /// Runs `offline-sync arguments` to its end, output collected through files.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let scratch = try ScratchDirectory()
        let out = scratch.url.appendingPathComponent("stdout")
        let err = scratch.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        variables.removeValue(forKey: "OFFLINE_SYNC_STORE")
        variables.merge(environment) { $1 }
        process.environment = variables
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}

/// A running `offline-sync serve` on a free loopback port (`--port 0`, read back from its first
/// line); ``kill()`` sends SIGKILL, ``stop()`` SIGTERM. Its request log goes to `log`.
final class ServeProcess: @unchecked Sendable {
    let process: Process
    let port: Int
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(store: String, arguments: [String] = [], log: URL) throws {
        let process = Process()
        process.executableURL = OfflineSyncTool.executable
        process.arguments = ["serve", "--store", store, "--port", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        self.process = process
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "http://127.0.0.1:"),
            let bound = Int(text[range.upperBound...].prefix { $0.isNumber })
        else {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw OfflineSyncError(
                .configuration, "offline-sync serve did not report its port: '\(text)'; its log: \(logged)")
        }
        port = bound
    }

    /// SIGKILL, and waits for the process to end.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM (the server finishes the requests in progress), and waits for the end.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { kill() }
}

/// A directory for one test's files, removed afterwards.
final class ScratchDirectory: @unchecked Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-sync-pg-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
