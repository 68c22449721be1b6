public import OfflineSync

extension StoreScheme {
    /// `sqlite:PATH[?sync=full|normal]` — an SQLite file, opened by
    /// ``SQLiteStore/init(configuration:)``; `sync` is ``SQLStoreOptions/Durability``.
    public static let sqlite = StoreScheme(
        "sqlite", summary: "an SQLite database file",
        path: .required,
        options: [.durability(SQLStoreOptions.Durability.self)],
        example: "sqlite:./data/store.sqlite?sync=normal",
        validate: { _ = try SQLStoreOptions(configuration: $0) })
}

extension SQLStoreOptions.Durability: StoreChoice {
    /// `full`, then `normal`, as the `sync` option lists them.
    public static var allCases: [Self] { [.full, .normal] }

    /// One line for help texts.
    public var summary: String {
        switch self {
        case .full: "every commit is synced to disk"
        case .normal: "a commit survives a crash of the process, not a power loss"
        }
    }
}

extension SQLStoreOptions {
    /// The options of an `sqlite:` or `sqlcipher:` configuration: the defaults, with the
    /// durability its `sync` option names, when given.
    public init(configuration: StoreConfiguration) throws {
        self.init()
        durability = try configuration.choice("sync", default: durability)
    }
}

extension SQLiteStore {
    /// Registers the `sqlite:` scheme (`StoreScheme.sqlite`) with `registry`, as any
    /// backend registers its own.
    public static func register(in registry: StoreRegistry = .shared) {
        registry.register(.sqlite) { try SQLiteStore(configuration: $0) }
    }

    /// A closed store for an `sqlite:` configuration.
    public convenience init(configuration: StoreConfiguration) throws {
        self.init(path: try configuration.requirePath(), options: try SQLStoreOptions(configuration: configuration))
    }
}
