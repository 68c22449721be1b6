public import OfflineSync

extension StoreScheme {
    /// `lmdb:PATH[?map-size=1GiB&max-map-size=16GiB&sync=full|meta|none]` — an LMDB environment,
    /// opened by ``LMDBStore/init(configuration:)``; sizes as `ByteSize` reads them,
    /// `sync` is ``LMDBStore/Durability``.
    public static let lmdb = StoreScheme(
        "lmdb", summary: "an LMDB environment",
        path: .required,
        options: [
            .size("map-size", summary: "the initial map size, e.g. 64MiB"),
            .size("max-map-size", summary: "the largest the map may grow to, e.g. 16GiB"),
            .durability(LMDBStore.Durability.self),
        ],
        example: "lmdb:./data/store.lmdb?map-size=1GiB&sync=full",
        validate: { _ = try LMDBStore.Options(configuration: $0) })
}

extension LMDBStore.Durability: StoreChoice {
    /// One line for help texts.
    public var summary: String {
        switch self {
        case .full: "sync data and meta pages on commit"
        case .noMetaSync: "skip the meta-page sync"
        case .noSync: "no sync"
        }
    }
}

extension LMDBStore.Options {
    /// The options of an `lmdb:` configuration: the defaults, with the map sizes and durability
    /// it names. A `map-size` above the default maximum raises the maximum to it; a
    /// `max-map-size` below `map-size` is refused.
    public init(configuration: StoreConfiguration) throws {
        self.init()
        let mapSize = try configuration.size("map-size")
        let maxMapSize = try configuration.size("max-map-size")
        if let mapSize, let maxMapSize, maxMapSize < mapSize {
            throw OfflineSyncError(
                .configuration,
                "the lmdb: option max-map-size (\(ByteSize.format(maxMapSize))) is smaller than map-size (\(ByteSize.format(mapSize))); raise max-map-size or lower map-size"
            )
        }
        if let mapSize { initialMapSize = mapSize }
        if let maxMapSize { maximumMapSize = maxMapSize }
        if mapSize != nil, maxMapSize == nil { maximumMapSize = max(maximumMapSize, initialMapSize) }
        durability = try configuration.choice("sync", default: .full)
    }
}

extension LMDBStore {
    /// Registers the `lmdb:` scheme (`StoreScheme.lmdb`) with `registry`, as any
    /// backend registers its own.
    public static func register(in registry: StoreRegistry = .shared) {
        registry.register(.lmdb) { try LMDBStore(configuration: $0) }
    }

    /// A closed store for an `lmdb:` configuration.
    public convenience init(configuration: StoreConfiguration) throws {
        try self.init(path: try configuration.requirePath(), options: try Options(configuration: configuration))
    }
}
