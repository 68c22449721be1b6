import OfflineSync

/// How one declared table is laid out in PostgreSQL: its DDL, its statements and how rows decode.
///
/// Built once per open from the stored schema, so the write path does no per-row schema lookup.
///
/// Storage rules (they make PostgreSQL's comparison and ordering agree with
/// ``OfflineSync/ValueSemantics``):
/// - `id` is `text COLLATE "C" PRIMARY KEY` (byte order; ids never contain U+0000).
/// - `string` is `bytea`: PostgreSQL's `text` cannot hold U+0000, which strings may contain, and
///   `bytea` compares by bytes.
/// - `json` is `text COLLATE "C"`, kept byte for byte (not `jsonb`, which would reformat it).
/// - `bool` is `boolean`, `integer` is `int8`, `double` is `float8` (keeps `-0.0`, read and
///   written as IEEE bits), `date` is `int8` milliseconds since 1970 (exactly the core's range
///   and precision, independent of the session's time zone).
/// - Names longer than PostgreSQL's 63 bytes are shortened to a prefix and a hash of the whole
///   name (see ``sqlName(_:)``); the schema record keeps the real names.
/// - Indexes list their columns `NULLS FIRST` (the ascending order of queries) and end with `id`
///   (the final ordering key), so an index serves a filter and an ordering on its columns. A
///   b-tree entry holds at most about 2.7 KB, and string and JSON values have no size limit, so an
///   index holds the first ``indexPrefixLength`` characters (bytes for `bytea`) of such a column
///   instead of the whole value; the translation adds the matching prefix condition and ordering
///   key (see ``prefixed(_:)``), which the whole value then refines, so results are unchanged.
struct PostgresTableLayout {
    let schema: TableSchema
    /// `"schema"."table"`.
    let qualifiedName: String
    let schemaName: String
    /// The SELECT list of every column (`"id", "a", "b"`).
    let allColumns: String
    let lookupSQL: String
    let scanSQL: String
    /// The parameter types of one row of an upsert: `id`, then every column.
    let rowTypes: [PostgresType]
    /// The string and JSON columns that an index holds by prefix.
    let prefixIndexedColumns: Set<String>

    /// How many characters of a string or JSON column an index holds (at most 512 bytes).
    static let indexPrefixLength = 128

    init(_ schema: TableSchema, in schemaName: String) {
        self.schema = schema
        self.schemaName = schemaName
        qualifiedName =
            "\(PostgresTableLayout.quote(schemaName)).\(PostgresTableLayout.quote(PostgresTableLayout.sqlName(schema.name)))"
        allColumns =
            (["\"id\""] + schema.columns.map { PostgresTableLayout.quote(PostgresTableLayout.sqlName($0.name)) })
            .joined(separator: ", ")
        scanSQL = "SELECT \(allColumns) FROM \(qualifiedName)"
        lookupSQL = scanSQL + " WHERE \"id\" = $1::text"
        rowTypes = [.text] + schema.columns.map { PostgresType(storing: $0.type) }
        prefixIndexedColumns = Set(
            schema.indexes.flatMap(\.columns).filter { name in
                let type = schema.column(named: name)?.type
                return type == .string || type == .json
            })
    }

    /// The index prefix of a column's SQL value (see ``indexPrefixLength``).
    static func prefix(_ sql: String) -> String {
        "substring(\(sql) from 1 for \(indexPrefixLength))"
    }

    /// The indexed prefix of a column when an index holds the column by prefix, else `nil`.
    func prefixed(_ column: String) -> String? {
        prefixIndexedColumns.contains(column) ? PostgresTableLayout.prefix(quotedColumn(column)) : nil
    }

    /// A column's quoted SQL name (`id` included).
    func quotedColumn(_ name: String) -> String {
        name == "id" ? "\"id\"" : PostgresTableLayout.quote(PostgresTableLayout.sqlName(name))
    }

    /// `CREATE TABLE` for the whole declaration.
    var createSQL: String {
        let columns = ["\"id\" text COLLATE \"C\" PRIMARY KEY"] + schema.columns.map(definition)
        return "CREATE TABLE \(qualifiedName) (\(columns.joined(separator: ", ")))"
    }

