import Foundation
import Testing

@Suite("offline-sync bench")
struct CLIBenchTests {
    @Test func printsOneRowPerScenarioAndOneColumnPerStore() throws {
        let result = try CLI.run(["bench", "--stores", "memory,sqlite", "--records", "1000", "--scenarios", "lookup,bulk-upsert"])
        #expect(result.status == 0, "\(result)")
        let header = try #require(result.stdout.split(separator: "\n").first)
        #expect(header.contains("memory") && header.contains("sqlite"), "\(result)")
        #expect(result.stdout.contains("lookup by random id"), "\(result)")
        #expect(result.stdout.contains("bulk upsert, pages of 1,000"), "\(result)")
        #expect(result.stdout.contains("["), "the sqlite column shows its ratio to raw SQLite: \(result)")
    }

    @Test func jsonReportCarriesRawMeasurements() throws {
        let result = try CLI.run(["bench", "--stores", "lmdb", "--records", "1000", "--scenarios", "lookup", "--format", "json"])
        #expect(result.status == 0, "\(result)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let cells = try #require(report["cells"] as? [[String: Any]])
        #expect(cells.count == 1)
        #expect(cells.first?["raw"] != nil, "\(result)")
    }

    @Test func unknownStoreIsNamedWithTheAvailableOnes() throws {
        let result = try CLI.run(["bench", "--stores", "postgres"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("unknown store 'postgres'"), "\(result)")
        #expect(result.stderr.contains("sqlite"), "\(result)")
    }
}
