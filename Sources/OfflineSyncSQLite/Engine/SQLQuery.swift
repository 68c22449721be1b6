import OfflineSync

/// A query translated to SQL: the text (identifiers quoted, values replaced by numbered
/// parameters) and the values to bind.
///
/// The translation reproduces ``OfflineSync/QueryEvaluator`` exactly, using only what SQLite 3.15
/// has (no JSON functions), and every choice is checked against the evaluator by the tests on both
/// SQLite 3.40 and SQLCipher's 3.15:
/// - Every boolean node yields 0 or 1, never NULL: `eq`/`ne` are `IS`/`IS NOT` (null-safe),
///   other comparisons and boolean columns or functions in a condition are wrapped in
///   `coalesce(…, 0)`, so `NOT` of a comparison with null is true, as in the evaluator. In a
///   `WHERE` clause, ordering comparisons reached through `AND`/`OR` only stay bare (NULL rejects
///   the row as 0 does), so an index on the compared column can serve them.
/// - Functions of a null argument are NULL (SQLite's functions propagate NULL).
/// - `startswith`/`endswith` compare bytes (`CAST … AS BLOB`, `substr` on blobs) with a sentinel
///   byte so empty strings stay non-empty blobs; `contains` is `instr`, which matches bytes and
///   finds an empty needle at position 1.
/// - `tolower`/`toupper` are SQLite's `lower`/`upper`, which change ASCII letters only
///   (no ICU is compiled into either library; the tests check it).
/// - `length` counts scalars past a U+0000 too (see ``scalarCount(_:)``).
/// - `year`/`month`/`day` floor the milliseconds to the UTC day and hand `strftime` its Julian
///   day number, so dates before 1970 fall on the right day and year 9999 works on SQLite 3.15.
/// - Ordering: SQLite sorts NULL first ascending and last descending, text by bytes (BINARY),
///   and `id` ascending is always the last key. Integers and doubles compare exactly on x86-64
///   (SQLite compares them through `long double`).
struct SQLQuery {
    /// The most parameters a statement may have on SQLCipher's SQLite 3.15 (its
    /// `SQLITE_MAX_VARIABLE_NUMBER`). A query needing more (a long `in` list) is answered by
    /// scanning the table and running ``OfflineSync/QueryEvaluator`` in Swift instead.
    static let parameterLimit = 999

    /// The SQL text.
    var sql = ""
    /// The values for parameters `?1`, `?2`, …
    var arguments: [Value] = []

    /// The SELECT of `query` (already validated) on `layout`, returning `id` and `columns`.
    static func select(_ query: Query, on layout: TableLayout, columns: [Column]) -> SQLQuery {
        var result = SQLQuery()
        let names = ["\"id\""] + columns.map { SQL.quote($0.name) }
        result.sql = "SELECT \(names.joined(separator: ", ")) FROM \(layout.quotedName)"
        result.appendWhere(query.filter)
        result.appendOrderAndPage(query)
        return result
    }

    /// The count of the rows matching the query's filter (ignoring order and paging).
    static func count(_ query: Query, on layout: TableLayout) -> SQLQuery {
        var result = SQLQuery()
        result.sql = "SELECT count(*) FROM \(layout.quotedName)"
        result.appendWhere(query.filter)
        return result
    }

    /// The DELETE of the rows the query would return (filter, order, skip and top).
    static func delete(_ query: Query, on layout: TableLayout) -> SQLQuery {
        var result = SQLQuery()
        result.sql = "DELETE FROM \(layout.quotedName)"
        if query.skip == 0, query.top == nil {
            // Without a WHERE clause SQLite 3.15 truncates a WITHOUT ROWID table without counting
            // the deleted rows; `WHERE 1` turns the truncate optimisation off.
            result.appendWhere(query.filter ?? .literal(true))
        } else {
            result.sql += " WHERE \"id\" IN (SELECT \"id\" FROM \(layout.quotedName)"
            result.appendWhere(query.filter)
            result.appendOrderAndPage(query)
            result.sql += ")"
        }
        return result
    }

    private mutating func appendWhere(_ filter: Expression?) {
        guard let filter else { return }
        sql += " WHERE " + whereCondition(filter)
    }

    /// SQL for a `WHERE` clause, where NULL rejects the row just as 0 does: ordering comparisons
    /// reached through `AND`/`OR` only are left bare (`"quantity" >= ?1`) so that SQLite can
    /// use an index on the column; under `NOT` and everywhere else ``condition(_:)`` applies.
    private mutating func whereCondition(_ expression: Expression) -> String {
        switch expression {
        case .and(let lhs, let rhs):
            return "(\(whereCondition(lhs)) AND \(whereCondition(rhs)))"
        case .or(let lhs, let rhs):
            return "(\(whereCondition(lhs)) OR \(whereCondition(rhs)))"
        case .comparison(let lhs, let op, let rhs) where op != .eq && op != .ne:
            let left = value(lhs)
            let right = value(rhs)
            let symbol = op == .gt ? ">" : op == .ge ? ">=" : op == .lt ? "<" : "<="
            return "(\(left) \(symbol) \(right))"
        default:
            return condition(expression)
        }
    }

