import Foundation
import OfflineSync

extension PostgresConnection {
    /// The table holding each declared table's schema as JSON, so the stored schema (types
    /// included) is known on reopen without reading PostgreSQL's catalog.
    static let schemaTable = "__offline_sync_schema"

    /// Creates or widens the tables of `schema` in the PostgreSQL schema `schemaName`, in one
    /// transaction holding the store's write lock (so stores opening the same schema at once, in
    /// any process, install one after the other), and returns the stored, widened schema: new
    /// tables are created, new columns added with `ALTER TABLE ADD COLUMN` (existing rows read them
    /// as null), new indexes created; nothing is dropped or retyped.
    func install(_ schema: StoreSchema, in schemaName: String, lockKey: Int64) throws -> StoreSchema {
        if schema.tables.contains(where: { Identifier.folded($0.name) == PostgresConnection.schemaTable }) {
            throw OfflineSyncError(
                .invalidName,
                "table name '\(PostgresConnection.schemaTable)' is used by the PostgreSQL backend for its own schema record; choose another name"
            )
        }
        try execute("BEGIN; SELECT pg_advisory_xact_lock(\(lockKey))")
        do {
            var exists = false
            try run(
                "SELECT 1 FROM pg_namespace WHERE nspname = $1::text",
                [PostgresParameter(.string(schemaName), as: .text)]
            ) {
                _ in exists = true
            }
            if !exists { try execute("CREATE SCHEMA \(PostgresTableLayout.quote(schemaName))") }
            let record =
                "\(PostgresTableLayout.quote(schemaName)).\(PostgresTableLayout.quote(PostgresConnection.schemaTable))"
            try execute(
                "CREATE TABLE IF NOT EXISTS \(record) (\"name\" text COLLATE \"C\" PRIMARY KEY, \"position\" int8 NOT NULL, \"declaration\" text NOT NULL)"
            )
            let stored = try storedSchema(record)
            let merged = try stored.merged(with: schema)
            try merged.validate()
            for (position, table) in merged.tables.enumerated() {
                let previous = stored.table(named: table.name)
                guard previous != table else { continue }
                let layout = PostgresTableLayout(table, in: schemaName)
                if let previous {
                    for column in table.columns where previous.column(named: column.name) == nil {
                        try execute(layout.addColumnSQL(column))
                    }
                } else {
                    try execute(layout.createSQL)
                }
                for index in table.indexes where !(previous?.indexes.contains(index) ?? false) {
                    try execute(layout.createIndexSQL(index))
                }
                let declaration = String(decoding: try JSONEncoder().encode(table), as: UTF8.self)
                try run(
                    "INSERT INTO \(record) (\"name\", \"position\", \"declaration\") VALUES ($1::text, $2::int8, $3::text) ON CONFLICT (\"name\") DO UPDATE SET \"declaration\" = EXCLUDED.\"declaration\"",
                    [
                        PostgresParameter(.string(table.name), as: .text),
                        PostgresParameter(.int(Int64(position)), as: .int8),
                        PostgresParameter(.string(declaration), as: .text),
                    ])
            }
            try execute("COMMIT")
            return merged
        } catch {
            rollBack()
            throw error
        }
    }

    /// Ends a failed transaction; a failure here (a lost connection) leaves nothing to undo.
    func rollBack() {
        _ = try? execute("ROLLBACK")
    }

    /// The schema recorded in the database (empty for a new schema).
    private func storedSchema(_ record: String) throws -> StoreSchema {
        var tables: [TableSchema] = []
        try run("SELECT \"name\", \"declaration\" FROM \(record) ORDER BY \"position\", \"name\"") { row in
            do {
                tables.append(try JSONDecoder().decode(TableSchema.self, from: Data(row.string(1).utf8)))
            } catch {
                throw OfflineSyncError(
                    .storage,
                    "the schema record of table '\(row.string(0))' in \(record) on \(location) cannot be read (\(error)); the schema was not written by this version of OfflineSync or is damaged"
                )
            }
        }
        return StoreSchema(tables)
    }
}
