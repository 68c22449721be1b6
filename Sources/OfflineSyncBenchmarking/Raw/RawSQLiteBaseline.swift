import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// The raw SQL baseline: prepared statements on libsqlite3, or on the dlopen'ed libsqlcipher.
///
/// The same layout and settings as the SQL stores (a `WITHOUT ROWID` table keyed by `id`, WAL,
/// a 16 MiB page cache), one connection, prepared statements reused across rows, values bound with
/// `SQLITE_TRANSIENT` (as GRDB does), results decoded column by column into ``BenchmarkRecord``.
/// The C functions are called through the SQL engine's function table (`SQLiteAPI`), filled from
/// the linked libsqlite3 or from SQLCipher loaded with `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)`
/// by `SQLCipherLibrary`, so SQLCipher is never linked at build time.
final class RawSQLiteBaseline: RawBaseline {
    /// Which library the baseline calls.
    enum Library: Sendable, Hashable {
        /// The system SQLite linked into the process.
        case system
        /// SQLCipher, loaded at run time from `SQLCipherLibrary.defaultPath`.
        case sqlcipher
    }

    private let api: SQLiteAPI
    private let name: String
    private let path: String
    private let durability: RawDurability
    private let key: RawSQLCipherKey?
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var nextSequence: Int64 = 1

    /// A baseline storing its database at `path`.
    /// - Parameters:
    ///   - library: the system SQLite or SQLCipher (throws when SQLCipher cannot be loaded).
    ///   - key: the SQLCipher key (required with SQLCipher, ignored without).
    init(library: Library, path: String, durability: RawDurability, key: RawSQLCipherKey? = nil) throws {
        switch library {
        case .system:
            api = .system
            name = "sqlite"
        case .sqlcipher:
            api = try SQLCipherLibrary.load().api
            name = "sqlcipher"
        }
        self.path = path
        self.durability = durability
        self.key = key
    }

    deinit {
        close()
    }

    func create(indexed: Bool) throws {
        try open()
        try execute(
            """
            CREATE TABLE item (id TEXT PRIMARY KEY NOT NULL, title TEXT, quantity INTEGER, price REAL,
              done INTEGER, due INTEGER, createdAt INTEGER, updatedAt INTEGER, version TEXT, deleted INTEGER) WITHOUT ROWID;
            CREATE TABLE queue (seq INTEGER PRIMARY KEY, tableName TEXT NOT NULL, itemId TEXT NOT NULL, kind INTEGER NOT NULL);
            """)
        if indexed {
            try execute("CREATE INDEX item_quantity ON item (quantity)")
        }
    }

