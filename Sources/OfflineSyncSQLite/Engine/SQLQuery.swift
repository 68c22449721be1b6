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
///   day number, so dates before 1970 fall on the right day and year 9999 works on SQLite 3.15;
///   `hour`/`minute`/`second` are integer arithmetic on the floored milliseconds of the day.
/// - `add`, `sub`, `mul`, `div` and unary minus (`0 - x`) are SQLite's own operators, whose rules
///   are the evaluator's (``OfflineSync/ValueSemantics/arithmetic(_:_:_:)``): integer arithmetic
///   that falls back to doubles on overflow, NULL for a zero divisor and for a NaN result. `mod`
///   is SQLite's `%` only when both operands are integers that cannot have overflowed into
///   doubles (SQLite truncates doubles to integers for `%`; OData keeps the fraction).
/// - `indexof` is `instr - 1` (both count characters, U+0000 included, and match bytes);
///   `concat` is `||`; `trim` is `trim(x, <the evaluator's white space>)`; `replace` is SQLite's
///   when the text to find is a literal that does not start with U+0000 (SQLite treats that as
///   empty) and the replacement is a literal.
/// - `round`/`floor`/`ceiling` of an integer is the integer; of a double, integer arithmetic on
///   the truncated value (exact, unlike SQLite 3.15's `round`, which adds 0.5), with the operand
///   computed once in a correlated subquery so nested calls do not repeat it.
/// - What has no exact translation (`substring`, whose `substr` stops at a U+0000 in text; the
///   cases above; a filter deeper than ``depthLimit`` or longer than ``textLimit`` in SQL) makes
///   ``select(_:on:columns:)`` answer `nil`: the store then reads the rows that the filter's
///   translatable `and` operands select (``candidates(_:on:)``) and runs
///   ``OfflineSync/QueryEvaluator`` over them in Swift. The store does the same when SQLite
///   refuses a statement as too complex to prepare (SQLite 3.15's parser overflows at 15 to 30
///   levels of nesting, far below ``depthLimit``).
/// - Ordering: SQLite sorts NULL first ascending and last descending, text by bytes (BINARY),
///   and `id` ascending is always the last key. Integers and doubles compare exactly on x86-64
///   (SQLite compares them through `long double`).
struct SQLQuery {
    /// The most parameters a statement may have on SQLCipher's SQLite 3.15 (its
    /// `SQLITE_MAX_VARIABLE_NUMBER`). A query needing more (a long `in` list) is answered by
    /// scanning the table and running ``OfflineSync/QueryEvaluator`` in Swift instead.
    static let parameterLimit = 999
    /// The longest SQL text of one filter. Some translations repeat an operand (`endswith`, an
    /// `in` list with null), so a hostile filter could grow exponentially: past this length the
    /// translation stops and the query is evaluated in Swift.
    static let textLimit = 100_000
    /// The deepest filter translated to SQL: a filter node takes up to four levels of SQLite's
    /// expression tree, whose depth SQLite limits to 1000.
    static let depthLimit = 100

    /// The SQL text.
    var sql = ""
    /// The values for parameters `?1`, `?2`, …
    var arguments: [Value] = []
    /// The table the query reads (for the types of its columns).
    private let schema: TableSchema
    /// `false` once a part of the filter had no exact translation; the SQL is then unusable.
    private(set) var isExact = true

    private init(_ layout: TableLayout) {
        self.schema = layout.schema
    }

    /// The SQL can be run: exact, and within SQLite 3.15's parameter limit.
    private var isUsable: Bool { isExact && arguments.count <= SQLQuery.parameterLimit }

    /// The SELECT of `query` (already validated) on `layout`, returning `id` and `columns`, or
    /// `nil` when the query has to be evaluated in Swift over ``candidates(_:on:)``.
    static func select(_ query: Query, on layout: TableLayout, columns: [Column]) -> SQLQuery? {
        var result = SQLQuery(layout)
        let names = ["\"id\""] + columns.map { SQL.quote($0.name) }
        result.sql = "SELECT \(names.joined(separator: ", ")) FROM \(layout.quotedName)"
        result.appendWhere(query.filter)
        result.appendOrderAndPage(query)
        return result.isUsable ? result : nil
    }

