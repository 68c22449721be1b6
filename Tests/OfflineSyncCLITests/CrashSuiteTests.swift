import Foundation
import OfflineSyncTestSupport
import Testing

/// A few kill points of `scripts/crash-test` per backend (the script runs 100 by default; every
/// third one kills the server too), and checks that its verifier does report a lost edit, on the
/// device or on a server that was killed.
@Suite("client crash suite", .tags(.slow), .skippedInFastRuns)
struct CrashSuiteTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let binaries = CLI.executable.deletingLastPathComponent()
    static let device = binaries.appendingPathComponent("offline-sync-crash-client")
    static let isBuilt =
        FileManager.default.isExecutableFile(atPath: CLI.executable.path)
        && FileManager.default.isExecutableFile(atPath: device.path)

    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> CLIResult {
        try CLI.launch(
            executable, arguments, directory: nil,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    @Test(.enabled(if: isBuilt, "offline-sync and offline-sync-crash-client are not built next to the tests"), arguments: Backend.available)
    func killedDevicesLoseNothingAndConverge(backend: Backend) throws {
        let result = try Self.run(
            URL(fileURLWithPath: "/bin/bash"),
            [Self.package.appendingPathComponent("scripts/crash-test").path, "4", backend.rawValue],
            environment: ["OFFLINE_SYNC_BIN": Self.binaries.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("\(backend.rawValue): 4 kill points"), "\(result)")
    }

    /// The server kills of the suite can fail: a `memory:` server forgets what it acknowledged
    /// when it is killed (the third kill point kills it), which the verifier must report.
    @Test(.enabled(if: isBuilt, "offline-sync and offline-sync-crash-client are not built next to the tests"))
    func aServerThatLosesAcknowledgedWritesWhenKilledIsReported() throws {
        let result = try Self.run(
            URL(fileURLWithPath: "/bin/bash"),
            [Self.package.appendingPathComponent("scripts/crash-test").path, "3", "sqlite"],
            environment: [
                "OFFLINE_SYNC_BIN": Self.binaries.path, "CRASH_TEST_SERVER_BACKEND": "memory", "CRASH_TEST_SEED": "17",
            ])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("kill point 3"), "\(result)")
        #expect(result.stderr.contains("on the server, with no queued operation"), "\(result)")
        // The script keeps the directory of a violation for a person to look at; this one was
        // expected.
        if let kept = result.stderr.firstMatch(of: /kept (\S*offline-sync-crash-[^\s;]+)/) {
            try? FileManager.default.removeItem(atPath: String(kept.1))
        }
    }

    @Test(.enabled(if: isBuilt, "offline-sync and offline-sync-crash-client are not built next to the tests"))
    func theVerifierReportsAnAcknowledgedEditThatIsNotStored() throws {
        let directory = try TemporaryDirectory()
        let journal = try directory.write("journal", "E 1 insert ghost-1 insert-1\nA 1\n")
        let result = try Self.run(
            Self.device,
            [
                "verify", "--store", "sqlite:\(directory.path("device.sqlite"))", "--remote",
                "http://127.0.0.1:9",
                "--journal", journal,
            ])
        #expect(result.status != 0, "\(result)")
        #expect(result.stdout.contains("item ghost-1 is absent locally"), "\(result)")
    }

    @Test(.enabled(if: isBuilt, "offline-sync and offline-sync-crash-client are not built next to the tests"))
    func theDeviceIsATestExecutableNotASubcommandOfTheTool() throws {
        let help = try Self.run(CLI.executable, ["--help"])
        #expect(help.status == 0, "\(help)")
        #expect(!help.stdout.contains("crash-client"), "\(help)")
        let subcommand = try Self.run(CLI.executable, ["crash-client", "--help"])
        #expect(subcommand.status != 0, "\(subcommand)")
        let own = try Self.run(Self.device, ["--help"])
        #expect(own.status == 0, "\(own)")
        #expect(own.stdout.contains("work, verify or converge"), "\(own)")
    }
}
