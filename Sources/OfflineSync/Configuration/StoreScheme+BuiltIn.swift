extension StoreScheme {
    /// `memory:` — an ``InMemoryStore``; nothing survives the process.
    public static let memory = StoreScheme(
        "memory", summary: "an in-memory store (the reference semantics; nothing is persisted)",
        path: .none, example: "memory:")

    /// `sqlite:PATH[?sync=full|normal]` — an SQLite file (see ``StoreConfiguration/SQLiteSettings``).
    public static let sqlite = StoreScheme(
        "sqlite", summary: "an SQLite database file",
        path: .required,
        options: [StoreConfiguration.SQLiteSettings.syncOption],
        example: "sqlite:./data/store.sqlite?sync=normal",
        validate: { _ = try StoreConfiguration.SQLiteSettings($0) })

    /// `sqlcipher:PATH?key-env=VAR` or `?key-file=PATH[&sync=full|normal]` — an encrypted SQLite
    /// file (see ``StoreConfiguration/SQLCipherSettings``).
    public static let sqlcipher = StoreScheme(
        "sqlcipher", summary: "an SQLCipher (encrypted SQLite) database file",
        path: .required,
        options: [
            StoreOption("key-env", summary: "the environment variable holding the key"),
            StoreOption("key-file", summary: "the file holding the key"),
            StoreConfiguration.SQLiteSettings.syncOption,
        ],
        example: "sqlcipher:./data/store.db?key-env=STORE_KEY",
        validate: { _ = try StoreConfiguration.SQLCipherSettings($0) })

    /// `lmdb:PATH[?map-size=1GiB&max-map-size=16GiB&sync=full|meta|none]` — an LMDB environment
    /// (see ``StoreConfiguration/LMDBSettings``).
    public static let lmdb = StoreScheme(
        "lmdb", summary: "an LMDB environment",
        path: .required,
        options: [
            StoreOption("map-size", summary: "the initial map size, e.g. 64MiB"),
            StoreOption("max-map-size", summary: "the largest the map may grow to, e.g. 16GiB"),
            StoreOption(
                "sync", values: StoreConfiguration.LMDBSettings.Durability.allCases.map(\.rawValue),
                summary: "full: sync data and meta pages on commit; meta: skip the meta-page sync; none: no sync"),
        ],
        example: "lmdb:./data/store.lmdb?map-size=1GiB&sync=full",
        validate: { _ = try StoreConfiguration.LMDBSettings($0) })
}