    /// The count of the rows matching the query's filter (ignoring order and paging), or `nil`
    /// as for ``select(_:on:columns:)``.
    static func count(_ query: Query, on layout: TableLayout) -> SQLQuery? {
        var result = SQLQuery(layout)
        result.sql = "SELECT count(*) FROM \(layout.quotedName)"
        result.appendWhere(query.filter)
        return result.isUsable ? result : nil
    }

    /// Every column of the rows that the filter's top-level `and` operands with an exact
    /// translation select (every row when none has one): a superset of the matching rows, for
    /// ``OfflineSync/QueryEvaluator`` to finish in Swift.
    static func candidates(_ query: Query, on layout: TableLayout) -> SQLQuery {
        var result = SQLQuery(layout)
        result.sql = layout.scanSQL
        var conditions: [String] = []
        for conjunct in conjuncts(of: query.filter) where depth(of: conjunct) <= depthLimit {
            var attempt = result
            let condition = attempt.whereCondition(conjunct)
            guard attempt.isUsable else { continue }
            result = attempt
            conditions.append(condition)
        }
        if !conditions.isEmpty { result.sql += " WHERE " + conditions.joined(separator: " AND ") }
        return result
    }

    /// The DELETE of the rows the query would return (filter, order, skip and top), or `nil` as
    /// for ``select(_:on:columns:)``.
    /// `countsTruncatedRows`: whether the library counts the rows of a `DELETE` without a
    /// `WHERE` clause (see ``SQLiteAPI/countsTruncatedRows``).
    static func delete(_ query: Query, on layout: TableLayout, countsTruncatedRows: Bool) -> SQLQuery? {
        var result = SQLQuery(layout)
        result.sql = "DELETE FROM \(layout.quotedName)"
        if query.skip == 0, query.top == nil {
            // Without a WHERE clause SQLite empties the table a page at a time (the truncate
            // optimisation), where `WHERE 1` deletes row by row, which is what 3.15 needs to
            // count the deleted rows of a WITHOUT ROWID table.
            if query.filter == nil, countsTruncatedRows { return result }
            result.appendWhere(query.filter ?? .literal(true))
        } else {
            result.sql += " WHERE \"id\" IN (SELECT \"id\" FROM \(layout.quotedName)"
            result.appendWhere(query.filter)
            result.appendOrderAndPage(query)
            result.sql += ")"
        }
        return result.isUsable ? result : nil
    }

    private mutating func appendWhere(_ filter: FilterExpression?) {
        guard let filter else { return }
        guard SQLQuery.depth(of: filter) <= SQLQuery.depthLimit else {
            isExact = false
            return
        }
        sql += " WHERE " + whereCondition(filter)
    }

    /// The top-level `and` operands of a filter.
    private static func conjuncts(of filter: FilterExpression?) -> [FilterExpression] {
        guard let filter else { return [] }
        if case .and(let lhs, let rhs) = filter { return conjuncts(of: lhs) + conjuncts(of: rhs) }
        return [filter]
    }

    /// The levels of an expression tree.
    private static func depth(of expression: FilterExpression) -> Int {
        switch expression {
        case .literal, .column: return 1
        case .not(let operand), .negate(let operand), .isIn(let operand, _): return depth(of: operand) + 1
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            return max(depth(of: lhs), depth(of: rhs)) + 1
        case .function(_, let arguments): return (arguments.map { depth(of: $0) }.max() ?? 0) + 1
        }
    }

    /// `text`, or `NULL` with the translation marked inexact once the SQL grows past
    /// ``textLimit``.
    private mutating func bounded(_ text: String) -> String {
        guard isExact, text.utf8.count <= SQLQuery.textLimit else {
            isExact = false
            return "NULL"
        }
        return text
    }

    /// Marks the translation inexact (the query is then evaluated in Swift).
    private mutating func inexact() -> String {
        isExact = false
        return "NULL"
    }

