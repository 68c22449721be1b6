// Bulk upsert through the stores versus the raw C API doing the same inserts in the same process.
//
//   swift build -c release --product sqlite-upsert-bench && .build/release/sqlite-upsert-bench [rows] [runs]
//
// Each run writes `rows` five-column items (integer, double, string, bool, date) in one
// transaction into a fresh file with the same table layout and pragmas (WAL, synchronous NORMAL).
// The store path includes everything a pull pays for: normalisation of every item by the core and
// binding from `Item` values; the raw path binds the same prebuilt Swift values.
import CSQLite
import Foundation
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite

let arguments = CommandLine.arguments
let rowCount = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let runs = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3

let table = TableSchema(
    "bench",
    columns: [
        Column("count", .integer), Column("price", .double), Column("title", .string),
        Column("done", .bool), Column("due", .date),
    ], synced: false)
let ids = (0..<rowCount).map { "item-\($0)" }
let titles = (0..<rowCount).map { "title number \($0) of the benchmark" }
let items = (0..<rowCount).map { row -> Item in
    var values: [String: Value] = [:]
    values["count"] = .int(Int64(row))
    values["price"] = .double(Double(row) * 0.25)
    values["title"] = .string(titles[row])
    values["done"] = .bool(row % 2 == 0)
    values["due"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(row)))
    return Item(id: ids[row], values: values)
}

let directory = NSTemporaryDirectory() + "sqlite-upsert-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
func freshPath() -> String {
    "\(directory)/\(UUID().uuidString).db"
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The raw C inserts, through a function table so that SQLite and SQLCipher run the same code.
func rawInsert(api: SQLiteAPI, path: String, prepare: (OpaquePointer) throws -> Void = { _ in }) throws -> Double {
    var db: OpaquePointer?
    _ = api.open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    try prepare(db!)
    func exec(_ sql: String) {
        var statement: OpaquePointer?
        _ = api.prepare_v2(db, sql, -1, &statement, nil)
        while api.step(statement) == SQLITE_ROW {}
        _ = api.finalize(statement)
    }
    exec("PRAGMA journal_mode = WAL")
    exec("PRAGMA synchronous = NORMAL")
    exec(
        "CREATE TABLE bench (id TEXT PRIMARY KEY NOT NULL, count INTEGER, price, title TEXT, done INTEGER, due INTEGER) WITHOUT ROWID"
    )
    let elapsed = seconds {
        var statement: OpaquePointer?
        _ = api.prepare_v2(
            db, "INSERT INTO bench (id, count, price, title, done, due) VALUES (?, ?, ?, ?, ?, ?)", -1, &statement, nil)
        exec("BEGIN")
        for row in 0..<rowCount {
            var id = ids[row]
            var title = titles[row]
            id.withUTF8 {
                _ = api.bind_text(
                    statement, 1, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    Int32($0.count), SQLiteAPI.transient)
            }
            _ = api.bind_int64(statement, 2, Int64(row))
            _ = api.bind_double(statement, 3, Double(row) * 0.25)
            title.withUTF8 {
                _ = api.bind_text(
                    statement, 4, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    Int32($0.count), SQLiteAPI.transient)
            }
            _ = api.bind_int64(statement, 5, row % 2 == 0 ? 1 : 0)
            _ = api.bind_int64(statement, 6, 1_700_000_000_000 + Int64(row))
            if api.step(statement) != SQLITE_DONE {
                fatalError("raw insert failed: \(String(cString: api.errmsg(db)!))")
            }
            _ = api.reset(statement)
        }
        exec("COMMIT")
        _ = api.finalize(statement)
    }
    _ = api.close_v2(db)
    return elapsed
}

func storeUpsert(_ store: any LocalStore) throws -> Double {
    try store.open(schema: StoreSchema([table]))
    let elapsed = try seconds { try store.write { try $0.upsert(items, into: "bench", origin: .server) } }
    let stored = try store.count("bench")
    precondition(stored == rowCount, "the store holds \(stored) rows, expected \(rowCount)")
    try store.close()
    return elapsed
}

func report(_ name: String, store: [Double], raw: [Double]) {
    let best = { (times: [Double]) in Double(rowCount) / times.min()! }
    let storeRate = best(store)
    let rawRate = best(raw)
    print(
        String(
            format: "%@: store %.0f rows/s, raw C %.0f rows/s, ratio %.2f (best of %d runs, %d rows)",
            name, storeRate, rawRate, storeRate / rawRate, runs, rowCount))
}

var storeTimes: [Double] = []
var rawTimes: [Double] = []
for _ in 0..<runs {
    rawTimes.append(try rawInsert(api: .system, path: freshPath()))
    storeTimes.append(try storeUpsert(SQLiteStore(path: freshPath())))
}
report("SQLiteStore \(SQLiteAPI.system.version)", store: storeTimes, raw: rawTimes)

let key = SQLCipherKey.raw(Array(repeating: 0x42, count: 32))
let cipher = try SQLCipherLibrary.load()
storeTimes = []
rawTimes = []
for _ in 0..<runs {
    rawTimes.append(try rawInsert(api: cipher.api, path: freshPath()) { try cipher.applyKey(key, to: $0) })
    storeTimes.append(try storeUpsert(SQLCipherStore(path: freshPath(), key: key)))
}
report("SQLCipherStore \(cipher.api.version)", store: storeTimes, raw: rawTimes)

/// Median time of opening (key derivation included) and closing an existing encrypted store.
func openTime(_ key: SQLCipherKey, opens: Int = 10) throws -> Double {
    let path = freshPath()
    let store = try SQLCipherStore(path: path, key: key)
    try store.open(schema: StoreSchema([table]))
    try store.close()
    let times = try (0..<opens).map { _ in
        try seconds {
            try store.open(schema: StoreSchema([table]))
            try store.close()
        }
    }
    return times.sorted()[opens / 2]
}
let passphraseOpen = try openTime(.passphrase("correct horse battery staple"))
let rawKeyOpen = try openTime(key)
print(
    String(
        format: "SQLCipherStore open+close (median of 10): passphrase %.1f ms, raw key %.1f ms", passphraseOpen * 1000,
        rawKeyOpen * 1000))
