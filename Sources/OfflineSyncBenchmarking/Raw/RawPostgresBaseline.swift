import OfflineSync
import OfflineSyncPostgres

/// The raw libpq baseline: the storage work of each scenario written by hand against libpq,
/// on the same connection code as `PostgresStore` (its `package` connection type: prepared
/// statements, binary values), in a schema of its own.
///
/// Two ways to write rows, each a column of the report (`postgres` and `postgres-copy`):
/// - ``Mode/prepared``: one prepared `INSERT … ON CONFLICT DO UPDATE` per row, in transactions
///   of `rowsPerTransaction` rows — what a hand-written libpq program does;
/// - ``Mode/copy``: `COPY` of each transaction's rows (text format) into a temporary table, then
///   one `INSERT … SELECT … ON CONFLICT DO UPDATE` — PostgreSQL's fastest bulk upsert.
/// Reads, the queue drain and deletes are the same prepared statements in both modes.
final class RawPostgresBaseline: RawBaseline {
    /// How rows are written.
    enum Mode: Sendable, Hashable {
        /// One prepared statement per row.
        case prepared
        /// `COPY` into a staging table, then one upsert statement per transaction.
        case copy
    }

    private let settings: PostgresConnectionSettings
    private let mode: Mode
    private var connection: PostgresConnection?
    private var nextSequence: Int64 = 1
    private var hasStage = false

    /// A baseline in the schema of `settings` (dropped and re-created by ``create(indexed:)``).
    init(settings: PostgresConnectionSettings, mode: Mode) {
        self.settings = settings
        self.mode = mode
    }

    deinit {
        close()
    }

    private var schema: String { "\"\(settings.schema)\"" }
    private static let columns = "id, title, quantity, price, done, due, createdAt, updatedAt, version, deleted"
    private static let assignments =
        "title = EXCLUDED.title, quantity = EXCLUDED.quantity, price = EXCLUDED.price, done = EXCLUDED.done, due = EXCLUDED.due, createdAt = EXCLUDED.createdAt, updatedAt = EXCLUDED.updatedAt, version = EXCLUDED.version, deleted = EXCLUDED.deleted"

    func create(indexed: Bool) throws {
        try open()
        let connection = try requireConnection()
        try connection.execute(
            """
            DROP SCHEMA IF EXISTS \(schema) CASCADE; CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).item (id text COLLATE "C" PRIMARY KEY, title text, quantity int8, price float8,
              done boolean, due int8, createdAt int8, updatedAt int8, version text, deleted boolean);
            CREATE TABLE \(schema).queue (seq int8 PRIMARY KEY, tableName text NOT NULL, itemId text NOT NULL, kind int8 NOT NULL)
            """)
        if indexed {
            try connection.execute("CREATE INDEX item_quantity ON \(schema).item (quantity)")
        }
    }

    func open() throws {
        guard connection == nil else { return }
        let opened = try PostgresConnection(
            parameters: try settings.connectionParameters(), location: settings.description)
        connection = opened
        try opened.run("SELECT count(*) FROM pg_namespace")
    }

    func close() {
        connection?.close()
        connection = nil
        hasStage = false
    }

    private func requireConnection() throws -> PostgresConnection {
        guard let connection else { throw RawBaselineError("postgres: the baseline is not open") }
        return connection
    }

    private var upsertSQL: String {
        "INSERT INTO \(schema).item (\(RawPostgresBaseline.columns)) VALUES ($1::text, $2::text, $3::int8, $4::float8, $5::bool, $6::int8, $7::int8, $8::int8, $9::text, $10::bool) ON CONFLICT (id) DO UPDATE SET \(RawPostgresBaseline.assignments)"
    }

    private func parameters(_ record: BenchmarkRecord) -> [PostgresParameter] {
        [
            PostgresParameter(.string(record.id), as: .text), PostgresParameter(.string(record.title), as: .text),
            PostgresParameter(.int(record.quantity), as: .int8), PostgresParameter(.double(record.price), as: .float8),
            PostgresParameter(.bool(record.done), as: .bool), PostgresParameter(.int(record.due), as: .int8),
            PostgresParameter(.int(record.createdAt), as: .int8), PostgresParameter(.int(record.updatedAt), as: .int8),
            PostgresParameter(.string(record.version), as: .text), PostgresParameter(.bool(record.deleted), as: .bool),
        ]
    }

    private func upsert(_ record: BenchmarkRecord, on connection: PostgresConnection) throws {
        try connection.run(upsertSQL, parameters(record))
    }