    /// `ALTER TABLE … ADD COLUMN` for a column added on reopen (existing rows read it as null).
    func addColumnSQL(_ column: Column) -> String {
        "ALTER TABLE \(qualifiedName) ADD COLUMN \(definition(column))"
    }

    /// `CREATE INDEX`; index names are per schema in PostgreSQL and per table in OfflineSync, so
    /// the SQL name is `table.index` (names cannot contain a dot, so no two tables' indexes collide).
    func createIndexSQL(_ index: TableIndex) -> String {
        let name = PostgresTableLayout.quote(PostgresTableLayout.sqlName("\(schema.name).\(index.name)"))
        let keys = index.columns.map { "(\(prefixed($0) ?? quotedColumn($0))) ASC NULLS FIRST" } + ["\"id\""]
        return "CREATE INDEX IF NOT EXISTS \(name) ON \(qualifiedName) (\(keys.joined(separator: ", ")))"
    }

    private func definition(_ column: Column) -> String {
        let name = quotedColumn(column.name)
        switch column.type {
        case .bool: return "\(name) boolean"
        case .integer, .date: return "\(name) int8"
        case .double: return "\(name) float8"
        case .string: return "\(name) bytea"
        case .json: return "\(name) text COLLATE \"C\""
        }
    }

    /// `INSERT` of `rows` rows (parameters `$1`… row after row, `id` first) that replaces the whole
    /// row of an existing id (`ON CONFLICT ("id") DO UPDATE`). The rows of one statement must have
    /// distinct ids.
    func upsertSQL(rows: Int) -> String {
        let width = rowTypes.count
        let tuples = (0..<rows).map { row in
            "(" + rowTypes.enumerated().map { "$\(row * width + $0 + 1)::\($1.name)" }.joined(separator: ", ") + ")"
        }
        let assignments = schema.columns.map { "\(quotedColumn($0.name)) = EXCLUDED.\(quotedColumn($0.name))" }
        let conflict =
            assignments.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(assignments.joined(separator: ", "))"
        return
            "INSERT INTO \(qualifiedName) (\(allColumns)) VALUES \(tuples.joined(separator: ", ")) ON CONFLICT (\"id\") \(conflict)"
    }

    /// `DELETE` of `count` ids.
    func deleteSQL(count: Int) -> String {
        "DELETE FROM \(qualifiedName) WHERE \"id\" IN (\((1...count).map { "$\($0)::text" }.joined(separator: ", ")))"
    }

    /// The columns a query returns after `id`: all, or the selection's declared columns.
    func columns(selecting selection: [String]?) -> [Column] {
        guard let selection else { return schema.columns }
        return schema.columns.filter { selection.contains($0.name) }
    }

    /// The item of a row whose columns are `id` followed by `columns`, by position (on the
    /// schema's ``OfflineSync/RowLayout`` when `columns` are all the columns).
    func decode(_ row: PostgresRow, columns: [Column]) -> Item {
        let layout = columns.count == schema.columns.count ? schema.rowLayout : RowLayout(columns.map(\.name))
        var values = [Value?].noValues(count: columns.count)
        for (offset, column) in columns.enumerated() {
            let value = row.value(Int32(offset + 1), as: column.type)
            if !value.isNull { values[offset] = value }
        }
        return Item(id: row.string(0), layout: layout, values: values)
    }

    // MARK: Names

    /// PostgreSQL's longest identifier in bytes (`NAMEDATALEN - 1`); longer ones are truncated.
    static let maximumNameLength = 63

    /// The SQL name of an OfflineSync name: itself when it fits in 63 bytes, otherwise its first 46
    /// characters, `_` and 16 hex digits of its FNV-1a hash (names are ASCII, so bytes are
    /// characters).
    static func sqlName(_ name: String) -> String {
        guard name.utf8.count > maximumNameLength else { return name }
        let hash = String(fnv1a(name), radix: 16)
        return String(name.prefix(46)) + "_" + String(repeating: "0", count: 16 - hash.count) + hash
    }

    /// The 64-bit FNV-1a hash of the UTF-8 bytes.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// Double-quotes an identifier. Every name has passed ``OfflineSync/Identifier`` (letters,
    /// digits, `_`) or is built from such names and `.`, so it contains no quote to escape.
    static func quote(_ name: String) -> String {
        "\"\(name)\""
    }
}
