import OfflineSyncConformance
import Testing

/// The sync tier of the conformance suite (queue, push, pull, purge over an in-memory remote) on
/// every backend, one test per group.
@Suite struct SyncTierTests {
    @Test(arguments: Backends.all) func queue(_ backend: Backend) async {
        await expectSyncGroupPasses("queue", backend)
    }
    @Test(arguments: Backends.all) func push(_ backend: Backend) async { await expectSyncGroupPasses("push", backend) }
    @Test(arguments: Backends.all) func pushFailures(_ backend: Backend) async {
        await expectSyncGroupPasses("pushFailures", backend)
    }
    @Test(arguments: Backends.all) func resolution(_ backend: Backend) async {
        await expectSyncGroupPasses("resolution", backend)
    }
    @Test(arguments: Backends.all) func policies(_ backend: Backend) async {
        await expectSyncGroupPasses("policies", backend)
    }
    @Test(arguments: Backends.all) func pull(_ backend: Backend) async { await expectSyncGroupPasses("pull", backend) }
    @Test(arguments: Backends.all) func purge(_ backend: Backend) async {
        await expectSyncGroupPasses("purge", backend)
    }
    @Test(arguments: Backends.all) func observation(_ backend: Backend) async {
        await expectSyncGroupPasses("observation", backend)
    }
    @Test(arguments: Backends.all) func tutorial(_ backend: Backend) async {
        await expectSyncGroupPasses("tutorial", backend)
    }

    @Test(arguments: Backends.all) func typedModels(_ backend: Backend) async {
        await expectSyncGroupPasses("typedModels", backend)
    }

    @Test func everySyncTierGroupHasATest() {
        #expect(
            ConformanceSuite.groupNames(tier: .sync) == [
                "queue", "push", "pushFailures", "resolution", "policies", "pull", "purge", "observation", "tutorial",
                "typedModels",
            ])
    }

    /// Runs one group; every failure message becomes an issue.
    private func expectSyncGroupPasses(_ group: String, _ backend: Backend, _ suite: ConformanceSuite? = nil) async {
        let result = await (suite ?? backend.suite).run(group: group)
        for message in result.failureMessages {
            Issue.record("\(backend.name) \(group): \(message)")
        }
        #expect(result.failed == 0 && result.passed > 0, "\(result)")
    }
}
