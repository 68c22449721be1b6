import OfflineSync

/// How one declared table is laid out in SQL: its DDL, its insert statement and how rows decode.
///
/// Built once per open from the stored schema, so the write path does no per-row schema lookup.
/// A class, so that handing a layout to each statement of a transaction retains one reference
/// instead of copying the schema and every SQL string (a struct copy cost a retain per field on
/// every lookup and upsert call).
///
/// Storage rules (they make SQLite's comparison and ordering agree with ``OfflineSync/ValueSemantics``):
/// - `id` is `TEXT PRIMARY KEY` with the default BINARY collation (byte order), in a
///   `WITHOUT ROWID` table so the primary key is the only B-tree.
/// - `bool` is `INTEGER` 0/1, `integer` is `INTEGER`, `date` is `INTEGER` milliseconds since 1970
///   (negative before it), `string` and `json` are `TEXT` compared by bytes.
/// - `double` columns are declared **without a type** (BLOB affinity): a `REAL` column stores
///   integral values as integers to save space and reads them back as `+0.0`, losing the sign of
///   `-0.0`; without affinity a double is always stored as an 8-byte IEEE value.
final class TableLayout: Sendable {
    let schema: TableSchema
    let quotedName: String
    /// `INSERT` of the id (`?1`) and every column (`?2`…), in ``TableSchema/columns`` order.
    let insertSQL: String
    /// `UPDATE` of every column by id, with the same parameter numbers as ``insertSQL``, so one
    /// binding serves both; `nil` for a table without columns. An upsert inserts and, when the id
    /// exists, updates every column, which replaces the whole row. (SQLite 3.15 has no
    /// `ON CONFLICT … DO UPDATE`, and its `INSERT OR REPLACE` into a `WITHOUT ROWID` table is
    /// about ten times slower than `INSERT`.)
    let updateSQL: String?
    let lookupSQL: String
    /// Every row, every column (for queries evaluated in Swift, see ``SQLQuery/parameterLimit``).
    let scanSQL: String
    let deleteSQL: String

    init(_ schema: TableSchema) {
        self.schema = schema
        quotedName = SQL.quote(schema.name)
        let names = ["id"] + schema.columns.map(\.name)
        insertSQL =
            "INSERT INTO \(quotedName) (\(names.map(SQL.quote).joined(separator: ", "))) VALUES (\((1...names.count).map { "?\($0)" }.joined(separator: ", ")))"
        let assignments = schema.columns.enumerated().map { "\(SQL.quote($1.name)) = ?\($0 + 2)" }
        updateSQL =
            assignments.isEmpty
            ? nil : "UPDATE \(quotedName) SET \(assignments.joined(separator: ", ")) WHERE \"id\" = ?1"
        scanSQL = "SELECT \(names.map(SQL.quote).joined(separator: ", ")) FROM \(quotedName)"
        lookupSQL = scanSQL + " WHERE \"id\" = ?"
        deleteSQL = "DELETE FROM \(quotedName) WHERE \"id\" = ?"
    }

    /// `CREATE TABLE` for the whole declaration.
    var createSQL: String {
        let columns = ["\"id\" TEXT PRIMARY KEY NOT NULL"] + schema.columns.map(TableLayout.definition)
        return "CREATE TABLE IF NOT EXISTS \(quotedName) (\(columns.joined(separator: ", "))) WITHOUT ROWID"
    }

    /// `ALTER TABLE … ADD COLUMN` for a column added on reopen (existing rows read it as null).
    func addColumnSQL(_ column: Column) -> String {
        "ALTER TABLE \(quotedName) ADD COLUMN \(TableLayout.definition(column))"
    }

    /// `CREATE INDEX IF NOT EXISTS`; index names are per table, so the SQL name is `table.index`
    /// (names cannot contain a dot, so no two tables' indexes collide).
    func createIndexSQL(_ index: TableIndex) -> String {
        "CREATE INDEX IF NOT EXISTS \(SQL.quote("\(schema.name).\(index.name)")) ON \(quotedName) (\(index.columns.map(SQL.quote).joined(separator: ", ")))"
    }

    private static func definition(_ column: Column) -> String {
        let type = sqlType(column.type)
        return type.isEmpty ? SQL.quote(column.name) : "\(SQL.quote(column.name)) \(type)"
    }

    /// The SQL type a column of `type` is declared with (see the storage rules above; empty for
    /// `double`, which has no affinity).
    static func sqlType(_ type: ColumnType) -> String {
        switch type {
        case .bool, .integer, .date: "INTEGER"
        case .string, .json: "TEXT"
        case .double: ""
        }
    }

    /// The columns a query returns after `id`: all, or the selection's declared columns.
    func columns(selecting selection: [String]?) -> ResultColumns {
        guard let selection else { return ResultColumns(columns: schema.columns, layout: schema.rowLayout) }
        let columns = schema.columns.filter { selection.contains($0.name) }
        return ResultColumns(columns: columns, layout: RowLayout(columns.map(\.name)))
    }

    /// Every column, on the schema's own ``OfflineSync/RowLayout``.
    var allColumns: ResultColumns { ResultColumns(columns: schema.columns, layout: schema.rowLayout) }

    /// The item of the statement's current row, whose columns are `id` followed by `columns`:
    /// its values by position on the columns' layout (no name looked up or hashed).
    func decode(_ statement: Statement, columns: ResultColumns) -> Item {
        var values = [Value?].noValues(count: columns.columns.count)
        columns.columns.withUnsafeBufferPointer { columns in
            for offset in columns.indices {
                let value = statement.value(Int32(offset + 1), as: columns[offset].type)
                if !value.isNull { values[offset] = value }
            }
        }
        return Item(id: statement.text(0), layout: columns.layout, values: values)
    }
}

/// The columns a statement returns after `id`, and the layout of the items read from it.
struct ResultColumns {
    let columns: [Column]
    let layout: RowLayout
}

/// SQL text helpers.
enum SQL {
    /// Double-quotes an identifier. Every name has passed ``OfflineSync/Identifier`` (letters,
    /// digits, `_`) or is built from such names and `.`, so it contains no quote to escape.
    static func quote(_ name: String) -> String {
        "\"\(name)\""
    }
}
