import OfflineSync
import OfflineSyncConformance
import Testing

/// The sync tier of the conformance suite on the reference store, one test per group.
@Suite struct SyncTierTests {
    static let suite = ConformanceSuite(storeName: "memory") { InMemoryStore() }

    @Test(arguments: ConformanceSuite.groupNames(tier: .sync))
    func syncTierGroupPassesOnInMemoryStore(_ group: String) async {
        let result = await SyncTierTests.suite.run(group: group)
        #expect(result.failed == 0, "\(result)")
        #expect(result.skipped == 0, "\(result)")
        #expect(result.passed > 0, "group \(group) ran no case")
    }
}
