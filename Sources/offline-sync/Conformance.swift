public import ArgumentParser
import Foundation
import Logging
import OfflineSync
import OfflineSyncConformance

/// `offline-sync conformance`: run the conformance suite on a backend.
struct Conformance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the conformance suite on a store backend; exit code 1 when a case fails.",
        discussion: """
            Every case gets a new, empty store at a fresh location derived from the URL: a new \
            directory next to the given path (removed afterwards), with the same options. The given \
            path itself is never touched. The 'sharing' group opens a second store over a case's \
            location (sqlite, sqlcipher, postgres; skipped on memory and lmdb, which one process opens \
            once). Prints one line per group of cases, failures below it, and \
            ends with 'N passed, N failed, N skipped'.

            The random tier runs seeded random sequences of opens, reopens, transactions and \
            reads on the store and on the reference store side by side; a difference is shrunk to \
            a short sequence and printed with the seed and step count that reproduce it.

            Examples:
              offline-sync conformance --store sqlite:/tmp/conformance.sqlite
              offline-sync conformance --store sqlite:/tmp/c.sqlite --tier random \\
                --seed 0xff15eed --steps 100000
              offline-sync conformance --store "lmdb:/tmp/c.lmdb?map-size=64MiB" \\
                --tier store --filter query
              OFFLINE_SYNC_KEY=$(openssl rand -hex 32) offline-sync conformance \\
                --store "sqlcipher:/tmp/c.db?key-env=OFFLINE_SYNC_KEY"
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(
        help:
            "Which tier: store (the store contract), sync (the sync logic over the store), random (seeded random operation sequences compared with the reference store) or all."
    )
    var tier: ConformanceTier = .all
    @Option(help: "Run only the groups whose name contains this text.") var filter: String?
    @Option(
        help:
            "The seed of the generated query corpus and of the random tier's sequences, decimal or 0x-hexadecimal as a failure prints it (default: the suite's fixed seed)."
    )
    var seed: Seed?
    // `.unconditional`: a negative value reaches `validate()`, which states the rule.
    @Option(
        parsing: .unconditional,
        help:
            "How many steps the random tier runs, in sequences of at most 500 steps each on a new store (default \(ConformanceSuite.defaultRandomSteps); e.g. 100000 for a long run)."
    )
    var steps: Int?

    func validate() throws {
        if let steps, steps < 0 { throw ValidationError("--steps must be 0 or more, got \(steps)") }
    }

    func run() async throws {
        let logger = global.start("conformance")
        let configuration = try selection.configuration()
        let groups = ConformanceSuite.groupNames(tier: tier)
        if let filter, !groups.contains(where: { $0.lowercased().contains(filter.lowercased()) }) {
            throw OfflineSyncError(
                .configuration,
                "no \(tier.rawValue)-tier conformance group matches '\(filter)'; groups: \(groups.isEmpty ? "none in this build" : groups.joined(separator: ", "))"
            )
        }
        try StoreRegistry.shared.requireAvailable(configuration.scheme)
        let scratch = try ScratchDirectory(near: StoreAccess.filePath(of: configuration), purpose: "conformance")
        defer { scratch.remove() }
        logger.debug("conformance scratch directory \(scratch.url.path)")
        // The location of each store made, so that the `sharing` group can open a second
        // instance over it (every backend but memory, which has no location, and LMDB, which a
        // process opens once).
        let locations = Locked<[ObjectIdentifier: StoreConfiguration]>([:])
        var suite = ConformanceSuite(storeName: configuration.scheme) {
            let location = try scratch.freshLocation(for: configuration)
            let store = try StoreRegistry.shared.makeStore(location)
            locations.withLock { $0[ObjectIdentifier(store)] = location }
            return store
        }
        if ![StoreScheme.memory.name, "lmdb"].contains(configuration.scheme) {
            suite.makeStoreSharingLocation = { store in
                guard let location = locations.withLock({ $0[ObjectIdentifier(store)] }) else {
                    throw OfflineSyncError(.invalidOperation, "the conformance suite asked to share a store it did not make")
                }
                let other = try StoreRegistry.shared.makeStore(location)
                locations.withLock { $0[ObjectIdentifier(other)] = location }
                return other
            }
        }
        if let seed { suite.seed = seed.value }
        if let steps { suite.randomSteps = steps }
        // A long random run reports its steps at every tenth; the default one takes seconds.
        let progress = Locked(
            WorkProgress(
                "conformance random", unit: "steps", total: suite.randomSteps,
                lines: suite.randomSteps > ConformanceSuite.defaultRandomSteps))
        suite.randomProgress = { done, _ in progress.withLock { $0.update(done) } }
        let summary = await suite.run(tier: tier, filter: filter) { result in
            if result.tier == .random { progress.withLock { $0.finish() } }
            print(result)
        }
        print(summary)
        if summary.failed > 0 { throw ExitCode.failure }
    }
}

extension ConformanceTier: ExpressibleByArgument {}

extension Conformance {
    /// A seed as a failure message prints it (`0x…`) or in decimal.
    struct Seed: ExpressibleByArgument {
        let value: UInt64

        init?(argument: String) {
            let text = argument.lowercased()
            guard let value = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text) else {
                return nil
            }
            self.value = value
        }
    }
}
