/// The raw SQL baseline: prepared statements on libsqlite3, or on the dlopen'ed libsqlcipher.
///
/// One connection, WAL, prepared statements reused across rows, values bound with
/// `SQLITE_TRANSIENT` (as GRDB does), results decoded column by column into ``BenchmarkRecord``.
public final class RawSQLiteBaseline: RawBaseline {
    private let api: RawSQLiteAPI
    private let path: String
    private let durability: RawDurability
    private let key: RawSQLCipherKey?
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var nextSequence: Int64 = 1

    /// A baseline storing its database at `path`.
    /// - Parameters:
    ///   - api: ``RawSQLiteAPI/system`` or a table from ``RawSQLiteAPI/loadSQLCipher(path:)``.
    ///   - key: the SQLCipher key (required with SQLCipher, ignored without).
    public init(api: RawSQLiteAPI, path: String, durability: RawDurability, key: RawSQLCipherKey? = nil) {
        self.api = api
        self.path = path
        self.durability = durability
        self.key = key
    }

    deinit {
        close()
    }

    public func create(indexed: Bool) throws {
        try open()
        try execute("""
            CREATE TABLE item (id TEXT PRIMARY KEY NOT NULL, title TEXT, quantity INTEGER, price REAL,
              done INTEGER, due INTEGER, createdAt INTEGER, updatedAt INTEGER, version TEXT, deleted INTEGER);
            CREATE TABLE queue (seq INTEGER PRIMARY KEY, tableName TEXT NOT NULL, itemId TEXT NOT NULL, kind INTEGER NOT NULL);
            """)
        if indexed {
            try execute("CREATE INDEX item_quantity ON item (quantity)")
        }
    }

