public import OfflineSync

/// The conformance suite: proves that a `LocalStore` behaves exactly like the
/// reference `InMemoryStore` and that the shared sync logic works on top of it.
///
/// It is a library, not a test target, so anyone can run it on any store — a third party's
/// backend, the CLI's `conformance` command, or a Swift Testing suite with one test per group:
///
/// ```swift
/// let suite = ConformanceSuite(storeName: "sqlite") { try SQLiteStore(path: temporaryPath()) }
/// let summary = await suite.run { print($0) }
/// ```
///
/// The factory must return a **new, empty, unopened store at a fresh location** on every call;
/// each case gets its own store and closes it afterwards, even when the case fails.
/// Capabilities let a backend skip what it cannot do; a skipped case is reported as skipped,
/// never as passed.
public struct ConformanceSuite: Sendable {
    /// The name shown in reports, e.g. `sqlite`.
    public let storeName: String
    /// What the store under test can do.
    public let capabilities: StoreCapabilities
    /// Makes a new, empty, unopened store at a fresh location.
    public let makeStore: @Sendable () throws -> any LocalStore
    /// Makes another new, unopened store over the location of `store`, one ``makeStore`` returned,
    /// as a second instance or process of an app would open that file or database. Set it for a
    /// store several instances or processes can share, and the `sharing` group proves that each
    /// sees the others' committed writes and declarations (`LocalStore.storedSchemaChanged()`)
    /// and that their concurrent writes are all kept. Without it that group is skipped.
    public var makeStoreSharingLocation: (@Sendable (any LocalStore) throws -> any LocalStore)?

    /// The seed of the generated corpus and queries of the `query` group; a failure message quotes
    /// it, and setting it back reproduces the failing run exactly.
    public var seed: UInt64 = ConformanceSuite.defaultSeed

    /// How many steps the random tier runs (see ``ConformanceTier/random``): sequences of at most
    /// 500 steps, each on a new store with a seed of its own. The default keeps the tier within
    /// seconds; raise it for long runs (`offline-sync conformance --tier random --steps 100000`).
    public var randomSteps = ConformanceSuite.defaultRandomSteps

    /// Called as the random tier runs, with the steps run so far and ``randomSteps``: after
    /// each sequence of at most 500 steps, so a long run can show its progress.
    public var randomProgress: (@Sendable (_ stepsRun: Int, _ steps: Int) -> Void)?

    /// When set, the query group's generated-query cases stop at the first query that disagrees
    /// with the reference instead of counting how many of the corpus do: for the suite's own
    /// mutation tests, which only ask whether a case fails (a broken store's run then takes a
    /// fraction of the corpus in a debug build). Off for every store a user checks.
    package var stopsAtFirstDifference = false

    /// The seed used unless ``seed`` is set.
    public static let defaultSeed: UInt64 = 0x0FF1_5EED

    /// The steps of the random tier unless ``randomSteps`` is set.
    public static let defaultRandomSteps = 1_000

    /// Creates a suite for one backend.
    public init(
        storeName: String, capabilities: StoreCapabilities = .all,
        makeStore: @escaping @Sendable () throws -> any LocalStore
    ) {
        self.storeName = storeName
        self.capabilities = capabilities
        self.makeStore = makeStore
    }

    /// Every group of cases: store tier, sync tier, random tier.
    public var groups: [ConformanceGroup] { Self.allGroups }

    private static let allGroups = StoreTierGroups.all + SyncTierGroups.all + RandomTierGroups.all

    /// The names of the groups of a tier (for one-test-per-group wrappers).
    public static func groupNames(tier: ConformanceTier) -> [String] {
        allGroups.filter { tier == .all || $0.tier == tier }.map(\.name)
    }