    /// SQL for a `WHERE` clause, where NULL rejects the row just as 0 does: ordering comparisons
    /// reached through `AND`/`OR` only are left bare (`"quantity" >= ?1`) so that SQLite can
    /// use an index on the column; under `NOT` and everywhere else ``condition(_:)`` applies.
    private mutating func whereCondition(_ expression: FilterExpression) -> String {
        guard isExact else { return "NULL" }
        switch expression {
        case .and(let lhs, let rhs):
            return bounded("(\(whereCondition(lhs)) AND \(whereCondition(rhs)))")
        case .or(let lhs, let rhs):
            return bounded("(\(whereCondition(lhs)) OR \(whereCondition(rhs)))")
        case .comparison(let lhs, let op, let rhs) where op != .eq && op != .ne:
            let left = value(lhs)
            let right = value(rhs)
            let symbol = op == .gt ? ">" : op == .ge ? ">=" : op == .lt ? "<" : "<="
            return bounded("(\(left) \(symbol) \(right))")
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
    private mutating func condition(_ expression: FilterExpression) -> String {
        guard isExact else { return "NULL" }
        return bounded(unboundedCondition(expression))
    }

    private mutating func unboundedCondition(_ expression: FilterExpression) -> String {
        switch expression {
        case .literal(let value):
            return value == .bool(true) ? "1" : "0"
        case .column, .function, .arithmetic, .negate:
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
    private mutating func value(_ expression: FilterExpression) -> String {
        guard isExact else { return "NULL" }
        return bounded(unboundedValue(expression))
    }

    private mutating func unboundedValue(_ expression: FilterExpression) -> String {
        switch expression {
        case .literal(let value):
            return parameter(value)
        case .column(let name):
            return SQL.quote(name)
        case .function(let function, let arguments):
            return call(function, arguments)
        case .arithmetic(let lhs, let op, let rhs):
            if op == .mod, !(isExactInteger(lhs) && isExactInteger(rhs)) { return inexact() }
            let symbol: String
            switch op {
            case .add: symbol = "+"
            case .sub: symbol = "-"
            case .mul: symbol = "*"
            case .div: symbol = "/"
            case .mod: symbol = "%"
            }
            return "(\(value(lhs)) \(symbol) \(value(rhs)))"
        case .negate(let operand):
            return "(0 - \(value(operand)))"
        case .not, .and, .or, .comparison, .isIn:
            return condition(expression)
        }
    }

    /// The static type of a value expression (`nil` for the null literal).
    private func type(of expression: FilterExpression) -> ColumnType? {
        switch expression {
        case .literal(let value): return value.type
        case .column(let name): return name == "id" ? .string : schema.column(named: name)?.type
        case .not, .and, .or, .comparison, .isIn: return .bool
        case .arithmetic(let lhs, _, let rhs):
            return type(of: lhs) == .double || type(of: rhs) == .double ? .double : .integer
        case .negate(let operand): return type(of: operand)
        case .function(let function, let arguments):
            switch function {
            case .round, .floor, .ceiling: return type(of: arguments[0])
            default: return function.resultType
            }
        }
    }

    /// `true` when the expression is an integer or null on every row, never a double: integer
    /// `add`, `sub`, `mul`, `div` and unary minus become doubles when they overflow.
    private func isExactInteger(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .literal(let value): return value.type == .integer || value.isNull
        case .column: return type(of: expression) == .integer
        case .arithmetic(let lhs, .mod, let rhs): return isExactInteger(lhs) && isExactInteger(rhs)
        case .function(.round, let arguments), .function(.floor, let arguments), .function(.ceiling, let arguments):
            return isExactInteger(arguments[0])
        case .function: return type(of: expression) == .integer
        default: return false
        }
    }

    /// The number of Unicode scalars of a text. SQLite's `length` stops at the first U+0000, so a
    /// text containing one is split at each U+0000 by a recursive query (only then: the common
    /// case is plain `length`).
    /// A text that is not a column or a parameter is computed once, in a correlated subquery.
    private static func scalarCount(_ text: String) -> String {
        guard isSimple(text) else { return "(SELECT \(scalarCount("v")) FROM (SELECT \(text) AS v))" }
        let nul = "instr(rest, x'00')"
        return """
            (CASE WHEN instr(CAST(\(text) AS BLOB), x'00') = 0 THEN length(\(text)) ELSE \
            (WITH RECURSIVE split(rest, total) AS (SELECT CAST(\(text) AS BLOB), 0 UNION ALL \
            SELECT substr(rest, \(nul) + 1), total + length(CAST(substr(rest, 1, \(nul) - 1) AS TEXT)) + 1 \
            FROM split WHERE \(nul) > 0) SELECT total + length(CAST(rest AS TEXT)) FROM split WHERE \(nul) = 0) END)
            """
    }

    /// `true` for SQL that is a quoted column name, a parameter or `v`, which can be repeated.
    private static func isSimple(_ sql: String) -> Bool {
        sql == "v" || sql.hasPrefix("?") && sql.dropFirst().allSatisfy(\.isNumber)
            || sql.hasPrefix("\"") && sql.dropFirst().dropLast().allSatisfy { $0 != "\"" } && sql.hasSuffix("\"")
    }

    /// `round`, `floor` or `ceiling` of a double: doubles of magnitude 2^52 and more are
    /// integral already; below, the value minus its truncation is exact, and decides the step.
    private static func rounded(_ number: String, _ function: Function) -> String {
        let truncated = "CAST(v AS INTEGER)"
        let step: String
        switch function {
        case .round: step = " + (v - \(truncated) >= 0.5) - (v - \(truncated) <= -0.5)"
        case .floor: step = " - (v < \(truncated))"
        default: step = " + (v > \(truncated))"
        }
        return """
            (SELECT CASE WHEN abs(v) >= 4503599627370496.0 THEN v ELSE CAST(\(truncated)\(step) AS REAL) END \
            FROM (SELECT \(number) AS v))
            """
    }

    private mutating func call(_ function: Function, _ expressions: [FilterExpression]) -> String {
        func bytes(_ text: String) -> String { "CAST(\(text) AS BLOB)" }
        switch function {
        case .substring:
            return inexact()
        case .replace:
            guard case .literal(let find) = expressions[1], case .literal(let replacement) = expressions[2] else {
                return inexact()
            }
            if find.isNull || replacement.isNull { return "NULL" }
            guard case .string(let text) = find, text.utf8.first != 0 else { return inexact() }
            return "replace(\(value(expressions[0])), \(parameter(find)), \(parameter(replacement)))"
        case .round, .floor, .ceiling:
            switch type(of: expressions[0]) {
            case nil: return "NULL"
            case .double?: return SQLQuery.rounded(value(expressions[0]), function)
            default: return value(expressions[0])
            }
        default:
            break
        }
        let arguments = expressions.map { value($0) }
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
        case .indexOf:
            return "(instr(\(arguments[0]), \(arguments[1])) - 1)"
        case .toLower:
            return "lower(\(arguments[0]))"
        case .toUpper:
            return "upper(\(arguments[0]))"
        case .trim:
            var whiteSpace = String.UnicodeScalarView()
            whiteSpace.append(contentsOf: QueryEvaluator.whiteSpace.sorted { $0.value < $1.value })
            return "trim(\(arguments[0]), \(parameter(.string(String(whiteSpace)))))"
        case .concat:
            return "(\(arguments[0]) || \(arguments[1]))"
        case .length:
            return SQLQuery.scalarCount(arguments[0])
        case .year, .month, .day:
            let format = function == .year ? "%Y" : (function == .month ? "%m" : "%d")
            let date = arguments[0]
            // The Julian day number of the UTC day (days floored, so before 1970 too). SQLite 3.15's
            // 'unixepoch' modifier overflows near year 9999; a Julian day number does not.
            let julianDay = "((\(date) - (((\(date) % 86400000) + 86400000) % 86400000)) / 86400000 + 2440587.5)"
            return "CAST(strftime('\(format)', \(julianDay)) AS INTEGER)"
        case .hour, .minute, .second:
            let millisecondOfDay = "(((\(arguments[0]) % 86400000) + 86400000) % 86400000)"
            switch function {
            case .hour: return "(\(millisecondOfDay) / 3600000)"
            case .minute: return "(\(millisecondOfDay) % 3600000 / 60000)"
            default: return "(\(millisecondOfDay) % 60000 / 1000)"
            }
        case .substring, .replace, .round, .floor, .ceiling:
            return inexact()
        }
    }
}
