import Foundation
import Testing

@Suite("two processes creating one new store at once")
struct CLIConcurrentCreationTests {
    /// Starts `offline-sync` without waiting for it.
    static func start(_ arguments: [String], output: URL) throws -> Process {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "OFFLINE_SYNC_STORE")
        environment[CLI.keyVariable] = CLI.key
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: output)
        try process.run()
        return process
    }

    @Test(arguments: Backend.available)
    func bothImportsSucceedAndTheStoreHoldsBoth(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let schema = try directory.write("schema.json", Todo.schema)
        let first = try directory.write("first.jsonl", #"{"id":"first","text":"one"}"#)
        let second = try directory.write("second.jsonl", #"{"id":"second","text":"two"}"#)
        for round in 0..<8 {
            let url = backend.url("store-\(round)", in: directory)
            let processes = try [first, second].enumerated().map { index, file in
                try Self.start(
                    ["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema],
                    output: directory.url.appendingPathComponent("stderr-\(round)-\(index)"))
            }
            for (index, process) in processes.enumerated() {
                process.waitUntilExit()
                let stderr = (try? String(
                    contentsOf: directory.url.appendingPathComponent("stderr-\(round)-\(index)"), encoding: .utf8)) ?? ""
                #expect(
                    process.terminationReason == .exit && process.terminationStatus == 0,
                    "round \(round), import \(index) failed (\(process.terminationStatus)): \(stderr)")
            }
            let export = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(export.stdout.contains(#""id":"first""#) && export.stdout.contains(#""id":"second""#), "\(export)")
        }
    }
}
