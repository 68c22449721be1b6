public import OfflineSync

extension StoreScheme {
    /// `postgres://USER@HOST:PORT/DATABASE?schema=NAME[&password-env=VAR&sslmode=MODE&connect-timeout=S]`
    /// — a ``PostgresStore`` (see ``PostgresConnectionSettings``). The password never goes in the
    /// URL: it comes from `PGPASSWORD`, `password-env=VAR` or `~/.pgpass`.
    public static let postgres = StoreScheme(
        "postgres",
        summary: "a schema in a PostgreSQL database (password from PGPASSWORD, password-env=VAR or ~/.pgpass)",
        path: .required,
        options: [
            StoreOption(
                "schema", summary: "the PostgreSQL schema holding the tables (created on first open); default public"),
            StoreOption("password-env", summary: "the environment variable holding the password"),
            StoreOption("sslmode", values: PostgresConnectionSettings.sslModes, summary: "libpq's SSL mode"),
            StoreOption("connect-timeout", summary: "seconds to wait for a connection; default 10"),
        ],
        example: "postgres://app@127.0.0.1:5432/appdb?schema=offline_sync",
        validate: { _ = try PostgresConnectionSettings($0) })
}

extension PostgresStore {
    /// Registers the `postgres:` scheme (``OfflineSync/StoreScheme/postgres``) with `registry`, as
    /// any backend registers its own.
    public static func register(in registry: StoreRegistry = .shared) {
        registry.register(.postgres) { try PostgresStore(configuration: $0) }
    }

    /// Creates a closed store from a `postgres:` configuration (see ``PostgresConnectionSettings``).
    public convenience init(configuration: StoreConfiguration) throws {
        self.init(settings: try PostgresConnectionSettings(configuration))
    }
}
