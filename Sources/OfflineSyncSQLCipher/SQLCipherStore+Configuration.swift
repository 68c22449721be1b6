public import OfflineSync
import OfflineSyncSQLite

extension StoreScheme {
    /// `sqlcipher:PATH?key-env=VAR` or `?key-file=PATH[&sync=full|normal]` — an encrypted SQLite
    /// file, opened by ``SQLCipherStore/init(configuration:)``. Exactly one of `key-env` and
    /// `key-file` says where the key is (``SQLCipherStore/keySource(of:)``); the key itself never
    /// goes in the configuration.
    public static let sqlcipher = StoreScheme(
        "sqlcipher", summary: "an SQLCipher (encrypted SQLite) database file",
        path: .required,
        options: [
            StoreOption("key-env", summary: "the environment variable holding the key"),
            StoreOption("key-file", summary: "the file holding the key"),
            .durability(SQLStoreOptions.Durability.self),
        ],
        example: "sqlcipher:./data/store.db?key-env=STORE_KEY",
        validate: { configuration in
            _ = try SQLStoreOptions(configuration: configuration)
            _ = try SQLCipherStore.keySource(of: configuration)
        })
}

extension SQLCipherStore {
    /// Registers the `sqlcipher:` scheme (`StoreScheme.sqlcipher`) with `registry`,
    /// as any backend registers its own.
    public static func register(in registry: StoreRegistry = .shared) {
        registry.register(.sqlcipher) { try SQLCipherStore(configuration: $0) }
    }

    /// A closed store for an `sqlcipher:` configuration; the key is read from its source
    /// (`KeySource.load()`) at every open and dropped after keying the connection.
    public convenience init(configuration: StoreConfiguration) throws {
        let source = try Self.keySource(of: configuration)
        try self.init(
            path: try configuration.requirePath(), options: try SQLStoreOptions(configuration: configuration)
        ) {
            SQLCipherKey(try source.load())
        }
    }

    /// Where an `sqlcipher:` configuration says the key is. Throws unless exactly one of
    /// `key-env` (an environment variable's name, never the key) and `key-file` is given; the
    /// messages never repeat a value that may be a key.
    public static func keySource(of configuration: StoreConfiguration) throws -> OfflineSync.KeySource {
        switch (configuration.option("key-env"), configuration.option("key-file")) {
        case (let variable?, nil):
            guard !variable.isEmpty else {
                throw OfflineSyncError(
                    .configuration,
                    "the sqlcipher: option key-env is empty; name the environment variable that holds the key, e.g. key-env=STORE_KEY"
                )
            }
            guard OfflineSync.KeySource.isVariableName(variable) else {
                throw OfflineSyncError(
                    .configuration,
                    "the sqlcipher: option key-env must name an environment variable (letters, digits and '_', not starting with a digit), not hold the key itself; the value is not shown because it may be a key"
                )
            }
            return .environment(variable)
        case (nil, let file?):
            guard !file.isEmpty else {
                throw OfflineSyncError(
                    .configuration,
                    "the sqlcipher: option key-file is empty; name the file that holds the key, e.g. key-file=./store.key"
                )
            }
            return .file(file)
        case (.some, .some):
            throw OfflineSyncError(
                .configuration, "the sqlcipher: store has both key-env and key-file; give one of them")
        case (nil, nil):
            throw OfflineSyncError(
                .configuration,
                "the sqlcipher: store needs a key: add key-env=VAR (an environment variable holding it) or key-file=PATH (a file holding it); 64 hex digits are a raw 256-bit key, anything else is a passphrase"
            )
        }
    }
}

extension SQLCipherKey {
    /// The SQLCipher key for key material read from a `KeySource`.
    public init(_ key: StoreKey) {
        switch key.kind {
        case .raw: self = .raw(key.bytes)
        case .passphrase: self = .passphrase(bytes: key.bytes)
        }
    }
}
