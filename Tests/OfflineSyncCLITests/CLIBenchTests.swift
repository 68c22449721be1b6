import Foundation
import Testing

@Suite("offline-sync bench")
struct CLIBenchTests {
    @Test func printsOneRowPerScenarioAndOneColumnPerStore() throws {
        let result = try CLI.run([
            "bench", "--stores", "memory,sqlite", "--records", "1000", "--scenarios", "lookup,bulk-upsert",
        ])
        #expect(result.status == 0, "\(result)")
        let header = try #require(result.stdout.split(separator: "\n").first)
        #expect(header.contains("memory") && header.contains("sqlite"), "\(result)")
        #expect(result.stdout.contains("lookup by random id"), "\(result)")
        #expect(result.stdout.contains("bulk upsert, pages of 1,000"), "\(result)")
        #expect(result.stdout.contains("["), "the sqlite column shows its ratio to raw SQLite: \(result)")
    }

    @Test func jsonReportCarriesRawMeasurements() throws {
        let result = try CLI.run([
            "bench", "--stores", "lmdb", "--records", "1000", "--scenarios", "lookup", "--format", "json",
        ])
        #expect(result.status == 0, "\(result)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cells = try #require(report["cells"] as? [[String: Any]])
        #expect(cells.count == 1)
        #expect(cells.first?["raw"] != nil, "\(result)")
    }

    /// Also: the in-process servers and clients start and stop without a line on standard error.
    /// SwiftNIO's strict mode turns its "Cannot schedule tasks on an EventLoop that has already
    /// shut down" line (a server's loop shut down while its shutdown still used it) into a crash.
    @Test func httpScenariosAreRowsOfTheSameTableWithoutARawRatio() throws {
        let result = try CLI.run(
            [
                "bench", "--stores", "memory,sqlite", "--records", "1000", "--scenarios",
                "http-push,http-push-batched,http-pull",
            ], environment: ["SWIFTNIO_STRICT": "1"])
        #expect(result.status == 0, "\(result)")
        // Only the progress lines a run prints when standard error is not a terminal.
        let otherLines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("bench: ") }
        #expect(otherLines.isEmpty, "\(result)")
        #expect(result.stderr.contains("bench: 100% (18 of 18 trials"), "\(result)")
        let rows = result.stdout.split(separator: "\n").filter { $0.contains("over HTTP loopback") }
        let pull = rows.filter { $0.hasPrefix("full pull over HTTP loopback, pages of 1,000 (server: sqlite)") }
        let push = rows.filter {
            $0.hasPrefix("push queued inserts over HTTP loopback, one at a time (server: sqlite)")
        }
        let batched = rows.filter {
            $0.hasPrefix("push queued inserts over HTTP loopback, a batch per 64 (server: sqlite)")
        }
        #expect(
            pull.count == 2 && push.count == 2 && batched.count == 2,
            "one throughput and one cost row each: \(result)")
        #expect(
            pull.first?.contains("rows/s") == true && push.first?.contains("ops/s") == true
                && batched.first?.contains("ops/s") == true, "\(result)")
        #expect(!rows.contains { $0.contains("[") || $0.contains("failed") }, "\(result)")
    }

    @Test func jsonReportCarriesAnHTTPCellPerBackend() throws {
        let result = try CLI.run([
            "bench", "--stores", "lmdb,sqlite", "--records", "1000", "--scenarios", "http-pull", "--format", "json",
        ])
        #expect(result.status == 0, "\(result)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cells = try #require(report["cells"] as? [[String: Any]])
        #expect(cells.map { $0["backend"] as? String } == ["lmdb", "sqlite"], "\(result)")
        for cell in cells {
            let store = try #require(cell["store"] as? [String: Any], "\(result)")
            // Each run pulls the 1,000 records; a short one runs again (`ScenarioRunner`).
            let operations = try #require(store["operations"] as? Int, "\(result)")
            #expect(operations > 0 && operations % 1000 == 0, "\(result)")
            #expect(cell["raw"] == nil)
        }
    }

    @Test func unknownStoreIsNamedWithTheAvailableOnes() throws {
        let result = try CLI.run(["bench", "--stores", "oracle"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("unknown store 'oracle'"), "\(result)")
        #expect(result.stderr.contains("sqlite"), "\(result)")
    }

    @Test func postgresColumnsWithoutAServerNameTheVariableToSet() throws {
        let result = try CLI.run(["bench", "--stores", "postgres"], environment: ["OFFLINE_SYNC_BENCH_POSTGRES": ""])
        #expect(result.status != 0)
        #expect(result.stderr.contains("OFFLINE_SYNC_BENCH_POSTGRES"), "\(result)")
    }
}
