import Foundation
import OfflineSync

extension PostgresConnection {
    /// The table holding each declared table's schema as JSON, so the stored schema (types
    /// included) is known on reopen without reading PostgreSQL's catalog.
    static let schemaTable = "__offline_sync_schema"
    /// The one-row table holding the schema's generation: a number that every `install` which
    /// changes the schema raises in the same transaction, so a store that another process (or
    /// store instance) widened notices it with one indexed read and reloads its schema.
    static let generationTable = "__offline_sync_generation"

    /// The schema record table of `schemaName`, quoted and qualified.
    static func record(in schemaName: String) -> String {
        "\(PostgresTableLayout.quote(schemaName)).\(PostgresTableLayout.quote(schemaTable))"
    }

    /// `SELECT` of the generation of `schemaName` (see ``generationTable``).
    static func generationSQL(in schemaName: String) -> String {
        "SELECT \"generation\" FROM \(PostgresTableLayout.quote(schemaName)).\(PostgresTableLayout.quote(generationTable))"
    }

    /// The generation of `schemaName` (see ``generationTable``); 0 when the row is missing.
    func generation(in schemaName: String) throws -> Int64 {
        var generation: Int64 = 0
        try run(PostgresConnection.generationSQL(in: schemaName)) { generation = $0.int64(0) }
        return generation
    }

    /// Creates or widens the tables of `schema` in the PostgreSQL schema `schemaName`, in one
    /// transaction holding the store's write lock (so stores opening the same schema at once, in
    /// any process, install one after the other), and returns the stored, widened schema: new
    /// tables are created, new columns added with `ALTER TABLE ADD COLUMN` (existing rows read them
    /// as null), new indexes created; nothing is dropped or retyped.
    func install(_ schema: StoreSchema, in schemaName: String, lockKey: Int64) throws -> (
        schema: StoreSchema, generation: Int64
    ) {
        for reserved in [PostgresConnection.schemaTable, PostgresConnection.generationTable]
        where schema.tables.contains(where: { Identifier.folded($0.name) == reserved }) {
            throw OfflineSyncError(
                .invalidName,
                "table name '\(reserved)' is used by the PostgreSQL backend for its own schema record; choose another name"
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
            let record = PostgresConnection.record(in: schemaName)
            let generationTable =
                "\(PostgresTableLayout.quote(schemaName)).\(PostgresTableLayout.quote(PostgresConnection.generationTable))"
            try execute(
                "CREATE TABLE IF NOT EXISTS \(record) (\"name\" text COLLATE \"C\" PRIMARY KEY, \"position\" int8 NOT NULL, \"declaration\" text NOT NULL); "
                    + "CREATE TABLE IF NOT EXISTS \(generationTable) (\"generation\" int8 NOT NULL); "
                    + "INSERT INTO \(generationTable) (\"generation\") SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM \(generationTable))"
            )
            let stored = try storedSchema(in: schemaName)
            var changed = false
            let merged = try stored.merged(with: schema)
            try merged.validate()
            for (position, table) in merged.tables.enumerated() {
                let previous = stored.table(named: table.name)
                guard previous != table else { continue }
                changed = true
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
            if changed { try execute("UPDATE \(generationTable) SET \"generation\" = \"generation\" + 1") }
            let generation = try self.generation(in: schemaName)
            try execute("COMMIT")
            return (merged, generation)
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
    func storedSchema(in schemaName: String) throws -> StoreSchema {
        let record = PostgresConnection.record(in: schemaName)
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
