import Foundation
import OfflineSync

extension Connection {
    /// The table holding each declared table's schema as JSON, so the stored schema (types
    /// included) is known on reopen without parsing SQLite's DDL.
    static let schemaTable = "__offline_sync_schema"

    /// Creates or widens the tables of `schema` in one transaction and returns the stored,
    /// widened schema: new tables are created, new columns added with `ALTER TABLE ADD COLUMN`
    /// (existing rows read them as null), new indexes created; nothing is dropped or retyped.
    func install(_ schema: StoreSchema) throws -> StoreSchema {
        if schema.tables.contains(where: { Identifier.folded($0.name) == Connection.schemaTable }) {
            throw OfflineSyncError(
                .invalidName,
                "table name '\(Connection.schemaTable)' is used by the SQLite backend for its own schema record; choose another name"
            )
        }
        try execute("BEGIN IMMEDIATE")
        do {
            try execute(
                "CREATE TABLE IF NOT EXISTS \(SQL.quote(Connection.schemaTable)) (\"name\" TEXT PRIMARY KEY NOT NULL, \"declaration\" TEXT NOT NULL)"
            )
            let stored = try storedSchema()
            let merged = try stored.merged(with: schema)
            try merged.validate()
            for table in stored.tables { try requireColumns(of: table) }
            for table in merged.tables {
                let previous = stored.table(named: table.name)
                guard previous != table else { continue }
                let layout = TableLayout(table)
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
                // UPDATE keeps the rowid, which orders the tables as they were first declared.
                let record =
                    previous == nil
                    ? "INSERT INTO \(SQL.quote(Connection.schemaTable)) (\"declaration\", \"name\") VALUES (?1, ?2)"
                    : "UPDATE \(SQL.quote(Connection.schemaTable)) SET \"declaration\" = ?1 WHERE \"name\" = ?2"
                try execute(record, [.string(declaration), .string(table.name)])
            }
            try execute("COMMIT")
            return merged
        } catch {
            rollBack()
            throw error
        }
    }

    /// Throws unless the SQL table of `table` has every column its stored declaration names,
    /// with the SQL type it was created with. A bit flipped inside SQLite's own schema passes
    /// SQLite's integrity checks: in a column's name, SQLite then reads the double-quoted name
    /// in every statement as a string literal (its legacy "double-quoted strings" rule), so each
    /// row reads the column's name as its value; in a type, values are converted on the way in
    /// by another affinity.
    private func requireColumns(of table: TableSchema) throws {
        var present: [String: String] = [:]
        try forEachRow("PRAGMA table_info(\(SQL.quote(table.name)))", cached: false) { row in
            present[row.text(1)] = row.text(2)
        }
        let expected = [("id", "TEXT")] + table.columns.map { ($0.name, TableLayout.sqlType($0.type)) }
        let missing = expected.filter { present[$0.0]?.uppercased() != $0.1 }.map(\.0)
        guard missing.isEmpty else {
            let what = missing.map { "'\($0)'" }.joined(separator: ", ")
            throw OfflineSyncError(
                .storage,
                present.isEmpty
                    ? "the store '\(path)' records table '\(table.name)', but its database has no such table: the file is damaged; restore it from a backup, or delete it and pull the data again"
                    : "table '\(table.name)' of the store '\(path)' lacks the column\(missing.count == 1 ? "" : "s") \(what) as its recorded declaration names \(missing.count == 1 ? "it" : "them") (name and SQL type): the file is damaged; restore it from a backup, or delete it and pull the data again"
            )
        }
    }

    /// The schema recorded in the database (empty for a new database).
    private func storedSchema() throws -> StoreSchema {
        var tables: [TableSchema] = []
        try forEachRow(
            "SELECT \"name\", \"declaration\" FROM \(SQL.quote(Connection.schemaTable)) ORDER BY rowid", cached: false
        ) { row in
            do {
                tables.append(try JSONDecoder().decode(TableSchema.self, from: Data(row.text(1).utf8)))
            } catch {
                throw OfflineSyncError(
                    .storage,
                    "the schema record of table '\(row.text(0))' in '\(path)' cannot be read (\(error)); the file was not written by this version of OfflineSync or is damaged"
                )
            }
        }
        return StoreSchema(tables)
    }
}
