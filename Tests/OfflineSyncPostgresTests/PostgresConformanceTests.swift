import OfflineSyncTestSupport
import OfflineSync
import OfflineSyncConformance
import OfflineSyncPostgres
import Testing

/// Both tiers of the conformance suite on ``PostgresStore``, one test per group, each store in a
/// schema of its own on this process's PostgreSQL cluster (``PostgresTestServer``).
@Suite struct PostgresConformanceTests {
    static let storeGroups = ConformanceSuite.groupNames(tier: .store)
    static let syncGroups = ConformanceSuite.groupNames(tier: .sync)

    @Test(arguments: storeGroups) func storeTier(_ group: String) async throws {
        try await expectPasses(group, suite())
    }

    @Test(arguments: syncGroups) func syncTier(_ group: String) async throws {
        try await expectPasses(group, suite())
    }

    private func suite() throws -> ConformanceSuite {
        let server = try PostgresTestServer.require()
        var suite = ConformanceSuite(storeName: "postgres", capabilities: .all) {
            PostgresStore(settings: server.freshSettings())
        }
        suite.makeStoreSharingLocation = { store in
            guard let store = store as? PostgresStore else {
                throw OfflineSyncError(.invalidOperation, "expected a PostgresStore, got \(type(of: store))")
            }
            return PostgresStore(settings: store.settings)
        }
        return suite
    }

    /// Runs one group and records each failure message as an issue.
    private func expectPasses(_ group: String, _ suite: ConformanceSuite) async throws {
        let result = await suite.run(group: group)
        for message in result.failureMessages {
            Issue.record("postgres \(group): \(message)")
        }
        #expect(result.failed == 0 && result.passed > 0, "\(result)")
    }
}
