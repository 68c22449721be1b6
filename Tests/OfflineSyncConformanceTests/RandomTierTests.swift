import OfflineSync
import OfflineSyncConformance
import OfflineSyncTestSupport
import Testing

/// The random tier of the conformance suite on every backend: one sequence of 250 steps each, a
/// debug build's minute (`offline-sync conformance`, built for release, runs the default 1,000 in
/// seconds, and long runs many more).
@Suite struct RandomTierTests {
    @Test(.tags(.slow), .skippedInFastRuns, arguments: Backends.all)
    func randomSequencesAgreeWithTheReference(_ backend: Backend) async {
        var suite = backend.suite
        suite.randomSteps = RandomRunLength.test
        let result = await suite.run(group: "random")
        for message in result.failureMessages {
            Issue.record("\(backend.name) random: \(message)")
        }
        #expect(result.failed == 0 && result.passed == 1, "\(result)")
    }

    @Test func theRandomTierHasOneGroup() {
        #expect(ConformanceSuite.groupNames(tier: .random) == ["random"])
        #expect(ConformanceSuite.groupNames(tier: .all).last == "random")
    }

    /// A difference is reported with the seed of its sequence, the step it appeared at, and a
    /// shrunk sequence short enough to read.
    @Test func aDifferenceIsPrintedWithItsSeedAndAShrunkSequence() async {
        var suite = ConformanceSuite(storeName: "unforeseen") {
            try UnforeseenBrokenStore.make(.storesNumericLookingStringsAsNumbers, path: Backends.freshDatabasePath)
        }
        suite.randomSteps = 1_000
        let result = await suite.run(group: "random")
        let message = result.failureMessages.first ?? ""
        #expect(message.contains("seed 0x"), "\(message)")
        #expect(message.contains("--seed 0x"), "\(message)")
        let shrunk = message.split(separator: "\n").filter {
            $0.hasPrefix("  ") && $0.dropFirst(2).first?.isNumber == true
        }
        #expect(!shrunk.isEmpty && shrunk.count <= 12, "\(message)")
    }

    /// The same seed gives the same failure, step for step, and the same shrunk sequence. (A
    /// broken store the sequence meets early: each replay of the shrink runs the steps up to the
    /// failure again, so one met late costs minutes of a debug build.)
    @Test func aSeedReproducesItsRun() async {
        var suite = ConformanceSuite(storeName: "unforeseen") {
            try UnforeseenBrokenStore.make(.storesNumericLookingStringsAsNumbers, path: Backends.freshDatabasePath)
        }
        suite.randomSteps = 1_000
        let first = await suite.run(group: "random").failureMessages
        let second = await suite.run(group: "random").failureMessages
        #expect(!first.isEmpty)
        #expect(first == second)
    }
}

/// How many random steps the tests run.
enum RandomRunLength {
    static let test = 250
}
