import OfflineSync
import OfflineSyncConformance
import Testing

/// How the suite reports: skipped cases, unknown groups, summaries, seeds.
@Suite struct ConformanceSuiteTests {
    @Test func aCaseNeedingAMissingCapabilityIsReportedAsSkipped() async {
        let suite = ConformanceSuite(storeName: "volatile", capabilities: []) { InMemoryStore() }
        let result = await suite.run(group: "schema")
        let reopen = result.cases.first { $0.name == "reopening keeps the data" }
        guard case .skipped(let reason)? = reopen?.outcome else {
            Issue.record(
                "expected 'reopening keeps the data' to be skipped, got \(String(describing: reopen?.outcome))")
            return
        }
        #expect(reason.contains("persistent"))
        #expect(result.skipped > 0 && result.failed == 0)
        #expect(result.description.contains("skipped"))
    }

    @Test func theSummaryCountsPassedFailedAndSkippedCases() async {
        let suite = ConformanceSuite(storeName: "volatile", capabilities: [.persistent]) { InMemoryStore() }
        var reported: [String] = []
        let summary = await suite.run(tier: .store, filter: "CRUD") { reported.append($0.group) }
        #expect(reported == ["crud"])
        #expect(summary.failed == 0 && summary.skipped == 1 && summary.passed > 0)
        #expect(summary.description == "\(summary.passed) passed, 0 failed, 1 skipped")
    }

    @Test func anUnknownGroupIsAFailureNamingTheKnownGroups() async {
        let result = await ConformanceSuite(storeName: "memory") { InMemoryStore() }.run(group: "nope")
        #expect(result.failed == 1)
        #expect(result.failureMessages.first?.contains("crud") == true)
    }

    @Test func anotherSeedGeneratesAnotherCorpusThatAlsoPasses() async {
        var suite = ConformanceSuite(storeName: "memory") { InMemoryStore() }
        suite.seed = 20_261_122
        let result = await suite.run(group: "query")
        #expect(result.failed == 0, "\(result)")
    }
}
