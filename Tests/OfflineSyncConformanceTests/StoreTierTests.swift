import OfflineSyncConformance
import Testing

/// The store tier of the conformance suite on every backend, one test per group.
@Suite struct StoreTierTests {
    @Test(arguments: Backends.all) func schema(_ backend: Backend) async { await expectPasses("schema", backend) }
    @Test(arguments: Backends.all) func crud(_ backend: Backend) async { await expectPasses("crud", backend) }
    @Test(arguments: Backends.all) func missing(_ backend: Backend) async { await expectPasses("missing", backend) }
    @Test(arguments: Backends.all) func query(_ backend: Backend) async { await expectPasses("query", backend) }
    @Test(arguments: Backends.all) func paging(_ backend: Backend) async { await expectPasses("paging", backend) }
    @Test(arguments: Backends.all) func selection(_ backend: Backend) async { await expectPasses("selection", backend) }
    @Test(arguments: Backends.all) func deleteByQuery(_ backend: Backend) async {
        await expectPasses("deleteByQuery", backend)
    }
    @Test(arguments: Backends.all) func transactions(_ backend: Backend) async {
        await expectPasses("transactions", backend)
    }
    @Test(arguments: Backends.all) func values(_ backend: Backend) async { await expectPasses("values", backend) }
    @Test(arguments: Backends.all) func limits(_ backend: Backend) async { await expectPasses("limits", backend) }
    @Test(arguments: Backends.all) func transactionScope(_ backend: Backend) async {
        await expectPasses("transactionScope", backend)
    }
    @Test(arguments: Backends.all) func concurrency(_ backend: Backend) async {
        await expectPasses("concurrency", backend)
    }
    @Test(arguments: Backends.all) func validation(_ backend: Backend) async {
        await expectPasses("validation", backend)
    }
    @Test(arguments: Backends.all) func sharing(_ backend: Backend) async {
        guard backend.sharing != nil else {
            // A store confined to its instance (memory), or one a process opens once (LMDB).
            let result = await backend.suite.run(group: "sharing")
            #expect(result.skipped == result.cases.count, "\(result)")
            return
        }
        await expectPasses("sharing", backend)
    }

    @Test func everyStoreTierGroupHasATest() {
        #expect(
            ConformanceSuite.groupNames(tier: .store) == [
                "schema", "crud", "values", "missing", "query", "paging", "limits", "selection", "deleteByQuery",
                "transactions", "transactionScope", "concurrency", "validation", "sharing",
            ])
    }

    /// Runs one group and records each failure message as an issue.
    private func expectPasses(_ group: String, _ backend: Backend) async {
        let result = await backend.suite.run(group: group)
        for message in result.failureMessages {
            Issue.record("\(backend.name) \(group): \(message)")
        }
        #expect(result.failed == 0 && result.passed > 0, "\(result)")
    }
}
