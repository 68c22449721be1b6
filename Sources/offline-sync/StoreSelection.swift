import ArgumentParser
import Foundation
import OfflineSync
import OfflineSyncStores

/// The `--store` option: a store URL, `OFFLINE_SYNC_STORE`, or the built-in default.
struct StoreSelection: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: memory:, sqlite:PATH, sqlcipher:PATH?key-env=VAR, lmdb:PATH (default: $OFFLINE_SYNC_STORE, then \(StoreSelection.builtInDefault)).",
            valueName: "url"))
    var store: String?

    /// The store URL to use.
    var text: String {
        store ?? BuiltInStores.defaultStore(environment: ProcessInfo.processInfo.environment)
    }

    /// The parsed configuration.
    func configuration() throws -> StoreConfiguration {
        try StoreRegistry.shared.configuration(parsing: text)
    }

    static var builtInDefault: String { BuiltInStores.defaultStore(environment: [:]) }
}
