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
        try StoreSelection.parse(text, option: store == nil ? nil : "--store")
    }

    /// `text` parsed as a store URL. A scheme this build does not know is reported with the
    /// schemes it knows and where their URL forms are shown: the library's own message tells a
    /// program how to register backends, which a person at the command line cannot do. `option`
    /// names where the URL came from (`--store`, `--to` …; `nil` for `$OFFLINE_SYNC_STORE`).
    static func parse(_ text: String, option: String?) throws -> StoreConfiguration {
        let registry = StoreRegistry.shared
        if let colon = text.firstIndex(of: ":") {
            let scheme = text[..<colon].lowercased()
            if !scheme.isEmpty, !registry.schemes.contains(where: { $0.name == scheme }) {
                let known = registry.schemes.map { $0.name + ":" }.joined(separator: ", ")
                let source = option ?? "$OFFLINE_SYNC_STORE"
                throw OfflineSyncError(
                    .configuration,
                    "unknown store scheme '\(String(scheme.prefix(40)).escapingControlCharacters)' in \(source); this build of offline-sync knows \(known); 'offline-sync --help' shows the URL form of each"
                )
            }
        }
        return try registry.configuration(parsing: text)
    }

    static var builtInDefault: String { BuiltInStores.defaultStore(environment: [:]) }
}
