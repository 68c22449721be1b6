import GRDB
import OfflineSyncBenchmarking

/// GRDB 7.10.0, the library a Swift developer would otherwise use for SQLite, doing the same work
/// as the raw SQLite baseline through its idiomatic record API.
final class GRDBBaseline {
    /// The benchmark row as a GRDB record (dates and flags stored as integers, like the raw baseline).
    struct Row: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "item"
        var id: String
        var title: String
        var quantity: Int64
        var price: Double
        var done: Bool
        var due: Int64
        var createdAt: Int64
        var updatedAt: Int64
        var version: String
        var deleted: Bool

        init(_ record: BenchmarkRecord) {
            id = record.id
            title = record.title
            quantity = record.quantity
            price = record.price
            done = record.done
            due = record.due
            createdAt = record.createdAt
            updatedAt = record.updatedAt
            version = record.version
            deleted = record.deleted
        }
    }

    private let pool: DatabasePool

    /// Creates the table (and the index on `quantity` when `indexed`) in a WAL database at `path`.
    init(path: String, indexed: Bool) throws {
        pool = try DatabasePool(path: path)
        try pool.write { db in
            try db.create(table: Row.databaseTableName) { table in
                table.primaryKey("id", .text)
                table.column("title", .text)
                table.column("quantity", .integer)
                table.column("price", .double)
                table.column("done", .boolean)
                table.column("due", .integer)
                table.column("createdAt", .integer)
                table.column("updatedAt", .integer)
                table.column("version", .text)
                table.column("deleted", .boolean)
            }
            if indexed {
                try db.create(index: "item_quantity", on: Row.databaseTableName, columns: ["quantity"])
            }
        }
    }

    /// Inserts or replaces the records, one transaction per `rowsPerTransaction` rows.
    func insert(_ records: [BenchmarkRecord], rowsPerTransaction: Int) throws {
        var start = 0
        while start < records.count {
            let page = records[start..<min(start + rowsPerTransaction, records.count)]
            try pool.write { db in
                for record in page {
                    try Row(record).insert(db, onConflict: .replace)
                }
            }
            start += rowsPerTransaction
        }
    }

    /// The row with this id.
    func lookup(id: String) throws -> Row? {
        try pool.read { db in try Row.fetchOne(db, key: id) }
    }

    /// The query scenario's top 50.
    func queryTop() throws -> [Row] {
        try pool.read { db in
            try Row.filter(Column("quantity") >= BenchmarkData.queryThreshold && Column("done") == false)
                .order(Column("quantity"), Column("id"))
                .limit(BenchmarkData.queryLimit)
                .fetchAll(db)
        }
    }
}
