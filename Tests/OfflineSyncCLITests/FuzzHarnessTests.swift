import Foundation
import OfflineSyncTestSupport
import Testing

/// The libFuzzer harnesses (`Fuzz/Harnesses`) compile with the sources `scripts/fuzz` gives them.
///
/// A harness is compiled as one module with the core's sources and a few of a backend's or the
/// tool's files, outside the package build, so nothing else notices when one of those files moves
/// or when two of them declare the same name (the `lmdb-record` and `schema` harnesses
/// were once found broken that way). Type-checking takes under a second per harness; running them
/// stays a manual step (`scripts/fuzz TARGET SECONDS`).
@Suite("fuzz harnesses", .tags(.slow), .skippedInFastRuns)
struct FuzzHarnessTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("compiles with the sources scripts/fuzz gathers", arguments: ["odata", "json", "wire", "schema", "lmdb-record"])
    func harnessCompiles(target: String) throws {
        let result = try CLI.launch(
            URL(fileURLWithPath: "/bin/bash"), [Self.package.appendingPathComponent("scripts/fuzz").path, "check", target],
            directory: nil, environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("fuzz harness \(target): compiles"), "\(result)")
    }
}
