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

            Examples:
              offline-sync conformance --store sqlite:/tmp/conformance.sqlite
              offline-sync conformance --store "lmdb:/tmp/c.lmdb?map-size=64MiB" \\
                --tier store --filter query
              OFFLINE_SYNC_KEY=$(openssl rand -hex 32) offline-sync conformance \\
                --store "sqlcipher:/tmp/c.db?key-env=OFFLINE_SYNC_KEY"
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(help: "Which tier: store (the store contract), sync (the sync logic over the store) or all.")
    var tier: ConformanceTier = .all
    @Option(help: "Run only the groups whose name contains this text.") var filter: String?
    @Option(help: "The seed of the generated query corpus (default: the suite's fixed seed).") var seed: UInt64?

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
        if let seed { suite.seed = seed }
        let summary = await suite.run(tier: tier, filter: filter) { print($0) }
        print(summary)
        if summary.failed > 0 { throw ExitCode.failure }
    }
}

extension ConformanceTier: ExpressibleByArgument {}
