import OfflineSync
import OfflineSyncService

/// One benchmark row: five app columns plus the four system properties, as plain fields.
///
/// The raw baselines store these fields directly; the OfflineSync backends receive the same
/// values as an `Item` (see `item`), so both sides do the same storage work.
public struct BenchmarkRecord: Sendable, Hashable {
    /// The primary key.
    public var id: String
    /// A short text (`title`, string column).
    public var title: String
    /// An integer in `0..<1000` (`quantity`, the indexed column of the query scenarios).
    public var quantity: Int64
    /// A price (`price`, double column).
    public var price: Double
    /// A flag (`done`, bool column).
    public var done: Bool
    /// A due date in milliseconds since 1970 (`due`, date column).
    public var due: Int64
    /// The server's `createdAt`, in milliseconds since 1970.
    public var createdAt: Int64
    /// The server's `updatedAt`, in milliseconds since 1970.
    public var updatedAt: Int64
    /// The server's opaque `version`.
    public var version: String
    /// The server's soft-delete flag.
    public var deleted: Bool

    /// Creates a record.
    init(
        id: String, title: String, quantity: Int64, price: Double, done: Bool, due: Int64,
        createdAt: Int64, updatedAt: Int64, version: String, deleted: Bool
    ) {
        self.id = id
        self.title = title
        self.quantity = quantity
        self.price = price
        self.done = done
        self.due = due
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.deleted = deleted
    }

    /// The record as an OfflineSync item (every column set).
    var item: Item {
        Item(id: id, values: appValues.merging(systemValues) { app, _ in app })
    }

    /// The record as a local app write: the five app columns only (the server assigns the rest).
    var localItem: Item {
        Item(id: id, values: appValues)
    }

    /// The record as a raw baseline stores a local write (``localItem``): the app columns, and
    /// the system columns empty (no times, no version) until a push brings the server's.
    var localRecord: BenchmarkRecord {
        BenchmarkRecord(
            id: id, title: title, quantity: quantity, price: price, done: done, due: due, createdAt: 0,
            updatedAt: 0, version: "", deleted: false)
    }

    /// The record as the server returns it after writing it at `stamp` (milliseconds since
    /// 1970), which a store then writes: `updatedAt` the stamp, `version` the stamp's (12
    /// characters, see `TableService.version`), and `createdAt` the stamp too when the write
    /// `inserted` the record.
    func writtenByServer(at stamp: Int64, inserted: Bool) -> BenchmarkRecord {
        var copy = self
        copy.updatedAt = stamp
        if inserted { copy.createdAt = stamp }
        copy.version = TableService.version(Timestamp(millisecondsSince1970: stamp))
        return copy
    }

    private var appValues: [String: Value] {
        [
            "title": .string(title),
            "quantity": .int(quantity),
            "price": .double(price),
            "done": .bool(done),
            "due": .date(Timestamp(millisecondsSince1970: due)),
        ]
    }

    private var systemValues: [String: Value] {
        [
            SystemProperty.createdAt.rawValue: .date(Timestamp(millisecondsSince1970: createdAt)),
            SystemProperty.updatedAt.rawValue: .date(Timestamp(millisecondsSince1970: updatedAt)),
            SystemProperty.version.rawValue: .string(version),
            SystemProperty.deleted.rawValue: .bool(deleted),
        ]
    }
}

/// The benchmark table and the deterministic records that fill it.
public enum BenchmarkData {
    /// The table every scenario uses.
    static let tableName = "benchmark_item"
    /// The secondary index of the indexed query scenarios.
    static let quantityIndex = TableIndex("benchmark_item_quantity", on: ["quantity"])
    /// The filter of the query scenarios: `quantity >= queryThreshold and done == false`.
    public static let queryThreshold: Int64 = 500
    /// The `top` of the query scenarios.
    public static let queryLimit = 50

    /// The table declaration, with or without the index on `quantity`.
    static func table(indexed: Bool) -> TableSchema {
        TableSchema(
            tableName,
            columns: [
                Column("title", .string),
                Column("quantity", .integer),
                Column("price", .double),
                Column("done", .bool),
                Column("due", .date),
            ], indexes: indexed ? [quantityIndex] : [])
    }

    /// The query scenario's query: filter, order by `quantity` (then `id`), top 50.
    static var query: Query {
        Query(
            table: tableName,
            filter: .and(
                .comparison(.column("quantity"), .ge, .literal(.int(queryThreshold))),
                .comparison(.column("done"), .eq, .literal(.bool(false)))),
            orderBy: [SortKey("quantity")],
            top: queryLimit)
    }

    /// `count` records with ids `item-000000…`, reproducible from `seed`. `updatedAt` increases
    /// with the index (one millisecond apart from `firstUpdate`), so records sort by index in pulls.
    public static func records(
        count: Int, seed: UInt64 = 42, firstUpdate: Int64 = 1_767_225_600_000,
        idPrefix: String = "item-"
    ) -> [BenchmarkRecord] {
        var generator = SeededRandom(seed: seed)
        var result: [BenchmarkRecord] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let random = generator.next()
            result.append(
                BenchmarkRecord(
                    id: idPrefix + zeroPadded(index, width: 6),
                    title: "Task \(index) \(titleWords[Int(random % UInt64(titleWords.count))])",
                    quantity: Int64((random >> 8) % 1000),
                    price: Double((random >> 20) % 100_000) / 100,
                    done: (random >> 40) & 1 == 1,
                    due: firstUpdate + Int64((random >> 44) % 1_000_000) * 1000,
                    createdAt: firstUpdate + Int64(index),
                    updatedAt: firstUpdate + Int64(index),
                    version: "v" + String(random, radix: 16),
                    deleted: false))
        }
        return result
    }

    /// Decimal digits of `value`, left-padded with zeros to `width`.
    static func zeroPadded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static let titleWords = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
}
