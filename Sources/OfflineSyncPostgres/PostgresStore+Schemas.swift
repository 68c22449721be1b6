import OfflineSync

extension PostgresStore {
    /// `true` when the PostgreSQL schema of `settings` exists and holds a store (its schema record
    /// table), without creating anything.
    public static func storeExists(_ settings: PostgresConnectionSettings) throws -> Bool {
        let connection = try connect(settings)
        defer { connection.close() }
        var exists = false
        try connection.run(
            "SELECT 1 FROM pg_tables WHERE schemaname = $1::text AND tablename = $2::text",
            [
                PostgresParameter(.string(settings.schema), as: .text),
                PostgresParameter(.string(PostgresConnection.schemaTable), as: .text),
            ]
        ) { _ in exists = true }
        return exists
    }

    /// Drops the PostgreSQL schema of `settings` with every table in it (nothing when it does not
    /// exist). For scratch stores; the `public` schema is refused.
    public static func dropSchema(_ settings: PostgresConnectionSettings) throws {
        guard settings.schema != "public" else {
            throw OfflineSyncError(.invalidOperation, "refusing to drop the schema 'public' of \(settings)")
        }
        let connection = try connect(settings)
        defer { connection.close() }
        try connection.execute("DROP SCHEMA IF EXISTS \(PostgresTableLayout.quote(settings.schema)) CASCADE")
    }

    /// Renames the PostgreSQL schema of `settings` to `newName` (one atomic statement; fails when
    /// `newName` exists), so a store built under a temporary name appears whole or not at all.
    public static func renameSchema(_ settings: PostgresConnectionSettings, to newName: String) throws {
        var renamed = settings
        renamed.schema = newName
        try renamed.validate()
        let connection = try connect(settings)
        defer { connection.close() }
        try connection.execute(
            "ALTER SCHEMA \(PostgresTableLayout.quote(settings.schema)) RENAME TO \(PostgresTableLayout.quote(newName))"
        )
    }

    private static func connect(_ settings: PostgresConnectionSettings) throws -> PostgresConnection {
        try settings.validate()
        return try PostgresConnection(parameters: try settings.connectionParameters(), location: settings.description)
    }
}
