import OfflineSync

/// How big each scenario is. ``full`` is the full size of the benchmark suite; ``scaled(records:)``
/// shrinks every scenario in proportion for a quick run.
public struct BenchmarkSize: Sendable, Hashable, Codable {
    /// Rows in the table for pulls, queries, lookups and purge.
    public var records: Int
    /// Inserts in the one-batch enqueue scenario.
    var batchInserts: Int
    /// Inserts in the one-durable-transaction-each enqueue scenario.
    var durableInserts: Int
    /// Queued operations pushed.
    var pushOperations: Int
    /// Records changed on the server before the incremental pull.
    var changedRecords: Int
    /// Random-id lookups.
    public var lookups: Int
    /// Repetitions of the top-50 query.
    public var queries: Int
    /// Repetitions of the cold open.
    var opens: Int

    /// Creates a size.
    init(
        records: Int, batchInserts: Int, durableInserts: Int, pushOperations: Int, changedRecords: Int,
        lookups: Int, queries: Int, opens: Int
    ) {
        self.records = records
        self.batchInserts = batchInserts
        self.durableInserts = durableInserts
        self.pushOperations = pushOperations
        self.changedRecords = changedRecords
        self.lookups = lookups
        self.queries = queries
        self.opens = opens
    }

    /// The full size: 100,000 records, 10,000 batched inserts, 1,000 durable inserts, 10,000
    /// pushed operations, 1,000 changed records.
    public static let full = BenchmarkSize(
        records: 100_000, batchInserts: 10_000, durableInserts: 1_000,
        pushOperations: 10_000, changedRecords: 1_000, lookups: 10_000,
        queries: 20, opens: 10)

    /// Every scenario scaled to `records` rows (the others keep their proportion to 100,000,
    /// except durable inserts: 1,000 from 20,000 records up, since each one waits for a flush to
    /// disk, whose time varies too much for a few hundred to give a ratio that reproduces; and
    /// changed records: 1,000 from 20,000 records up, since an incremental pull of 200 took
    /// about 0.3 ms, too short for two runs to agree within 15 %).
    public static func scaled(records: Int) -> BenchmarkSize {
        let records = max(records, 1_000)
        func part(_ fraction: Int) -> Int { max(records / fraction, 10) }
        return BenchmarkSize(
            records: records, batchInserts: part(10), durableInserts: min(part(20), 1_000),
            pushOperations: part(10), changedRecords: max(part(100), min(part(20), 1_000)), lookups: part(10),
            queries: 20, opens: 10)
    }
}

/// One measured run being prepared: set-up is done, ``run()`` is what gets timed.
public final class Trial {
    /// How many operations ``run()`` performs.
    let operations: Int
    /// `true` when ``run()`` only reads, so it can run again on the same set-up and do the same
    /// work: the runner then repeats it until the measured time is long enough to be stable
    /// (see ``ScenarioRunner``).
    let repeatable: Bool
    private let body: () async throws -> Void
    private let rearm: (() async throws -> Void)?
    private var teardown: () async throws -> Void

    /// A trial whose measured part is `body` and whose clean-up is `teardown` (which may stop
    /// servers or tasks the set-up started); `repeatable` when `body` only reads. A trial that
    /// writes can give `rearm`, which makes its set-up ready for `body` to do the same work
    /// again (outside the measured part): the runner then runs it again on the same set-up
    /// instead of setting up a new trial (see ``ScenarioRunner``).
    init(
        operations: Int, repeatable: Bool = false, body: @escaping () async throws -> Void,
        rearm: (() async throws -> Void)? = nil, teardown: @escaping () async throws -> Void
    ) {
        self.operations = operations
        self.repeatable = repeatable
        self.body = body
        self.rearm = rearm
        self.teardown = teardown
    }

    /// The measured part.
    public func run() async throws {
        try await body()
    }

    /// Whether ``run()`` can run again on this set-up: it only reads, or ``prepareAgain()``
    /// makes it ready.
    var canRunAgain: Bool { repeatable || rearm != nil }

