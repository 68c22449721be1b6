package import Foundation
package import OfflineSync
package import Testing

/// The real `offline-sync` executable, built next to the test binary, run as a command.
package enum ServeCommand {
    /// `offline-sync`, built next to the test binary.
    package static let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("offline-sync")

    /// Runs `offline-sync` with `arguments`, `environment` added to this process's; returns its
    /// status, standard output and standard error. A command still running after a minute (a
    /// `serve` that should have refused to start) is terminated, so the test fails instead of
    /// hanging.
    package static func run(_ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String, error: String)
    {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    /// Imports `titles` (by id) into the table `notes`, one string column `title`, of `store`,
    /// creating it.
    package static func importNotes(_ titles: [(id: String, title: String)], into store: String, in directory: TemporaryDirectory)
        throws
    {
        let schema = directory.path("notes-schema.json")
        try Data(#"{"name": "notes", "columns": [{"name": "title", "type": "string"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: schema))
        let file = directory.path("notes-\(UUID().uuidString).jsonl")
        let lines = titles.map { #"{"id":"\#($0.id)","title":"\#($0.title)"}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let imported = try run(["import", "--store", store, "--table", "notes", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported.error)")
    }
}

/// A running `offline-sync serve`; `kill()` sends SIGKILL.
package final class ServeProcess: Sendable {
    package let process: Process
    package let port: Int
    /// Its standard error, when kept (otherwise discarded).
    package let errors: Pipe?

    package init(
        store: String, port: Int, keepingErrors: Bool = false, options: [String] = [],
        environment: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = ServeCommand.executable
        process.arguments = ["serve", "--store", store, "--port", String(port)] + options
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        errors = keepingErrors ? Pipe() : nil
        process.standardError = errors ?? FileHandle.nullDevice
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

    package func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until the process ends by itself, at most `seconds`; `false` (and the process
    /// killed) when it did not.
    package func ends(within seconds: Int) async throws -> Bool {
        for _ in 0..<seconds * 20 where process.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
        guard process.isRunning else { return true }
        kill()
        return false
    }
}