    /// Runs one group by name and returns its result.
    public func run(group name: String) async -> GroupResult {
        guard let group = groups.first(where: { $0.name == name }) else {
            return GroupResult(
                group: name, tier: .all,
                cases: [
                    CaseResult(
                        name: name,
                        outcome: .failed([
                            "no conformance group is named '\(name)'; known groups: \(groups.map(\.name).joined(separator: ", "))"
                        ]))
                ])
        }
        return await group.run(self)
    }

    /// Runs only the cases named `cases` of the group `name` (the package's mutation matrix runs
    /// the cases that must fail a broken store, not the whole group each time); a name the group
    /// does not have is answered as a failed case saying so.
    package func run(group name: String, cases: [String]) async -> GroupResult {
        guard let group = groups.first(where: { $0.name == name }) else { return await run(group: name) }
        var results: [CaseResult] = []
        for caseName in cases {
            guard let testCase = group.cases.first(where: { $0.name == caseName }) else {
                results.append(
                    CaseResult(name: caseName, outcome: .failed(["the group \(name) has no case named '\(caseName)'"])))
                continue
            }
            results.append(await testCase.run(self))
        }
        return GroupResult(group: name, tier: group.tier, cases: results)
    }

    /// Runs every group of `tier` whose name contains `filter` (case-insensitive), reporting each
    /// group as it finishes, and returns the totals.
    public func run(
        tier: ConformanceTier = .all, filter: String? = nil,
        report: (GroupResult) -> Void = { _ in }
    ) async -> ConformanceSummary {
        var summary = ConformanceSummary()
        for group in groups where tier == .all || group.tier == tier {
            if let filter, !group.name.lowercased().contains(filter.lowercased()) { continue }
            let result = await group.run(self)
            summary.add(result)
            report(result)
        }
        return summary
    }
}

/// What a store can do; a case needing a missing capability is reported as skipped.
public struct StoreCapabilities: OptionSet, Sendable, Hashable {
    /// The bits of the set.
    public let rawValue: Int
    /// Creates a set from its bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Data survives closing and reopening the store instance.
    public static let persistent = StoreCapabilities(rawValue: 1 << 0)
    /// Strings of 1 MiB and more round-trip.
    public static let largeValues = StoreCapabilities(rawValue: 1 << 1)
    /// Several store instances can work over one location: present when the suite has
    /// ``ConformanceSuite/makeStoreSharingLocation``, whatever the declared capabilities say.
    public static let sharedLocation = StoreCapabilities(rawValue: 1 << 2)
    /// Everything.
    public static let all: StoreCapabilities = [.persistent, .largeValues]

    /// The names of the capabilities in this set, e.g. `persistent, largeValues`.
    public var names: String {
        var names: [String] = []
        if contains(.persistent) { names.append("persistent") }
        if contains(.largeValues) { names.append("largeValues") }
        if contains(.sharedLocation) { names.append("sharedLocation") }
        return names.joined(separator: ", ")
    }
}

/// The two tiers of the suite.
public enum ConformanceTier: String, Sendable, Hashable, CaseIterable {
    /// The store contract alone.
    case store
    /// The shared sync logic over the store with an in-memory remote.
    case sync
    /// Seeded random sequences of opens, reopens, transactions and reads, compared step by step
    /// with the reference store; ``ConformanceSuite/seed`` and ``ConformanceSuite/randomSteps``
    /// choose them.
    case random
    /// Every tier.
    case all
}

/// A named group of cases of one tier.
public struct ConformanceGroup: Sendable {
    /// The group's name, e.g. `crud`.
    public let name: String
    /// Its tier.
    public let tier: ConformanceTier
    let cases: [ConformanceCase]

    init(_ name: String, tier: ConformanceTier, cases: [ConformanceCase]) {
        self.name = name
        self.tier = tier
        self.cases = cases
    }

    func run(_ suite: ConformanceSuite) async -> GroupResult {
        var results: [CaseResult] = []
        for testCase in cases {
            results.append(await testCase.run(suite))
        }
        return GroupResult(group: name, tier: tier, cases: results)
    }
}