    public func open() throws {
        guard connection == nil else { return }
        var handle: OpaquePointer?
        let flags: Int32 = 0x0000_0002 | 0x0000_0004 | 0x0000_8000 // READWRITE | CREATE | NOMUTEX
        let code = api.open(path, &handle, flags, nil)
        connection = handle
        guard code == 0 else {
            let message = errorMessage()
            close()
            throw RawBaselineError("\(api.name): cannot open '\(path)': \(message) (code \(code))")
        }
        switch key {
        case .passphrase(let passphrase)?:
            try execute("PRAGMA key = '\(passphrase.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''"))'")
        case .raw(let hex)?:
            try execute("PRAGMA key = \"x'\(hex)'\"")
        case nil:
            break
        }
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        try execute("SELECT count(*) FROM sqlite_master")
    }

    public func close() {
        for statement in statements.values {
            _ = api.finalize(statement)
        }
        statements.removeAll()
        if let connection {
            _ = api.close(connection)
        }
        connection = nil
    }

    public func insert(_ records: ArraySlice<BenchmarkRecord>, rowsPerTransaction: Int, queueRows: Bool) throws {
        let insertItem = try statement(Self.insertItemSQL)
        let insertOperation = queueRows ? try statement(Self.insertOperationSQL) : nil
        var index = records.startIndex
        while index < records.endIndex {
            let end = min(index + max(rowsPerTransaction, 1), records.endIndex)
            try execute("BEGIN")
            for record in records[index..<end] {
                try bind(record, to: insertItem)
                try run(insertItem)
                if let insertOperation {
                    _ = api.bindInt64(insertOperation, 1, nextSequence)
                    _ = api.bindText(insertOperation, 2, BenchmarkData.tableName, -1, Self.transient)
                    _ = api.bindText(insertOperation, 3, record.id, -1, Self.transient)
                    _ = api.bindInt64(insertOperation, 4, 1)
                    try run(insertOperation)
                    nextSequence += 1
                }
            }
            try execute("COMMIT")
            index = end
        }
    }

    public func drainQueue(_ records: [BenchmarkRecord]) throws {
        let first = try statement("SELECT seq, itemId FROM queue ORDER BY seq LIMIT 1")
        let insertItem = try statement(Self.insertItemSQL)
        let deleteOperation = try statement("DELETE FROM queue WHERE seq = ?")
        for record in records {
            try execute("BEGIN")
            guard api.step(first) == 100 else {
                _ = api.reset(first)
                throw RawBaselineError("\(api.name): the queue is empty before '\(record.id)' was pushed")
            }
            let sequence = api.columnInt64(first, 0)
            _ = api.reset(first)
            try bind(record, to: insertItem)
            try run(insertItem)
            _ = api.bindInt64(deleteOperation, 1, sequence)
            try run(deleteOperation)
            try execute("COMMIT")
        }
    }

    public func lookup(id: String) throws -> BenchmarkRecord? {
        let select = try statement("SELECT * FROM item WHERE id = ?")
        _ = api.bindText(select, 1, id, -1, Self.transient)
        defer { _ = api.reset(select) }
        return try step(select) ? decode(select) : nil
    }

    public func queryTop() throws -> [BenchmarkRecord] {
        let select = try statement("SELECT * FROM item WHERE quantity >= ? AND done = 0 ORDER BY quantity, id LIMIT ?")
        _ = api.bindInt64(select, 1, BenchmarkData.queryThreshold)
        _ = api.bindInt64(select, 2, Int64(BenchmarkData.queryLimit))
        defer { _ = api.reset(select) }
        var result: [BenchmarkRecord] = []
        while try step(select) {
            result.append(decode(select))
        }
        return result
    }

    public func deleteAll() throws -> Int {
        let count = try statement("SELECT count(*) FROM item")
        guard try step(count) else { throw RawBaselineError("\(api.name): count(*) returned no row") }
        let rows = Int(api.columnInt64(count, 0))
        _ = api.reset(count)
        try execute("BEGIN; DELETE FROM item; COMMIT")
        return rows
    }

    /// The library's version, e.g. `3.40.1`.
    public var libraryVersion: String { api.version }

    private static let insertItemSQL = "INSERT OR REPLACE INTO item (id, title, quantity, price, done, due, createdAt, updatedAt, version, deleted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    private static let insertOperationSQL = "INSERT INTO queue (seq, tableName, itemId, kind) VALUES (?, ?, ?, ?)"
    /// `SQLITE_TRANSIENT`: SQLite copies the bound text before the call returns.
    private static let transient = unsafeBitCast(-1, to: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)

    private func bind(_ record: BenchmarkRecord, to statement: OpaquePointer) throws {
        _ = api.bindText(statement, 1, record.id, -1, Self.transient)
        _ = api.bindText(statement, 2, record.title, -1, Self.transient)
        _ = api.bindInt64(statement, 3, record.quantity)
        _ = api.bindDouble(statement, 4, record.price)
        _ = api.bindInt64(statement, 5, record.done ? 1 : 0)
        _ = api.bindInt64(statement, 6, record.due)
        _ = api.bindInt64(statement, 7, record.createdAt)
        _ = api.bindInt64(statement, 8, record.updatedAt)
        _ = api.bindText(statement, 9, record.version, -1, Self.transient)
        _ = api.bindInt64(statement, 10, record.deleted ? 1 : 0)
    }

    private func decode(_ statement: OpaquePointer) -> BenchmarkRecord {
        BenchmarkRecord(id: text(statement, 0), title: text(statement, 1), quantity: api.columnInt64(statement, 2),
                        price: api.columnDouble(statement, 3), done: api.columnInt64(statement, 4) != 0,
                        due: api.columnInt64(statement, 5), createdAt: api.columnInt64(statement, 6),
                        updatedAt: api.columnInt64(statement, 7), version: text(statement, 8),
                        deleted: api.columnInt64(statement, 9) != 0)
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = api.columnText(statement, column) else { return "" }
        let count = Int(api.columnBytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let code = api.prepare(try requireConnection(), sql, -1, &statement, nil)
        guard code == 0, let statement else {
            throw RawBaselineError("\(api.name): cannot prepare \(sql): \(errorMessage()) (code \(code))")
        }
        statements[sql] = statement
        return statement
    }

    /// Steps once: `true` for a row, `false` when done.
    private func step(_ statement: OpaquePointer) throws -> Bool {
        switch api.step(statement) {
        case 100: return true
        case 101: return false
        case let code: throw RawBaselineError("\(api.name): step failed: \(errorMessage()) (code \(code))")
        }
    }

    private func run(_ statement: OpaquePointer) throws {
        defer { _ = api.reset(statement) }
        while try step(statement) {}
    }

    private func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = api.exec(try requireConnection(), sql, nil, nil, &message)
        guard code == 0 else {
            let text = message.map { String(cString: $0) } ?? "code \(code)"
            api.free(message)
            throw RawBaselineError("\(api.name): \(sql) failed: \(text)")
        }
    }

    private func requireConnection() throws -> OpaquePointer {
        guard let connection else { throw RawBaselineError("\(api.name): the raw baseline at '\(path)' is not open") }
        return connection
    }

    private func errorMessage() -> String {
        api.errorMessage(connection).map { String(cString: $0) } ?? "unknown error"
    }
}
