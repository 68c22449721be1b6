import OfflineSync

extension PostgresStore {
    /// The operations of one `write` transaction, valid only while its closure runs.
    final class Transaction: StoreTransaction {
        /// The most rows (or ids) one `INSERT` (or `DELETE`) carries; a batch is sent as statements
        /// of power-of-two sizes up to this, so each table has at most ten cached statements.
        static let batchLimit = 512

        private let connection: PostgresConnection
        private let schema: StoreSchema
        private let layouts: [String: PostgresTableLayout]
        /// Cleared when the closure ends; a kept reference then throws instead of touching the
        /// connection outside the store's lock.
        var isActive = true
        /// The first PostgreSQL failure inside the transaction: PostgreSQL then refuses every
        /// statement but a rollback, so later calls throw and the store rolls back.
        private(set) var failure: PostgresError?

        init(connection: PostgresConnection, schema: StoreSchema, layouts: [String: PostgresTableLayout]) {
            self.connection = connection
            self.schema = schema
            self.layouts = layouts
        }

        private func layout(_ table: String) throws -> PostgresTableLayout {
            guard isActive else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "a transaction was used after its write closure returned; use the transaction only inside the closure"
                )
            }
            if let failure {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the transaction on \(connection.location) was aborted by PostgreSQL after an earlier error (\(failure.message)); rethrow that error instead of continuing the write closure"
                )
            }
            return try PostgresStore.layout(table, in: schema, layouts)
        }

        /// Runs `body`, remembering a PostgreSQL failure (see ``failure``).
        private func recording<Result>(_ body: () throws -> Result) throws -> Result {
            do {
                return try body()
            } catch let error as PostgresError {
                failure = failure ?? error
                throw error
            }
        }

        func read(_ query: Query) throws -> QueryResult {
            let layout = try layout(query.table)
            return try recording { try PostgresStore.read(query, on: layout, connection) }
        }

        func lookup(table: String, id: String) throws -> Item? {
            let layout = try layout(table)
            return try recording { try PostgresStore.lookup(id, on: layout, connection) }
        }

        /// Every row is normalised before anything is sent; rows with the same id keep only the
        /// last (an upsert replaces the whole row, and one `INSERT … ON CONFLICT` may not touch a
        /// row twice); the rest go out in multi-row `INSERT … ON CONFLICT DO UPDATE` statements.
        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            let layout = try layout(table)
            var rows: [(id: String, values: [Value])] = []
            rows.reserveCapacity(items.count)
            // Keyed by bytes: Swift's `String` equality would merge "café" and "cafe\u{301}".
            var positions: [[UInt8]: Int] = [:]
            for item in items {
                let values = try layout.schema.normalizedRow(item, origin: origin)
                let key = Array(item.id.utf8)
                if let position = positions[key] {
                    rows[position] = (item.id, values)
                } else {
                    positions[key] = rows.count
                    rows.append((item.id, values))
                }
            }
            let width = layout.rowTypes.count
            let limit = max(1, min(Transaction.batchLimit, PostgresQuery.parameterLimit / width))
            try recording {
                for batch in Transaction.batches(rows.count, limit: limit) {
                    var parameters: [PostgresParameter] = []
                    parameters.reserveCapacity(batch.count * width)
                    for row in rows[batch] {
                        parameters.append(PostgresParameter(.string(row.id), as: .text))
                        for (value, type) in zip(row.values, layout.rowTypes.dropFirst()) {
                            parameters.append(PostgresParameter(value, as: type))
                        }
                    }
                    try connection.run(layout.upsertSQL(rows: batch.count), parameters)
                }
            }
        }

        func delete(ids: [String], from table: String) throws {
            let layout = try layout(table)
            // `text` cannot hold U+0000, and no stored id contains it.
            let ids = ids.filter { !$0.utf8.contains(0) }
            try recording {
                for batch in Transaction.batches(ids.count, limit: Transaction.batchLimit) {
                    try connection.run(
                        layout.deleteSQL(count: batch.count),
                        ids[batch].map { PostgresParameter(.string($0), as: .text) })
                }
            }
        }

        func delete(matching query: Query) throws -> Int {
            let layout = try layout(query.table)
            try query.validate(against: layout.schema)
            guard let delete = PostgresQuery.delete(query, on: layout) else {
                var selection = query
                selection.selection = []
                let ids = try read(selection).items.map(\.id)
                try self.delete(ids: ids, from: query.table)
                return ids.count
            }
            return try recording { try connection.run(delete.sql, delete.parameters) }
        }

        /// `0..<count` cut into ranges whose sizes are powers of two of at most `limit`, largest first.
        static func batches(_ count: Int, limit: Int) -> [Range<Int>] {
            var ranges: [Range<Int>] = []
            var start = 0
            var size = 1
            while size * 2 <= limit { size *= 2 }
            while start < count {
                while size > count - start { size /= 2 }
                ranges.append(start..<start + size)
                start += size
            }
            return ranges
        }
    }
}
