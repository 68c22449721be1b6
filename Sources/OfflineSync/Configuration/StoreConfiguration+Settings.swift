extension StoreConfiguration {
    /// The typed settings of an `sqlite:` configuration.
    public struct SQLiteSettings: Sendable, Hashable {
        /// When SQLite syncs the file to disk.
        public enum Durability: String, Sendable, Hashable, CaseIterable {
            /// `PRAGMA synchronous=FULL`: a returned commit survives power loss.
            case full
            /// `PRAGMA synchronous=NORMAL` (WAL): a returned commit survives a process crash,
            /// the last commits may be lost on power loss.
            case normal
        }

        /// The database file.
        public var path: String
        /// The `sync` option, or `nil` when not given (the backend's default applies).
        public var durability: Durability?

        /// Reads the settings of an `sqlite:` (or `sqlcipher:`) configuration.
        public init(_ configuration: StoreConfiguration) throws {
            path = try configuration.requirePath()
            durability = try configuration.option("sync").map { _ in
                try configuration.choice("sync", default: Durability.full)
            }
        }

        static let syncOption = StoreOption(
            "sync", values: Durability.allCases.map(\.rawValue),
            summary:
                "full: every commit is synced to disk; normal: a commit survives a crash of the process, not a power loss"
        )
    }

    /// The typed settings of an `sqlcipher:` configuration: those of SQLite plus where the key is.
    public struct SQLCipherSettings: Sendable, Hashable {
        /// The database file.
        public var path: String
        /// The `sync` option, or `nil` when not given (the backend's default applies).
        public var durability: SQLiteSettings.Durability?
        /// Where the key is read from (`key-env` or `key-file`, exactly one of them).
        public var keySource: KeySource

        /// Reads the settings of an `sqlcipher:` configuration. Throws unless exactly one of
        /// `key-env` and `key-file` is given. The key itself is read by ``KeySource/load()``.
        public init(_ configuration: StoreConfiguration) throws {
            let sqlite = try SQLiteSettings(configuration)
            path = sqlite.path
            durability = sqlite.durability
            switch (configuration.option("key-env"), configuration.option("key-file")) {
            case (let variable?, nil):
                guard !variable.isEmpty else {
                    throw OfflineSyncError(
                        .configuration,
                        "the sqlcipher: option key-env is empty; name the environment variable that holds the key, e.g. key-env=STORE_KEY"
                    )
                }
                guard KeySource.isVariableName(variable) else {
                    throw OfflineSyncError(
                        .configuration,
                        "the sqlcipher: option key-env must name an environment variable (letters, digits and '_', not starting with a digit), not hold the key itself; the value is not shown because it may be a key"
                    )
                }
                keySource = .environment(variable)
            case (nil, let file?):
                guard !file.isEmpty else {
                    throw OfflineSyncError(
                        .configuration,
                        "the sqlcipher: option key-file is empty; name the file that holds the key, e.g. key-file=./store.key"
                    )
                }
                keySource = .file(file)
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

    /// The typed settings of an `lmdb:` configuration.
    public struct LMDBSettings: Sendable, Hashable {
        /// How LMDB syncs commits to disk.
        public enum Durability: String, Sendable, Hashable, CaseIterable {
            /// Data and meta pages are synced on every commit (the default).
            case full
            /// `MDB_NOMETASYNC`: the meta page is not synced; the last commit may be lost on power loss.
            case meta
            /// `MDB_NOSYNC`: nothing is synced; commits since the last OS flush may be lost on power loss.
            case none
        }

        /// The environment's location.
        public var path: String
        /// The initial map size in bytes (`map-size`), or `nil` for the backend's default.
        public var mapSize: Int?
        /// The largest map size in bytes that growth may reach (`max-map-size`), or `nil` for no limit.
        public var maxMapSize: Int?
        /// The `sync` option; ``Durability/full`` when not given.
        public var durability: Durability

        /// Reads the settings of an `lmdb:` configuration; sizes take `B`, `KiB`, `MiB`, `GiB`,
        /// `TiB` (powers of 1024) or `KB`, `MB`, `GB`, `TB` (powers of 1000).
        public init(_ configuration: StoreConfiguration) throws {
            path = try configuration.requirePath()
            mapSize = try configuration.size("map-size")
            maxMapSize = try configuration.size("max-map-size")
            durability = try configuration.choice("sync", default: .full)
            if let mapSize, let maxMapSize, maxMapSize < mapSize {
                throw OfflineSyncError(
                    .configuration,
                    "the lmdb: option max-map-size (\(ByteSize.format(maxMapSize))) is smaller than map-size (\(ByteSize.format(mapSize))); raise max-map-size or lower map-size"
                )
            }
        }
    }

    /// The value of an option whose values are an enumeration, or `fallback` when it is absent.
    public func choice<Choice: RawRepresentable & CaseIterable>(_ name: String, default fallback: Choice) throws
        -> Choice
    where Choice.RawValue == String {
        guard let text = option(name) else { return fallback }
        guard let value = Choice(rawValue: text.lowercased()) else {
            throw OfflineSyncError(
                .configuration,
                "the \(scheme): store option '\(name)' is '\(text.prefix(40))'; it must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return value
    }

    /// The value of a size option in bytes (see ``ByteSize``), or `nil` when it is absent.
    public func size(_ name: String) throws -> Int? {
        guard let text = option(name) else { return nil }
        do {
            return try ByteSize.parse(text)
        } catch let error as OfflineSyncError {
            throw OfflineSyncError(.configuration, "the \(scheme): store option '\(name)' \(error.message)")
        }
    }
}