    private mutating func appendOrderAndPage(_ query: Query) {
        var keys = query.orderBy.map { "\(SQL.quote($0.column)) \($0.descending ? "DESC" : "ASC")" }
        if !query.orderBy.contains(where: { $0.column == "id" }) { keys.append("\"id\" ASC") }
        sql += " ORDER BY " + keys.joined(separator: ", ")
        if query.top != nil || query.skip > 0 {
            sql += " LIMIT \(parameter(.int(Int64(query.top ?? -1)))) OFFSET \(parameter(.int(Int64(query.skip))))"
        }
    }

    /// Binds `value` and returns its numbered parameter (numbered, so one value can be used twice).
    private mutating func parameter(_ value: Value) -> String {
        arguments.append(value)
        return "?\(arguments.count)"
    }

    /// SQL that is 1 when the expression is `true` and 0 otherwise (null included).
    private mutating func condition(_ expression: Expression) -> String {
        switch expression {
        case .literal(let value):
            return value == .bool(true) ? "1" : "0"
        case .column, .function:
            return "coalesce(\(self.value(expression)), 0)"
        case .not(let operand):
            return "(NOT \(condition(operand)))"
        case .and(let lhs, let rhs):
            return "(\(condition(lhs)) AND \(condition(rhs)))"
        case .or(let lhs, let rhs):
            return "(\(condition(lhs)) OR \(condition(rhs)))"
        case .comparison(let lhs, let op, let rhs):
            let left = value(lhs)
            let right = value(rhs)
            switch op {
            case .eq: return "(\(left) IS \(right))"
            case .ne: return "(\(left) IS NOT \(right))"
            case .gt: return "coalesce(\(left) > \(right), 0)"
            case .ge: return "coalesce(\(left) >= \(right), 0)"
            case .lt: return "coalesce(\(left) < \(right), 0)"
            case .le: return "coalesce(\(left) <= \(right), 0)"
            }
        case .isIn(.column("id"), let values) where !values.contains(where: \.isNull):
            // `id` is never null, so the list test is never null either: left bare (no
            // coalesce), it is answered from the primary key instead of a scan.
            return values.isEmpty ? "0" : "(\"id\" IN (\(values.map { parameter($0) }.joined(separator: ", "))))"
        case .isIn(let operand, let values):
            let operandSQL = value(operand)
            var alternatives: [String] = []
            let listed = values.filter { !$0.isNull }
            if !listed.isEmpty {
                let parameters = listed.map { parameter($0) }
                alternatives.append("coalesce(\(operandSQL) IN (\(parameters.joined(separator: ", "))), 0)")
            }
            if listed.count < values.count { alternatives.append("(\(operandSQL) IS NULL)") }
            return alternatives.isEmpty ? "0" : "(\(alternatives.joined(separator: " OR ")))"
        }
    }

    /// SQL for the value of an expression (NULL where the evaluator gives null).
    private mutating func value(_ expression: Expression) -> String {
        switch expression {
        case .literal(let value):
            return parameter(value)
        case .column(let name):
            return SQL.quote(name)
        case .function(let function, let arguments):
            return call(function, arguments.map { value($0) })
        case .not, .and, .or, .comparison, .isIn:
            return condition(expression)
        }
    }

    /// The number of Unicode scalars of a text. SQLite's `length` stops at the first U+0000, so a
    /// text containing one is split at each U+0000 by a recursive query (only then: the common
    /// case is plain `length`).
    private static func scalarCount(_ text: String) -> String {
        let nul = "instr(rest, x'00')"
        return """
            (CASE WHEN instr(CAST(\(text) AS BLOB), x'00') = 0 THEN length(\(text)) ELSE \
            (WITH RECURSIVE split(rest, total) AS (SELECT CAST(\(text) AS BLOB), 0 UNION ALL \
            SELECT substr(rest, \(nul) + 1), total + length(CAST(substr(rest, 1, \(nul) - 1) AS TEXT)) + 1 \
            FROM split WHERE \(nul) > 0) SELECT total + length(CAST(rest AS TEXT)) FROM split WHERE \(nul) = 0) END)
            """
    }

    private func call(_ function: Function, _ arguments: [String]) -> String {
        func bytes(_ text: String) -> String { "CAST(\(text) AS BLOB)" }
        switch function {
        case .startsWith:
            let (text, prefix) = (arguments[0], arguments[1])
            return
                "(substr(\(bytes("'#' || \(text)")), 1, length(\(bytes(prefix))) + 1) = \(bytes("'#' || \(prefix)")))"
        case .endsWith:
            let (text, suffix) = (arguments[0], arguments[1])
            return
                "(length(\(bytes(text))) >= length(\(bytes(suffix))) AND substr(\(bytes("\(text) || '#'")), length(\(bytes(text))) - length(\(bytes(suffix))) + 1) = \(bytes("\(suffix) || '#'")))"
        case .contains:
            return "(instr(\(arguments[0]), \(arguments[1])) > 0)"
        case .toLower:
            return "lower(\(arguments[0]))"
        case .toUpper:
            return "upper(\(arguments[0]))"
        case .length:
            return SQLQuery.scalarCount(arguments[0])
        case .year, .month, .day:
            let format = function == .year ? "%Y" : (function == .month ? "%m" : "%d")
            let date = arguments[0]
            // The Julian day number of the UTC day (days floored, so before 1970 too). SQLite 3.15's
            // 'unixepoch' modifier overflows near year 9999; a Julian day number does not.
            let julianDay = "((\(date) - (((\(date) % 86400000) + 86400000) % 86400000)) / 86400000 + 2440587.5)"
            return "CAST(strftime('\(format)', \(julianDay)) AS INTEGER)"
        }
    }
}