    func insert(_ records: ArraySlice<BenchmarkRecord>, rowsPerTransaction: Int, queueRows: Bool) throws {
        let connection = try requireConnection()
        let operationSQL =
            "INSERT INTO \(schema).queue (seq, tableName, itemId, kind) VALUES ($1::int8, $2::text, $3::text, $4::int8)"
        var index = records.startIndex
        while index < records.endIndex {
            let end = min(index + max(rowsPerTransaction, 1), records.endIndex)
            try connection.execute("BEGIN")
            switch mode {
            case .prepared:
                for record in records[index..<end] { try upsert(record, on: connection) }
            case .copy:
                try copyUpsert(records[index..<end], on: connection)
            }
            if queueRows {
                for record in records[index..<end] {
                    try connection.run(
                        operationSQL,
                        [
                            PostgresParameter(.int(nextSequence), as: .int8),
                            PostgresParameter(.string(BenchmarkData.tableName), as: .text),
                            PostgresParameter(.string(record.id), as: .text), PostgresParameter(.int(1), as: .int8),
                        ])
                    nextSequence += 1
                }
            }
            try connection.execute("COMMIT")
            index = end
        }
    }

    /// `COPY` of the rows (text format) into a staging table emptied at commit, then one upsert.
    private func copyUpsert(_ records: ArraySlice<BenchmarkRecord>, on connection: PostgresConnection) throws {
        if !hasStage {
            try connection.execute(
                "CREATE TEMPORARY TABLE IF NOT EXISTS stage (LIKE \(schema).item) ON COMMIT DELETE ROWS")
            hasStage = true
        }
        var data: [UInt8] = []
        data.reserveCapacity(records.count * 96)
        func text(_ value: String) {
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): data += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\t"): data += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case UInt8(ascii: "\n"): data += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): data += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: data.append(byte)
                }
            }
        }
        for record in records {
            let fields = [
                record.id, record.title, String(record.quantity), "\(record.price)", record.done ? "t" : "f",
                String(record.due), String(record.createdAt), String(record.updatedAt), record.version,
                record.deleted ? "t" : "f",
            ]
            for (position, field) in fields.enumerated() {
                if position > 0 { data.append(UInt8(ascii: "\t")) }
                text(field)
            }
            data.append(UInt8(ascii: "\n"))
        }
        try connection.copy("COPY stage (\(RawPostgresBaseline.columns)) FROM STDIN", data: data)
        try connection.run(
            "INSERT INTO \(schema).item (\(RawPostgresBaseline.columns)) SELECT \(RawPostgresBaseline.columns) FROM stage ON CONFLICT (id) DO UPDATE SET \(RawPostgresBaseline.assignments)"
        )
    }

    func drainQueue(_ records: [BenchmarkRecord]) throws {
        let connection = try requireConnection()
        for record in records {
            try connection.execute("BEGIN")
            var sequence: Int64?
            try connection.run("SELECT seq FROM \(schema).queue ORDER BY seq LIMIT 1") { sequence = $0.int64(0) }
            guard let sequence else {
                try connection.execute("ROLLBACK")
                throw RawBaselineError("postgres: the queue is empty before '\(record.id)' was pushed")
            }
            try upsert(record, on: connection)
            try connection.run(
                "DELETE FROM \(schema).queue WHERE seq = $1::int8", [PostgresParameter(.int(sequence), as: .int8)])
            try connection.execute("COMMIT")
        }
    }

    private func decode(_ row: PostgresRow) -> BenchmarkRecord {
        BenchmarkRecord(
            id: row.string(0), title: row.string(1), quantity: row.int64(2), price: row.double(3), done: row.bool(4),
            due: row.int64(5), createdAt: row.int64(6), updatedAt: row.int64(7), version: row.string(8),
            deleted: row.bool(9))
    }

    func lookup(id: String) throws -> BenchmarkRecord? {
        var record: BenchmarkRecord?
        try requireConnection().run(
            "SELECT \(RawPostgresBaseline.columns) FROM \(schema).item WHERE id = $1::text",
            [PostgresParameter(.string(id), as: .text)]
        ) { record = decode($0) }
        return record
    }

    func queryTop() throws -> [BenchmarkRecord] {
        var records: [BenchmarkRecord] = []
        try requireConnection().run(
            "SELECT \(RawPostgresBaseline.columns) FROM \(schema).item WHERE quantity >= $1::int8 AND done = false ORDER BY quantity, id LIMIT $2::int8",
            [
                PostgresParameter(.int(BenchmarkData.queryThreshold), as: .int8),
                PostgresParameter(.int(Int64(BenchmarkData.queryLimit)), as: .int8),
            ]
        ) { records.append(decode($0)) }
        return records
    }

    func deleteAll() throws -> Int {
        let connection = try requireConnection()
        try connection.execute("BEGIN")
        let deleted = try connection.run("DELETE FROM \(schema).item")
        try connection.execute("COMMIT")
        return deleted
    }
}