    func open() throws {
        guard connection == nil else { return }
        var handle: OpaquePointer?
        let flags: Int32 = 0x0000_0002 | 0x0000_0004 | 0x0000_8000  // READWRITE | CREATE | NOMUTEX
        let code = api.open_v2(path, &handle, flags, nil)
        connection = handle
        guard code == 0 else {
            let message = errorMessage()
            close()
            throw RawBaselineError("\(name): cannot open '\(path)': \(message) (code \(code))")
        }
        switch key {
        case .passphrase(let passphrase)?:
            try execute(
                "PRAGMA key = '\(passphrase.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''"))'"
            )
        case .raw(let hex)?:
            try execute("PRAGMA key = \"x'\(hex)'\"")
        case nil:
            break
        }
        try execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA cache_size = -16384"
        )
        try execute("SELECT count(*) FROM sqlite_master")
    }

    func close() {
        for statement in statements.values {
            _ = api.finalize(statement)
        }
        statements.removeAll()
        if let connection {
            _ = api.close_v2(connection)
        }
        connection = nil
    }

    func insert(_ records: ArraySlice<BenchmarkRecord>, rowsPerTransaction: Int, queueRows: Bool) throws {
        let items = try itemUpsert()
        let insertOperation = queueRows ? try statement(Self.insertOperationSQL) : nil
        var index = records.startIndex
        while index < records.endIndex {
            let end = min(index + max(rowsPerTransaction, 1), records.endIndex)
            try execute("BEGIN")
            for record in records[index..<end] {
                try upsert(record, with: items)
                if let insertOperation {
                    _ = api.bind_int64(insertOperation, 1, nextSequence)
                    _ = api.bind_text(insertOperation, 2, BenchmarkData.tableName, -1, SQLiteAPI.transient)
                    _ = api.bind_text(insertOperation, 3, record.id, -1, SQLiteAPI.transient)
                    _ = api.bind_int64(insertOperation, 4, 1)
                    try run(insertOperation)
                    nextSequence += 1
                }
            }
            try execute("COMMIT")
            index = end
        }
    }

    func drainQueue(_ records: [BenchmarkRecord]) throws {
        let first = try statement("SELECT seq, itemId FROM queue ORDER BY seq LIMIT 1")
        let items = try itemUpsert()
        let deleteOperation = try statement("DELETE FROM queue WHERE seq = ?")
        for record in records {
            try execute("BEGIN")
            guard api.step(first) == 100 else {
                _ = api.reset(first)
                throw RawBaselineError("\(name): the queue is empty before '\(record.id)' was pushed")
            }
            let sequence = api.column_int64(first, 0)
            _ = api.reset(first)
            try upsert(record, with: items)
            _ = api.bind_int64(deleteOperation, 1, sequence)
            try run(deleteOperation)
            try execute("COMMIT")
        }
    }

    func lookup(id: String) throws -> BenchmarkRecord? {
        let select = try statement("SELECT * FROM item WHERE id = ?")
        _ = api.bind_text(select, 1, id, -1, SQLiteAPI.transient)
        defer { _ = api.reset(select) }
        return try step(select) ? decode(select) : nil
    }

    func queryTop() throws -> [BenchmarkRecord] {
        let select = try statement("SELECT * FROM item WHERE quantity >= ? AND done = 0 ORDER BY quantity, id LIMIT ?")
        _ = api.bind_int64(select, 1, BenchmarkData.queryThreshold)
        _ = api.bind_int64(select, 2, Int64(BenchmarkData.queryLimit))
        defer { _ = api.reset(select) }
        var result: [BenchmarkRecord] = []
        while try step(select) {
            result.append(decode(select))
        }
        return result
    }

    func deleteAll() throws -> Int {
        let count = try statement("SELECT count(*) FROM item")
        guard try step(count) else { throw RawBaselineError("\(name): count(*) returned no row") }
        let rows = Int(api.column_int64(count, 0))
        _ = api.reset(count)
        try execute("BEGIN; DELETE FROM item; COMMIT")
        return rows
    }

    /// The library's version, e.g. `3.40.1` (SQLCipher 3.4.1 answers `3.15.2`).
    var libraryVersion: String { api.version }

    /// The prepared statements of an item upsert: `INSERT … ON CONFLICT(id) DO UPDATE` alone, or
    /// an `INSERT` followed, when the id exists, by an `UPDATE`.
    private struct ItemUpsert {
        let write: OpaquePointer
        let update: OpaquePointer?
    }

    /// The fastest correct upsert the library offers, as a C programmer would write it:
    /// `INSERT … ON CONFLICT(id) DO UPDATE` from SQLite 3.24 on; before it (SQLCipher 3.4 carries
    /// SQLite 3.15) an `INSERT` and, when the id exists, an `UPDATE`. (`INSERT OR REPLACE`
    /// deletes and re-inserts the row, which SQLite 3.15 does about ten times slower in a
    /// `WITHOUT ROWID` table; an earlier version of this baseline used it and so made the
    /// SQLCipher store look faster than C.) Prepared once per call of the caller, not per row.
    private func itemUpsert() throws -> ItemUpsert {
        hasUpsertClause
            ? ItemUpsert(write: try statement(Self.upsertItemSQL), update: nil)
            : ItemUpsert(write: try statement(Self.insertItemSQL), update: try statement(Self.updateItemSQL))
    }

    private func upsert(_ record: BenchmarkRecord, with statements: ItemUpsert) throws {
        try bind(record, to: statements.write)
        guard let update = statements.update else { return try run(statements.write) }
        let code = api.step(statements.write)
        _ = api.reset(statements.write)
        if code == 101 { return }
        guard code & 0xFF == 19 else {
            throw RawBaselineError("\(name): insert failed: \(errorMessage()) (code \(code))")
        }
        try bind(record, to: update)
        try run(update)
    }

    /// `true` when the library understands `ON CONFLICT … DO UPDATE` (SQLite 3.24 and later).
    private var hasUpsertClause: Bool {
        let parts = api.version.split(separator: ".").compactMap { Int($0) }
        return parts.count >= 2 && (parts[0], parts[1]) >= (3, 24)
    }

    private static let itemColumns = [
        "id", "title", "quantity", "price", "done", "due", "createdAt", "updatedAt", "version", "deleted",
    ]
    private static let insertItemSQL =
        "INSERT INTO item (\(itemColumns.joined(separator: ", "))) VALUES (\((1...itemColumns.count).map { "?\($0)" }.joined(separator: ", ")))"
    private static let upsertItemSQL =
        insertItemSQL + " ON CONFLICT(id) DO UPDATE SET "
        + itemColumns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    private static let updateItemSQL =
        "UPDATE item SET " + itemColumns.enumerated().dropFirst().map { "\($1) = ?\($0 + 1)" }.joined(separator: ", ")
        + " WHERE id = ?1"
    private static let insertOperationSQL = "INSERT INTO queue (seq, tableName, itemId, kind) VALUES (?, ?, ?, ?)"

    private func bind(_ record: BenchmarkRecord, to statement: OpaquePointer) throws {
        _ = api.bind_text(statement, 1, record.id, -1, SQLiteAPI.transient)
        _ = api.bind_text(statement, 2, record.title, -1, SQLiteAPI.transient)
        _ = api.bind_int64(statement, 3, record.quantity)
        _ = api.bind_double(statement, 4, record.price)
        _ = api.bind_int64(statement, 5, record.done ? 1 : 0)
        _ = api.bind_int64(statement, 6, record.due)
        _ = api.bind_int64(statement, 7, record.createdAt)
        _ = api.bind_int64(statement, 8, record.updatedAt)
        _ = api.bind_text(statement, 9, record.version, -1, SQLiteAPI.transient)
        _ = api.bind_int64(statement, 10, record.deleted ? 1 : 0)
    }

    private func decode(_ statement: OpaquePointer) -> BenchmarkRecord {
        BenchmarkRecord(
            id: text(statement, 0), title: text(statement, 1), quantity: api.column_int64(statement, 2),
            price: api.column_double(statement, 3), done: api.column_int64(statement, 4) != 0,
            due: api.column_int64(statement, 5), createdAt: api.column_int64(statement, 6),
            updatedAt: api.column_int64(statement, 7), version: text(statement, 8),
            deleted: api.column_int64(statement, 9) != 0)
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = api.column_text(statement, column) else { return "" }
        let count = Int(api.column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let code = api.prepare_v2(try requireConnection(), sql, -1, &statement, nil)
        guard code == 0, let statement else {
            throw RawBaselineError("\(name): cannot prepare \(sql): \(errorMessage()) (code \(code))")
        }
        statements[sql] = statement
        return statement
    }

    /// Steps once: `true` for a row, `false` when done.
    private func step(_ statement: OpaquePointer) throws -> Bool {
        switch api.step(statement) {
        case 100: return true
        case 101: return false
        case let code: throw RawBaselineError("\(name): step failed: \(errorMessage()) (code \(code))")
        }
    }

    private func run(_ statement: OpaquePointer) throws {
        defer { _ = api.reset(statement) }
        while try step(statement) {}
    }

    /// Runs one or more `;`-separated statements (no cache: set-up and transaction control).
    private func execute(_ sql: String) throws {
        let connection = try requireConnection()
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = api.prepare_v2(connection, current, -1, &statement, &tail)
                guard code == 0 else {
                    throw RawBaselineError("\(name): cannot prepare \(sql): \(errorMessage()) (code \(code))")
                }
                defer { _ = api.finalize(statement) }
                if let statement {
                    while try step(statement) {}
                }
                next = tail
            }
        }
    }

    private func requireConnection() throws -> OpaquePointer {
        guard let connection else { throw RawBaselineError("\(name): the raw baseline at '\(path)' is not open") }
        return connection
    }

    private func errorMessage() -> String {
        api.errmsg(connection).map { String(cString: $0) } ?? "unknown error"
    }
}
