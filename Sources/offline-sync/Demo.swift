import ArgumentParser
import OfflineSync

/// `offline-sync demo`: the offline tutorial, narrated.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Walk through offline sync step by step with an in-process remote service.",
        discussion: """
        Declares a todoitem table, pulls from an in-process remote, goes offline, adds and \
        completes items, closes and reopens the store, shows the pending queue, comes back \
        online, pushes, meets a conflict made by another device and resolves it, pulls, and \
        shows the final state on both sides.

        Examples:
          offline-sync demo
          offline-sync demo --store sqlite:/tmp/demo.sqlite
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection

    func run() async throws {
        _ = global.start("demo")
        throw OfflineSyncError(.unsupported, "the demo is not available in this build: it needs the sync engine (SyncContext, InMemoryRemote), which has not landed yet")
    }
}
