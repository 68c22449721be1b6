import ArgumentParser
import Logging
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import OfflineSyncStores

/// `offline-sync rekey`: change the key of an encrypted store.
struct Rekey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the key of an SQLCipher store.",
        discussion: """
            Opens the store with its current key (from the URL's key-env or key-file), re-encrypts \
            it with the key held in the environment variable named by --new-key-env (64 hex digits \
            for a raw key, anything else is a passphrase), then reopens it with the new key to \
            prove it. Keys are never printed or logged.

            Example:
              OLD_KEY=... NEW_KEY=... offline-sync rekey \\
                --store "sqlcipher:./app.db?key-env=OLD_KEY" --new-key-env NEW_KEY
            """)

    @OptionGroup var global: GlobalOptions
    /// Required: re-encrypting is never done to a store chosen by `$OFFLINE_SYNC_STORE` or the
    /// default, which the person may not have meant.
    @Option(
        help: ArgumentHelp(
            "The sqlcipher: store to re-key, with its current key source (required: rekey never falls back to $OFFLINE_SYNC_STORE or the default store).",
            valueName: "url"))
    var store: String
    @Option(help: ArgumentHelp("The environment variable holding the new key.", valueName: "variable"))
    var newKeyEnv: String

    func run() async throws {
        let logger = global.start("rekey")
        let configuration = try StoreSelection.parse(store, option: "--store")
        guard configuration.scheme == StoreScheme.sqlcipher.name else {
            throw OfflineSyncError(
                .configuration,
                "rekey works on sqlcipher: stores only; \(configuration.scheme): stores are not encrypted (use migrate to copy one into an sqlcipher: store)"
            )
        }
        guard KeySource.isVariableName(newKeyEnv) else {
            throw OfflineSyncError(
                .configuration,
                "--new-key-env must name an environment variable (letters, digits and '_'), not hold the key itself; the value is not shown because it may be a key"
            )
        }
        let newKey = try KeySource.environment(newKeyEnv).load()
        let rekeyed = StoreConfiguration(
            scheme: configuration.scheme, path: configuration.path,
            options: configuration.options.filter { $0.name != "key-env" && $0.name != "key-file" } + [
                .init("key-env", newKeyEnv)
            ])

        let (store, _) = try StoreAccess.openExisting(configuration, logger: logger)
        guard let encrypted = store as? SQLCipherStore else {
            try? store.close()
            throw OfflineSyncError(
                .unsupported, "the \(configuration.scheme): backend of this build cannot change keys")
        }
        do {
            try encrypted.rekey(to: SQLCipherKey(newKey))
            try encrypted.close()
        } catch {
            try? encrypted.close()
            throw error
        }
        logger.debug("re-encrypted; reopening with the new key")
        let (check, _) = try StoreAccess.openExisting(rekeyed, logger: logger)
        try check.close()
        print(
            "re-encrypted \(configuration.path ?? "") with the \(newKey.kind == .raw ? "raw key" : "passphrase") in \(newKeyEnv); open it with \(rekeyed)"
        )
    }
}
