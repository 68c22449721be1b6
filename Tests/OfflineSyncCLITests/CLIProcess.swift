import Foundation
import OfflineSync
import OfflineSyncStores
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What one run of `offline-sync` printed and returned.
struct CLIResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    /// `true` when the process was ended by a signal (then ``status`` is the signal's number).
    var signalled = false

    /// The whitespace-separated fields of every stdout line.
    var rows: [[String]] {
        stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    /// `true` when stdout has a line whose fields are exactly `fields`.
    func hasRow(_ fields: String...) -> Bool { rows.contains(fields) }

    var description: String {
        "\(signalled ? "signal" : "exit") \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)"
    }
}

/// Runs the real `offline-sync` executable, built next to the test bundle.
enum CLI {
    /// The environment variable holding the raw key of the `sqlcipher:` stores the tests create.
    static let keyVariable = "OFFLINE_SYNC_TEST_KEY"
    /// A raw 256-bit key for the tests' encrypted stores.
    static let key = "2b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfe"

    /// `.build/<configuration>/offline-sync`: the directory of the running test binary, or the one
    /// `swift build --show-bin-path` names.
    static let executable: URL = {
        let candidates = [
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("offline-sync")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let output = try? launch(
            URL(fileURLWithPath: "/usr/bin/env"), ["swift", "build", "--show-bin-path"], directory: package)
        let binPath = output?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ".build/debug"
        return URL(fileURLWithPath: binPath).appendingPathComponent("offline-sync")
    }()

    /// Runs `offline-sync` with `arguments` in `directory`, with the test key in the environment.
    static func run(
        _ arguments: [String], in directory: URL? = nil,
        environment: [String: String] = [:]
    ) throws -> CLIResult {
        var variables = ProcessInfo.processInfo.environment
        variables.removeValue(forKey: "OFFLINE_SYNC_STORE")
        variables[keyVariable] = key
        variables.merge(environment) { $1 }
        return try launch(executable, arguments, directory: directory, environment: variables)
    }

    /// Runs any executable with exactly `environment` (the parent's when `nil`), collecting its
    /// output through files, and tells whether it ended by a signal.
    static func launch(
        _ executable: URL, _ arguments: [String], directory: URL?,
        environment: [String: String]? = nil
    ) throws -> CLIResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offline-sync-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("stdout")
        let err = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal)
    }
}

/// A directory for one test's files, removed afterwards.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-sync-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to a file here and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }
}

/// The backends the tests run on: every persistent backend built into this package.
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, sqlcipher, lmdb

    /// The persistent backends that are built in.
    static let available: [Backend] = {
        BuiltInStores.register()
        // A process built with a sanitizer (and the CLI built with it) cannot load SQLCipher.
        let sanitized = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil
        return allCases.filter { StoreRegistry.shared.isAvailable($0.rawValue) && !(sanitized && $0 == .sqlcipher) }
    }()

    /// A store URL for a new store named `name` in `directory`.
    func url(_ name: String, in directory: TemporaryDirectory) -> String {
        switch self {
        case .sqlite: return "sqlite:\(directory.path(name + ".sqlite"))"
        case .sqlcipher: return "sqlcipher:\(directory.path(name + ".db"))?key-env=\(CLI.keyVariable)"
        case .lmdb: return "lmdb:\(directory.path(name + ".lmdb"))?map-size=64MiB"
        }
    }

    var testDescription: String { rawValue }
}
