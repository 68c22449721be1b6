import OfflineSync

/// The random tier: seeded random sequences of opens, reopens, transactions and reads, each step
/// run on the store under test and on the reference (``OfflineSync/InMemoryStore`` with
/// ``OfflineSync/QueryEvaluator``), every answer compared row for row.
///
/// Hand-written cases find the bugs their authors thought of; this tier draws sizes around every
/// threshold a backend might have and values from every documented corner, and mixes the
/// operations in orders no case wrote down (see ``RandomSequence``). A difference is shrunk to a
/// short sequence (``RandomShrinker``) and reported with the seed that reproduces it.
enum RandomTierGroups {
    static let all: [ConformanceGroup] = [random]

    static let random = ConformanceGroup(
        "random", tier: .random,
        cases: [
            ConformanceCase("random operation sequences agree with the reference store") { context in
                RandomRun(suite: context.suite, context: context).run()
            }
        ])
}

/// The steps of ``ConformanceSuite/randomSteps`` as sequences of at most ``sequenceLength`` steps,
/// each on a new store with a seed of its own (the suite's seed plus its number), so that a
/// failure is shrunk within one sequence and reproduced by that sequence's seed alone.
struct RandomRun {
    let suite: ConformanceSuite
    let context: CaseContext

    /// The most steps one sequence runs on one store.
    static let sequenceLength = 500

    func run() {
        var remaining = suite.randomSteps
        var number: UInt64 = 0
        while remaining > 0 {
            let steps = min(remaining, Self.sequenceLength)
            let seed = suite.seed &+ number
            if let failure = Self.run(seed: seed, steps: steps, suite: suite) {
                context.fail(failure)
                return
            }
            remaining -= steps
            number += 1
            suite.randomProgress?(suite.randomSteps - remaining, suite.randomSteps)
        }
    }

    /// Runs one sequence; answers the failure message, shrunk, or `nil` when every step agreed.
    static func run(seed: UInt64, steps: Int, suite: ConformanceSuite) -> String? {
        var sequence = RandomSequence(seed: seed)
        let pair: RandomPair
        do {
            pair = RandomPair(candidate: try suite.makeStore())
        } catch {
            return "makeStore() threw \(CaseContext.describe(error))"
        }
        var log: [RandomStep] = []
        var failure: (step: Int, difference: RandomPair.Difference)?
        for position in 0..<steps {
            let step = sequence.step(reference: pair.reference)
            log.append(step)
            if let difference = pair.run(step) {
                failure = (position, difference)
                break
            }
        }
        pair.close()
        guard let failure else { return nil }
        var shrinker = RandomShrinker(suite: suite)
        let shrunk = shrinker.shrink(log, difference: failure.difference)
        let hex = "0x" + String(seed, radix: 16)
        var lines = [
            "seed \(hex), step \(failure.step + 1) of \(steps) (\(RandomText.clipped(log[failure.step].description, limit: 300))): \(failure.difference.message)",
            "shrunk to \(shrunk.steps.count) steps in \(shrinker.replays) replays (rerun: offline-sync conformance --tier random --seed \(hex) --steps \(failure.step + 1)):",
        ]
        lines += shrunk.steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }
        lines.append("  then: \(shrunk.difference.message)")
        return lines.joined(separator: "\n")
    }
}

/// Shrinks a failing sequence: removes steps (halves, then quarters … then single steps), then
/// operations inside transactions, then rows of batches and ids of lists, keeping each removal
/// after which a replay on a new store still differs from the reference. The first step (the
/// first open) stays. Replays stop after ``maximumReplays`` or a minute, whichever comes first.
struct RandomShrinker {
    let suite: ConformanceSuite
    /// The replays run so far.
    private(set) var replays = 0
    static let maximumReplays = 600
    private let deadline = ContinuousClock.now + .seconds(60)

    init(suite: ConformanceSuite) {
        self.suite = suite
    }

    private var exhausted: Bool { replays >= Self.maximumReplays || ContinuousClock.now > deadline }

    /// How `steps` run on a new store differ from the reference, or `nil` when they agree or
    /// differ otherwise than `kind` says.
    private mutating func difference(_ steps: [RandomStep], kind: String) -> RandomPair.Difference? {
        replays += 1
        guard let store = try? suite.makeStore() else { return nil }
        let pair = RandomPair(candidate: store)
        defer { pair.close() }
        for step in steps {
            if let difference = pair.run(step) { return difference.kind == kind ? difference : nil }
        }
        return nil
    }

    /// `steps` shrunk, and the difference the shrunk sequence shows (of the kind of `difference`).
    mutating func shrink(_ steps: [RandomStep], difference: RandomPair.Difference)
        -> (steps: [RandomStep], difference: RandomPair.Difference)
    {
        var steps = steps
        var difference = difference
        let kind = difference.kind
        // Whole steps, by chunks of halving size.
        var chunk = max(1, (steps.count - 1) / 2)
        while chunk >= 1, !exhausted {
            var start = 1
            while start < steps.count, !exhausted {
                var shorter = steps
                shorter.removeSubrange(start..<min(start + chunk, steps.count))
                if let found = self.difference(shorter, kind: kind) {
                    steps = shorter
                    difference = found
                } else {
                    start += chunk
                }
            }
            chunk /= 2
        }
        // Inside each step: operations, the final throw, rows, ids and list values.
        var position = steps.count - 1
        while position >= 0, !exhausted {
            for smaller in Self.smaller(steps[position]) {
                if exhausted { break }
                var trial = steps
                trial[position] = smaller
                if let found = self.difference(trial, kind: kind) {
                    steps = trial
                    difference = found
                    break
                }
            }
            position -= 1
        }
        return (steps, difference)
    }

    /// Smaller versions of `step`, most reduced first.
    static func smaller(_ step: RandomStep) -> [RandomStep] {
        guard case .write(let operations, let rollback) = step else { return [] }
        var versions: [RandomStep] = []
        for position in operations.indices.reversed() {
            var fewer = operations
            fewer.remove(at: position)
            if !fewer.isEmpty { versions.append(.write(fewer, rollback: rollback)) }
        }
        if rollback { versions.append(.write(operations, rollback: false)) }
        for (position, operation) in operations.enumerated() {
            for reduced in smaller(operation) {
                var trial = operations
                trial[position] = reduced
                versions.append(.write(trial, rollback: rollback))
            }
        }
        return versions
    }

    /// Smaller versions of an operation: halves and single rows of a batch, halves of an id list.
    static func smaller(_ operation: RandomOperation) -> [RandomOperation] {
        func halves<T>(_ elements: [T]) -> [[T]] {
            guard elements.count > 1 else { return [] }
            let middle = elements.count / 2
            var parts = [Array(elements[..<middle]), Array(elements[middle...])]
            if elements.count <= 8 { parts += elements.indices.map { [elements[$0]] } }
            return parts
        }
        switch operation {
        case .upsert(let items, let table, let origin):
            return halves(items).map { .upsert($0, table: table, origin: origin) }
        case .insertNew(let items, let table, let origin):
            return halves(items).map { .insertNew($0, table: table, origin: origin) }
        case .deleteIds(let ids, let table): return halves(ids).map { .deleteIds($0, table: table) }
        default: return []
        }
    }
}