    /// Makes the set-up ready for another ``run()`` (not measured; nothing for a trial that only reads).
    func prepareAgain() async throws {
        try await rearm?()
    }

    /// Closes stores and baselines and removes the trial's directory.
    public func finish() async throws {
        try await teardown()
    }

    /// Makes ``finish()`` also run `cleanup`, after the scenario's own teardown (even when it throws).
    func adding(cleanup: @escaping () -> Void) -> Trial {
        let teardown = self.teardown
        self.teardown = {
            defer { cleanup() }
            try await teardown()
        }
        return self
    }
}

/// A benchmark scenario: the same work prepared over a store and over a raw baseline.
public struct BenchmarkScenario: Sendable {
    /// A short stable identifier, e.g. `pull-full-1000`.
    public var id: String
    /// The row title in reports.
    var title: String
    /// The unit of ``Measurement/operations`` (`rows`, `ops`, `queries` …).
    var unit: String
    /// The durability both sides run with.
    var durability: RawDurability
    /// For SQLCipher, whether this scenario opens with the passphrase.
    var usesPassphrase: Bool
    /// Backends this scenario applies to (`nil`: all).
    var backends: Set<String>?
    /// Prepares a trial over a (closed, new) store.
    var prepareStore: @Sendable (any LocalStore, BenchmarkSize) async throws -> Trial
    /// Prepares the same work over a (new) raw baseline, or `nil` when it has no raw equivalent.
    var prepareBaseline: (@Sendable (any RawBaseline, BenchmarkSize) throws -> Trial)?

    /// Creates a scenario.
    init(
        id: String, title: String, unit: String, durability: RawDurability = .normal,
        usesPassphrase: Bool = false, backends: Set<String>? = nil,
        prepareStore: @escaping @Sendable (any LocalStore, BenchmarkSize) async throws -> Trial,
        prepareBaseline: (@Sendable (any RawBaseline, BenchmarkSize) throws -> Trial)?
    ) {
        self.id = id
        self.title = title
        self.unit = unit
        self.durability = durability
        self.usesPassphrase = usesPassphrase
        self.backends = backends
        self.prepareStore = prepareStore
        self.prepareBaseline = prepareBaseline
    }

    /// Prepares this scenario over a new store of `backend` in a new directory under `workDirectory`;
    /// the trial's ``Trial/finish()`` removes the directory.
    public func storeTrial(on backend: BenchmarkBackend, size: BenchmarkSize, under workDirectory: String) async throws
        -> Trial
    {
        let location = try makeLocation(under: workDirectory)
        do {
            let trial = try await prepareStore(try backend.makeStore(location), size)
            return trial.adding { location.removeDirectory() }
        } catch {
            location.removeDirectory()
            throw error
        }
    }

    /// Prepares this scenario over `backend`'s raw baseline in a new directory, or `nil` when the
    /// backend or the scenario has none.
    public func baselineTrial(on backend: BenchmarkBackend, size: BenchmarkSize, under workDirectory: String)
        async throws -> Trial?
    {
        guard let makeBaseline = backend.makeBaseline, let prepareBaseline else { return nil }
        let location = try makeLocation(under: workDirectory)
        do {
            let trial = try prepareBaseline(try makeBaseline(location), size)
            return trial.adding { location.removeDirectory() }
        } catch {
            location.removeDirectory()
            throw error
        }
    }

    /// Whether ``baselineTrial(on:size:under:)`` has a raw baseline to prepare on `backend`.
    public func measuresBaseline(on backend: BenchmarkBackend) -> Bool {
        backend.makeBaseline != nil && prepareBaseline != nil
    }

    private func makeLocation(under workDirectory: String) throws -> StoreLocation {
        try StoreLocation.makeTemporary(under: workDirectory, durability: durability, usesPassphrase: usesPassphrase)
    }

    /// Whether the scenario runs on `backend`.
    public func applies(to backend: String) -> Bool {
        backends?.contains(backend) ?? true
    }
}
