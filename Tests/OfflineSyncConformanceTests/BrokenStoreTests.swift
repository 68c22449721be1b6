import OfflineSync
import OfflineSyncConformance
import Testing

/// The conformance suite catches stores that break the contract: each broken store fails the
/// group (and the case) that covers the rule it breaks.
@Suite struct BrokenStoreTests {
    private func run(_ group: String, on fault: BrokenStore.Fault) async -> GroupResult {
        await ConformanceSuite(storeName: "broken-\(fault)") { BrokenStore(fault) }.run(group: group)
    }

    /// Runs `group` on a store with `fault` and expects each of `failingCases` to fail; answers the
    /// group's result.
    @discardableResult
    private func expectCaught(_ fault: BrokenStore.Fault, group: String, failingCases: [String]) async -> GroupResult {
        let result = await run(group, on: fault)
        #expect(result.failed > 0, "the \(group) group should fail a store that \(fault): \(result)")
        for name in failingCases {
            let outcome = result.cases.first { $0.name == name }?.outcome
            guard case .failed(let messages)? = outcome, !messages.isEmpty else {
                Issue.record("case '\(name)' of \(group) should fail for \(fault), got \(String(describing: outcome))")
                continue
            }
        }
        return result
    }

    @Test func catchesAStoreThatIgnoresTop() async {
        await expectCaught(
            .ignoresTop, group: "paging",
            failingCases: [
                "every skip and top window agrees with the reference evaluator",
                "top 0 answers no rows and the full count",
            ])
        await expectCaught(
            .ignoresTop, group: "deleteByQuery",
            failingCases: [
                "deleting by filter, ordering and top removes the first rows in order"
            ])
    }

    @Test func catchesAStoreThatOrdersNullsLast() async {
        await expectCaught(
            .ordersNullsLast, group: "query",
            failingCases: [
                "nulls sort first ascending and last descending, ties by id",
                "generated queries agree with the reference evaluator",
            ])
    }

    @Test func catchesAStoreThatComparesStringsCaseInsensitivelyAndPrintsTheFailingQuery() async {
        let result = await expectCaught(
            .comparesStringsCaseInsensitively, group: "query",
            failingCases: [
                "strings compare by UTF-8 bytes, case-sensitively",
                "generated queries agree with the reference evaluator",
            ])
        let message = result.failureMessages.first { $0.contains("generated query #") }
        #expect(
            message?.contains("seed 0x\(String(ConformanceSuite.defaultSeed, radix: 16))") == true,
            "\(result.failureMessages.prefix(3))")
        #expect(message?.contains("$filter=") == true, "\(result.failureMessages.prefix(3))")
    }

    @Test func catchesAStoreThatDropsTheSignOfNegativeZero() async {
        let result = await expectCaught(
            .dropsNegativeZeroSign, group: "crud",
            failingCases: [
                "negative zero keeps its sign bit", "every value type round-trips exactly",
            ])
        let message = result.failureMessages.first { $0.contains("negative zero keeps its sign bit") }
        #expect(message?.contains("lookup(values, id 'negative-zero') column 'd'") == true, "\(result.failureMessages)")
    }

    @Test func catchesAStoreThatCommitsPartialTransactions() async {
        await expectCaught(
            .commitsPartialTransactions, group: "transactions",
            failingCases: [
                "a throw inside a transaction leaves nothing behind",
                "a failing operation inside a transaction rolls back the earlier ones",
            ])
    }

    @Test func catchesAStoreThatLosesTheSchemaOnReopen() async {
        await expectCaught(
            .losesSchemaOnReopen, group: "schema",
            failingCases: [
                "reopening keeps the data", "reopening adds new tables and keeps tables left out",
                "reopening with a changed column type is rejected",
            ])
    }

    @Test func brokenStoresPassTheGroupsTheyDoNotBreak() async {
        #expect(await run("missing", on: .ignoresTop).failed == 0)
        #expect(await run("crud", on: .ordersNullsLast).failed == 0)
        #expect(await run("transactions", on: .dropsNegativeZeroSign).failed == 0)
    }
}
