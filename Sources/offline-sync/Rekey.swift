import ArgumentParser
import OfflineSync

/// `offline-sync rekey`: change the key of an encrypted store.
struct Rekey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the key of an SQLCipher store.",
        discussion: """
        Opens the store with its current key (from the URL's key-env or key-file) and re-encrypts \
        it with the key held in the environment variable named by --new-key-env (64 hex digits \
        for a raw key, anything else is a passphrase). Keys are never printed or logged.

        Example:
          OLD_KEY=... NEW_KEY=... offline-sync rekey --store \\
            "sqlcipher:./app.db?key-env=OLD_KEY" --new-key-env NEW_KEY
        """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(help: ArgumentHelp("The environment variable holding the new key.", valueName: "variable"))
    var newKeyEnv: String

    func run() async throws {
        _ = global.start("rekey")
        let configuration = try selection.configuration()
        guard configuration.scheme == StoreScheme.sqlcipher.name else {
            throw OfflineSyncError(.configuration, "rekey works on sqlcipher: stores only; \(configuration.scheme): stores are not encrypted")
        }
        try StoreRegistry.shared.requireAvailable(configuration.scheme)
        throw OfflineSyncError(.unsupported, "rekey is not available in this build: the SQLCipher backend offers no rekey operation yet")
    }
}
