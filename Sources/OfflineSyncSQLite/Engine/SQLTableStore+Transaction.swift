import OfflineSync

extension SQLTableStore {
    /// The operations of one `write` transaction, valid only while its closure runs.
    final class Transaction: StoreTransaction {
        private let connection: Connection
        private let schema: StoreSchema
        private let layouts: [String: TableLayout]
        /// Cleared when the closure ends; a kept reference then throws instead of touching the
        /// connection outside the store's lock.
        var isActive = true

        init(connection: Connection, schema: StoreSchema, layouts: [String: TableLayout]) {
            self.connection = connection
            self.schema = schema
            self.layouts = layouts
        }

        private func layout(_ table: String) throws -> TableLayout {
            guard isActive else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "a transaction was used after its write closure returned; use the transaction only inside the closure"
                )
            }
            // After some failures (SQLITE_FULL, SQLITE_IOERR …) SQLite rolls the transaction back
            // itself; going on would commit each later statement on its own.
            guard connection.isInTransaction else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the transaction on '\(connection.path)' was rolled back by SQLite after an earlier error; rethrow that error instead of continuing the write closure"
                )
            }
            return try SQLTableStore.layout(table, in: schema, layouts)
        }

        func read(_ query: Query) throws -> QueryResult {
            try SQLTableStore.read(query, on: layout(query.table), connection)
        }

        func lookup(table: String, id: String) throws -> Item? {
            try SQLTableStore.lookup(id, on: layout(table), connection)
        }

        /// One prepared `INSERT` per call, bound and stepped per row, and an `UPDATE` of the same
        /// binding when the id exists; the table layout is looked up once per call, not per row.
        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            let layout = try layout(table)
            let insert = try connection.statement(layout.insertSQL)
            let update = try layout.updateSQL.map { try connection.statement($0) }
            defer { insert.reset() }
            // A failed INSERT costs SQLite a statement rollback, so after a row that existed the
            // next one tries UPDATE first (a page of changed rows, the server's copies after a
            // push), and after a new row INSERT first (a first pull, new local items).
            var expectExisting = false
            var row: [Value] = []
            var order = TableSchema.StoredValueOrder()
            for item in items {
                try layout.schema.normalizedRow(item, origin: origin, into: &row, order: &order)
                let arguments = { [row] in [.string(item.id)] + row }
                func runUpdate(_ update: Statement) throws {
                    try update.bindRow(id: item.id, values: row)
                    _ = try update.step(arguments: arguments())
                    update.reset()
                }
                if expectExisting, let update {
                    try runUpdate(update)
                    if connection.changes > 0 { continue }
                    expectExisting = false
                }
                try insert.bindRow(id: item.id, values: row)
                if try !insert.stepInsert(arguments: arguments()), let update {
                    try runUpdate(update)
                    expectExisting = true
                }
                insert.reset()
            }
        }

        /// One prepared `INSERT` per call, bound and stepped per row: a primary-key conflict
        /// leaves the stored row as it is and reports its id, so nothing is read first.
        func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
            let layout = try layout(table)
            let insert = try connection.statement(layout.insertSQL)
            defer { insert.reset() }
            var present: [String] = []
            var row: [Value] = []
            var order = TableSchema.StoredValueOrder()
            for item in items {
                try layout.schema.normalizedRow(item, origin: origin, into: &row, order: &order)
                try insert.bindRow(id: item.id, values: row)
                if try !insert.stepInsert(arguments: [.string(item.id)] + row) { present.append(item.id) }
                insert.reset()
            }
            return present
        }

        func delete(ids: [String], from table: String) throws {
            let statement = try connection.statement(layout(table).deleteSQL)
            for id in ids {
                try statement.run([.string(id)])
            }
        }

        func delete(matching query: Query) throws -> Int {
            let layout = try layout(query.table)
            try query.validate(against: layout.schema)
            if let delete = SQLQuery.delete(
                query, on: layout, countsTruncatedRows: connection.api.countsTruncatedRows),
                try SQLTableStore.unlessTooComplex({ try connection.execute(delete.sql, delete.arguments) }) != nil
            {
                return connection.changes
            }
            var selection = query
            selection.selection = []
            let ids = try read(selection).items.map(\.id)
            try self.delete(ids: ids, from: query.table)
            return ids.count
        }
    }
}