/// One case: a name, the capabilities it needs, and its body.
struct ConformanceCase: Sendable {
    let name: String
    let requires: StoreCapabilities
    let body: @Sendable (CaseContext) async throws -> Void

    init(_ name: String, requires: StoreCapabilities = [], body: @escaping @Sendable (CaseContext) async throws -> Void)
    {
        self.name = name
        self.requires = requires
        self.body = body
    }

    func run(_ suite: ConformanceSuite) async -> CaseResult {
        var available = suite.capabilities.subtracting(.sharedLocation)
        if suite.makeStoreSharingLocation != nil { available.insert(.sharedLocation) }
        let missing = requires.subtracting(available)
        guard missing.isEmpty else {
            let reason =
                missing == .sharedLocation
                ? "no second store over one location was given for \(suite.storeName) (ConformanceSuite.makeStoreSharingLocation)"
                : "\(suite.storeName) does not declare the capability \(missing.names)"
            return CaseResult(name: name, outcome: .skipped(reason))
        }
        let context = CaseContext(suite: suite, caseName: name)
        do {
            try await body(context)
        } catch {
            context.fail("stopped by an error: \(CaseContext.describe(error))")
        }
        context.closeStores()
        let failures = context.failures
        return CaseResult(name: name, outcome: failures.isEmpty ? .passed : .failed(failures))
    }
}

/// The result of one case.
public struct CaseResult: Sendable, Hashable {
    /// How a case ended.
    public enum Outcome: Sendable, Hashable {
        /// Every expectation held.
        case passed
        /// One message per failed expectation, naming operation, table and key.
        case failed([String])
        /// Not run, with the reason.
        case skipped(String)
    }

    /// The case's name.
    public let name: String
    /// How it ended.
    public let outcome: Outcome
}

/// The results of one group.
public struct GroupResult: Sendable, Hashable, CustomStringConvertible {
    /// The group's name.
    public let group: String
    /// The group's tier.
    public let tier: ConformanceTier
    /// One result per case.
    public let cases: [CaseResult]

    /// Cases that passed.
    public var passed: Int { cases.filter { $0.outcome == .passed }.count }
    /// Cases that failed.
    public var failed: Int {
        cases.filter {
            if case .failed = $0.outcome { return true }
            return false
        }.count
    }
    /// Cases that were skipped.
    public var skipped: Int {
        cases.filter {
            if case .skipped = $0.outcome { return true }
            return false
        }.count
    }

    /// Every failure message, prefixed by its case name.
    public var failureMessages: [String] {
        cases.flatMap { result -> [String] in
            if case .failed(let messages) = result.outcome { return messages.map { "\(result.name): \($0)" } }
            return []
        }
    }

    /// One line: `PASS crud (12 passed)` or `FAIL query (1 failed, 30 passed)` followed by the messages.
    public var description: String {
        var counts = ["\(passed) passed"]
        if failed > 0 { counts.insert("\(failed) failed", at: 0) }
        if skipped > 0 { counts.append("\(skipped) skipped") }
        var lines = ["\(failed > 0 ? "FAIL" : "PASS") \(tier.rawValue)/\(group) (\(counts.joined(separator: ", ")))"]
        lines += failureMessages.map { "  - \($0)" }
        for result in cases {
            if case .skipped(let reason) = result.outcome { lines.append("  ~ \(result.name) skipped: \(reason)") }
        }
        return lines.joined(separator: "\n")
    }
}

/// Totals over a run.
public struct ConformanceSummary: Sendable, Hashable, CustomStringConvertible {
    /// Cases that passed.
    public var passed = 0
    /// Cases that failed.
    public var failed = 0
    /// Cases that were skipped.
    public var skipped = 0

    /// Empty totals.
    public init() {}

    mutating func add(_ result: GroupResult) {
        passed += result.passed
        failed += result.failed
        skipped += result.skipped
    }

    /// `N passed, N failed, N skipped`.
    public var description: String { "\(passed) passed, \(failed) failed, \(skipped) skipped" }
}
