import ArgumentParser
import OfflineSync

/// `offline-sync bench`: reserved for the side-by-side benchmarks.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Side-by-side benchmarks of the store backends (reserved; delivered with the benchmarks).",
        discussion: """
        This build does not include the benchmarks yet.

        Example:
          offline-sync bench --help
        """)

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        throw OfflineSyncError(.unsupported, "'offline-sync bench' is not available in this build; the benchmarks have not been added to the tool yet")
    }
}
