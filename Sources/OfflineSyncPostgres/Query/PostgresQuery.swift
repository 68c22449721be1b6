import OfflineSync

/// A query translated to PostgreSQL: the text (identifiers quoted, values replaced by typed,
/// numbered parameters `$1::int8`) and the values to bind.
///
/// The translation reproduces ``OfflineSync/QueryEvaluator`` exactly on the storage of
/// ``PostgresTableLayout`` (strings as `bytea`, ids and JSON as `text COLLATE "C"`, dates as `int8`
/// milliseconds), and the conformance suite checks it against the evaluator:
/// - Parts of a filter that name no column are evaluated in Swift by the evaluator itself and
///   become constants, so literal-only comparisons never reach SQL.
/// - Every condition yields `true` or `false`, never NULL: `eq`/`ne` are `IS [NOT] DISTINCT FROM`
///   (null-safe), other comparisons and boolean columns or functions are wrapped in
///   `coalesce(…, false)`, so `not` of a comparison with null is true, as in the evaluator. In a
///   `WHERE` clause, comparisons with a non-null literal reached through `AND`/`OR` only stay bare
///   (`"priority" = $1`, NULL rejects the row as false does) so that an index can serve them.
/// - Strings compare by bytes: `bytea` compares with `memcmp`, `text COLLATE "C"` likewise; a
///   string compared with an id or JSON text converts the text with `convert_to(…, 'UTF8')`.
/// - Integers and doubles compare exactly (PostgreSQL would round the integer to a double): a
///   mixed comparison compares the rounded integer first and, when that ties, the integer with the
///   double converted to an integer (clamped, so the cast can never overflow).
/// - Functions work on bytes: `startswith`/`endswith` are `substring` of `bytea`, `contains` is
///   `position` (an empty needle is found at 1), `tolower`/`toupper` are `lower`/`upper` under the
///   `C` collation (ASCII letters only) on the `escape` encoding of the bytes (non-ASCII bytes are
///   octal escapes there, so they cannot change), `length` counts the bytes that do not continue a
///   UTF-8 sequence (U+0000 included), and `year`/`month`/`day` floor the milliseconds to the UTC
///   day and read a `date`, so dates before 1970 and year 9999 work; `hour`/`minute`/`second`
///   are integer arithmetic on the floored milliseconds of the day; `concat` is `||` of `bytea`.
/// - What has no exact translation yet (arithmetic, `indexof`, `substring`, `trim`, `replace`,
///   `round`, `floor`, `ceiling`; a filter deeper than ``depthLimit`` or longer than
///   ``textLimit`` in SQL) makes ``select(_:on:columns:)`` answer `nil`: the store then reads
///   the rows that the filter's translatable `and` operands select (``candidates(_:on:)``) and
///   runs ``OfflineSync/QueryEvaluator`` over them in Swift.
/// - Ordering: `ASC NULLS FIRST` / `DESC NULLS LAST` (PostgreSQL's default puts nulls last), then
///   `"id" ASC`.
struct PostgresQuery {
    /// The most parameters a statement may have (PostgreSQL's protocol counts them in 16 bits).
    /// A query needing more (a long `in` list) is answered by scanning the table and running
    /// ``OfflineSync/QueryEvaluator`` in Swift instead.
    static let parameterLimit = 65_535
    /// The longest SQL text of one filter. Some translations repeat an operand (`endswith`, an
    /// exact integer–double comparison), so a hostile filter could grow exponentially: past this
    /// length the translation stops and the query is evaluated in Swift.
    static let textLimit = 100_000
    /// The deepest filter translated to SQL (PostgreSQL's parser and planner recurse per level).
    static let depthLimit = 100

    /// The SQL text.
    var sql = ""
    /// The values for `$1`, `$2`, …
    var parameters: [PostgresParameter] = []
    private let layout: PostgresTableLayout
    /// `false` once a part of the filter had no exact translation; the SQL is then unusable.
    private var isExact = true

    private init(layout: PostgresTableLayout) {
        self.layout = layout
    }

    /// The SQL can be run: exact, short enough and within the parameter limit.
    private var isUsable: Bool {
        isExact && parameters.count <= PostgresQuery.parameterLimit && sql.utf8.count <= PostgresQuery.textLimit
    }

    /// The SELECT of `query` (already validated), returning `id` and `columns`, or `nil` when the
    /// query has to be evaluated in Swift over ``candidates(_:on:)``.
    static func select(_ query: Query, on layout: PostgresTableLayout, columns: [Column]) -> PostgresQuery? {
        var result = PostgresQuery(layout: layout)
        let names = ["\"id\""] + columns.map { layout.quotedColumn($0.name) }
        result.sql = "SELECT \(names.joined(separator: ", ")) FROM \(layout.qualifiedName)"
        result.appendWhere(query.filter)
        result.appendOrderAndPage(query)
        return result.isUsable ? result : nil
    }

    /// The count of the rows matching the query's filter (ignoring order and paging), or `nil`
    /// as for ``select(_:on:columns:)``.
    static func count(_ query: Query, on layout: PostgresTableLayout) -> PostgresQuery? {
        var result = PostgresQuery(layout: layout)
        result.sql = "SELECT count(*) FROM \(layout.qualifiedName)"
        result.appendWhere(query.filter)
        return result.isUsable ? result : nil
    }

    /// Every column of the rows that the filter's top-level `and` operands with an exact
    /// translation select (every row when none has one): a superset of the matching rows, for
    /// ``OfflineSync/QueryEvaluator`` to finish in Swift.
    static func candidates(_ query: Query, on layout: PostgresTableLayout) -> PostgresQuery {
        var result = PostgresQuery(layout: layout)
        result.sql = layout.scanSQL
        var conditions: [String] = []
        for conjunct in conjuncts(of: query.filter) where depth(of: conjunct) <= depthLimit {
            var attempt = result
            let condition = attempt.whereCondition(folded(conjunct))
            guard attempt.isUsable, condition.utf8.count <= textLimit else { continue }
            result = attempt
            conditions.append(condition)
        }
        if !conditions.isEmpty { result.sql += " WHERE " + conditions.joined(separator: " AND ") }
        return result
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

    /// Marks the translation inexact (the query is then evaluated in Swift).
    private mutating func inexact() -> String {
        isExact = false
        return "NULL"
    }

    /// The DELETE of the rows the query would return (filter, order, skip and top), or `nil` as
    /// for ``select(_:on:columns:)``.
    static func delete(_ query: Query, on layout: PostgresTableLayout) -> PostgresQuery? {
        var result = PostgresQuery(layout: layout)
        result.sql = "DELETE FROM \(layout.qualifiedName)"
        if query.skip == 0, query.top == nil {
            result.appendWhere(query.filter)
        } else {
            result.sql += " WHERE \"id\" IN (SELECT \"id\" FROM \(layout.qualifiedName)"
            result.appendWhere(query.filter)
            result.appendOrderAndPage(query)
            result.sql += ")"
        }
        return result.isUsable ? result : nil
    }

    private mutating func appendWhere(_ filter: FilterExpression?) {
        guard let filter else { return }
        guard PostgresQuery.depth(of: filter) <= PostgresQuery.depthLimit else {
            isExact = false
            return
        }
        sql += " WHERE " + whereCondition(PostgresQuery.folded(filter))
    }

    private mutating func appendOrderAndPage(_ query: Query) {
        var keys: [String] = []
        for key in query.orderBy {
            let direction = key.descending ? "DESC NULLS LAST" : "ASC NULLS FIRST"
            // The indexed prefix first (so the index can serve the order), refined by the value.
            if let prefix = layout.prefixed(key.column) { keys.append("\(prefix) \(direction)") }
            keys.append("\(layout.quotedColumn(key.column)) \(direction)")
        }
        if !query.orderBy.contains(where: { $0.column == "id" }) { keys.append("\"id\" ASC") }
        sql += " ORDER BY " + keys.joined(separator: ", ")
        if let top = query.top { sql += " LIMIT \(parameter(.int(Int64(top)), as: .int8))" }
        if query.skip > 0 { sql += " OFFSET \(parameter(.int(Int64(query.skip)), as: .int8))" }
    }

    /// Binds `value` and returns its typed, numbered parameter (numbered, so one value can be
    /// used twice).
    private mutating func parameter(_ value: Value, as type: PostgresType) -> String {
        parameters.append(PostgresParameter(value, as: type))
        return "$\(parameters.count)::\(type.name)"
    }

    // MARK: Constant folding

    /// `expression` with every part that names no column replaced by its value under the
    /// reference evaluator.
    static func folded(_ expression: FilterExpression) -> FilterExpression {
        if !namesColumn(expression) {
            return .literal(QueryEvaluator.evaluate(expression, on: Item(id: "")))
        }
        switch expression {
        case .literal, .column: return expression
        case .not(let operand): return .not(folded(operand))
        case .and(let lhs, let rhs): return .and(folded(lhs), folded(rhs))
        case .or(let lhs, let rhs): return .or(folded(lhs), folded(rhs))
        case .comparison(let lhs, let op, let rhs): return .comparison(folded(lhs), op, folded(rhs))
        case .isIn(let operand, let values): return .isIn(folded(operand), values)
        case .function(let function, let arguments): return .function(function, arguments.map(folded))
        case .arithmetic(let lhs, let op, let rhs): return .arithmetic(folded(lhs), op, folded(rhs))
        case .negate(let operand): return .negate(folded(operand))
        }
    }

    private static func namesColumn(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .literal: return false
        case .column: return true
        case .not(let operand), .negate(let operand): return namesColumn(operand)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            return namesColumn(lhs) || namesColumn(rhs)
        case .isIn(let operand, _): return namesColumn(operand)
        case .function(_, let arguments): return arguments.contains(where: namesColumn)
        }
    }

    // MARK: Operands

    /// What an operand is in SQL.
    private enum Kind {
        case bool, int, double, bytes, text, null
    }

    /// An operand's SQL, its kind, and whether it is a bound literal.
    private struct Operand {
        var sql: String
        var kind: Kind
        var isLiteral = false
    }

    private func columnKind(_ name: String) -> Kind {
        if name == "id" { return .text }
        switch layout.schema.column(named: name)?.type ?? .string {
        case .bool: return .bool
        case .integer, .date: return .int
        case .double: return .double
        case .string: return .bytes
        case .json: return .text
        }
    }

    /// The kind an expression will have, before any SQL is generated (literal strings report
    /// `.bytes`; they bind as `text` next to a `text` operand).
    private func kind(of expression: FilterExpression) -> Kind {
        switch expression {
        case .literal(let value):
            switch value {
            case .null: return .null
            case .bool: return .bool
            case .int, .date: return .int
            case .double: return .double
            case .string, .json: return .bytes
            }
        case .column(let name): return columnKind(name)
        case .function(let function, _):
            switch function.resultType {
            case .bool: return .bool
            case .string: return .bytes
            case .double: return .double
            default: return .int
            }
        case .not, .and, .or, .comparison, .isIn: return .bool
        case .arithmetic, .negate: return .double
        }
    }

    /// A literal; strings and JSON bind as `text` when `hint` is `.text` and they contain no
    /// U+0000 (which `text` cannot hold), as `bytea` otherwise.
    private mutating func literal(_ value: Value, hint: Kind?) -> Operand {
        switch value {
        case .null: return Operand(sql: "NULL", kind: .null, isLiteral: true)
        case .bool: return Operand(sql: parameter(value, as: .bool), kind: .bool, isLiteral: true)
        case .int, .date: return Operand(sql: parameter(value, as: .int8), kind: .int, isLiteral: true)
        case .double: return Operand(sql: parameter(value, as: .float8), kind: .double, isLiteral: true)
        case .string(let text), .json(let text):
            if hint == .text, !text.utf8.contains(0) {
                return Operand(sql: parameter(.string(text), as: .text), kind: .text, isLiteral: true)
            }
            return Operand(sql: parameter(.string(text), as: .bytea), kind: .bytes, isLiteral: true)
        }
    }

    private mutating func operand(_ expression: FilterExpression, hint: Kind? = nil) -> Operand {
        switch expression {
        case .literal(let value):
            return literal(value, hint: hint)
        case .column(let name):
            return Operand(sql: layout.quotedColumn(name), kind: columnKind(name))
        case .function(let function, let arguments):
            return call(function, arguments)
        case .not, .and, .or, .comparison, .isIn:
            return Operand(sql: condition(expression), kind: .bool)
        case .arithmetic, .negate:
            return Operand(sql: inexact(), kind: kind(of: expression))
        }
    }

    /// The operand as `bytea` (text converted; a null typed).
    private mutating func bytes(_ expression: FilterExpression) -> String {
        let value = operand(expression)
        switch value.kind {
        case .text: return "convert_to(\(value.sql), 'UTF8')"
        case .null: return "NULL::bytea"
        default: return value.sql
        }
    }

    private mutating func call(_ function: Function, _ arguments: [FilterExpression]) -> Operand {
        switch function {
        case .startsWith, .endsWith, .contains:
            let text = bytes(arguments[0])
            let needle = bytes(arguments[1])
            let sql: String
            switch function {
            case .startsWith:
                sql = "(substring(\(text) from 1 for length(\(needle))) = \(needle))"
            case .endsWith:
                sql = "(substring(\(text) from greatest(length(\(text)) - length(\(needle)) + 1, 1)) = \(needle))"
            default:
                sql = "(position(\(needle) in \(text)) > 0)"
            }
            return Operand(sql: sql, kind: .bool)
        case .toLower, .toUpper:
            let name = function == .toLower ? "lower" : "upper"
            return Operand(
                sql: "decode(\(name)(encode(\(bytes(arguments[0])), 'escape') COLLATE \"C\"), 'escape')", kind: .bytes)
        case .length:
            let hex = "encode(\(bytes(arguments[0])), 'hex')"
            return Operand(
                sql:
                    "(length(regexp_replace(regexp_replace(\(hex), '(..)', ' \\1', 'g'), ' [89ab].', '', 'g')) / 3)::int8",
                kind: .int)
        case .year, .month, .day:
            let field = function == .year ? "year" : (function == .month ? "month" : "day")
            let date = operand(arguments[0])
            let milliseconds = date.kind == .null ? "NULL::int8" : date.sql
            let day =
                "((\(milliseconds) - (((\(milliseconds) % 86400000) + 86400000) % 86400000)) / 86400000)::int4"
            return Operand(sql: "extract(\(field) from (DATE '1970-01-01' + \(day)))::int8", kind: .int)
        case .hour, .minute, .second:
            let date = operand(arguments[0])
            let milliseconds = date.kind == .null ? "NULL::int8" : date.sql
            let ofDay = "(((\(milliseconds) % 86400000) + 86400000) % 86400000)"
            let sql =
                switch function {
                case .hour: "(\(ofDay) / 3600000)"
                case .minute: "(\(ofDay) / 60000 % 60)"
                default: "(\(ofDay) / 1000 % 60)"
                }
            return Operand(sql: sql, kind: .int)
        case .concat:
            return Operand(sql: "(\(bytes(arguments[0])) || \(bytes(arguments[1])))", kind: .bytes)
        case .indexOf, .substring, .trim, .replace, .round, .floor, .ceiling:
            return Operand(sql: inexact(), kind: kind(of: .function(function, arguments)))
        }
    }

    // MARK: Conditions

    /// SQL for a `WHERE` clause, where NULL rejects the row just as false does: comparisons
    /// reached through `AND`/`OR` only may stay bare; under `NOT` ``condition(_:)`` applies.
    private mutating func whereCondition(_ expression: FilterExpression) -> String {
        switch expression {
        case .and(let lhs, let rhs):
            return "(\(whereCondition(lhs)) AND \(whereCondition(rhs)))"
        case .or(let lhs, let rhs):
            return "(\(whereCondition(lhs)) OR \(whereCondition(rhs)))"
        case .comparison(let lhs, let op, let rhs):
            return comparison(lhs, op, rhs, bare: true)
        case .isIn(let operand, let values):
            return membership(operand, values, bare: true)
        default:
            return condition(expression)
        }
    }

    /// SQL that is `true` when the expression is true and `false` otherwise (null included).
    private mutating func condition(_ expression: FilterExpression) -> String {
        switch expression {
        case .literal(let value):
            return value == .bool(true) ? "true" : "false"
        case .column, .function:
            return "coalesce(\(operand(expression).sql), false)"
        case .not(let operand):
            return "(NOT \(condition(operand)))"
        case .and(let lhs, let rhs):
            return "(\(condition(lhs)) AND \(condition(rhs)))"
        case .or(let lhs, let rhs):
            return "(\(condition(lhs)) OR \(condition(rhs)))"
        case .comparison(let lhs, let op, let rhs):
            return comparison(lhs, op, rhs, bare: false)
        case .isIn(let operand, let values):
            return membership(operand, values, bare: false)
        case .arithmetic, .negate:
            return inexact()
        }
    }

    private static func symbol(_ op: ComparisonOperator) -> String {
        switch op {
        case .eq: return "="
        case .ne: return "<>"
        case .gt: return ">"
        case .ge: return ">="
        case .lt: return "<"
        case .le: return "<="
        }
    }

    /// A comparison; `bare` allows a NULL result where false is meant (a positive `WHERE` context).
    private mutating func comparison(
        _ lhs: FilterExpression, _ op: ComparisonOperator, _ rhs: FilterExpression, bare: Bool
    )
        -> String
    {
        if lhs == .literal(.null) || rhs == .literal(.null) {
            let other = operand(lhs == .literal(.null) ? rhs : lhs).sql
            switch op {
            case .eq: return "(\(other) IS NULL)"
            case .ne: return "(\(other) IS NOT NULL)"
            default: return "false"
            }
        }
        let leftKind = kind(of: lhs)
        let rightKind = kind(of: rhs)
        var left = operand(lhs, hint: rightKind == .text ? .text : nil)
        var right = operand(rhs, hint: leftKind == .text ? .text : nil)
        switch (left.kind, right.kind) {
        case (.int, .double):
            return exactComparison(integer: left.sql, op, double: right.sql)
        case (.double, .int):
            return exactComparison(integer: right.sql, op.reversed, double: left.sql)
        case (.text, .bytes):
            left.sql = "convert_to(\(left.sql), 'UTF8')"
        case (.bytes, .text):
            right.sql = "convert_to(\(right.sql), 'UTF8')"
        default:
            break
        }
        let withLiteral = left.isLiteral || right.isLiteral
        if bare, op != .ne, let condition = prefixedComparison(lhs, left, op, rhs, right) { return condition }
        switch op {
        case .eq where bare && withLiteral:
            return "(\(left.sql) = \(right.sql))"
        case .eq where withLiteral:
            return "coalesce(\(left.sql) = \(right.sql), false)"
        case .eq:
            return "(\(left.sql) IS NOT DISTINCT FROM \(right.sql))"
        case .ne:
            return "(\(left.sql) IS DISTINCT FROM \(right.sql))"
        default:
            let test = "\(left.sql) \(PostgresQuery.symbol(op)) \(right.sql)"
            return bare ? "(\(test))" : "coalesce(\(test), false)"
        }
    }

    /// A comparison of an index-prefixed column with a literal of its own kind, with the prefix
    /// condition the index can serve before it (`substring(c …) >= substring($1 …) AND c > $1`),
    /// for a positive `WHERE` context; `nil` when that does not apply.
    private func prefixedComparison(
        _ lhs: FilterExpression, _ left: Operand, _ op: ComparisonOperator, _ rhs: FilterExpression, _ right: Operand
    ) -> String? {
        guard left.kind == right.kind else { return nil }
        let prefixOp: String =
            switch op {
            case .eq: "="
            case .gt, .ge: ">="
            default: "<="
            }
        let test = "\(left.sql) \(PostgresQuery.symbol(op)) \(right.sql)"
        if case .column(let name) = lhs, right.isLiteral, let prefix = layout.prefixed(name) {
            return "(\(prefix) \(prefixOp) \(PostgresTableLayout.prefix(right.sql)) AND \(test))"
        }
        if case .column(let name) = rhs, left.isLiteral, let prefix = layout.prefixed(name) {
            return "(\(PostgresTableLayout.prefix(left.sql)) \(prefixOp) \(prefix) AND \(test))"
        }
        return nil
    }

    /// An exact comparison of an `int8` with a `float8` (either may be NULL), with the evaluator's
    /// null rules.
    private func exactComparison(integer: String, _ op: ComparisonOperator, double: String) -> String {
        // 9223372036854774784 is the largest double below 2^63: the clamped cast cannot overflow.
        let exactInteger = "least(greatest(\(double), -9223372036854775808::float8), 9223372036854774784::float8)::int8"
        let order = """
            (CASE WHEN \(integer) IS NULL OR \(double) IS NULL THEN NULL \
            WHEN \(integer)::float8 < \(double) THEN -1 WHEN \(integer)::float8 > \(double) THEN 1 \
            WHEN \(double) >= 9223372036854775808::float8 THEN -1 \
            WHEN \(integer) < \(exactInteger) THEN -1 WHEN \(integer) > \(exactInteger) THEN 1 ELSE 0 END)
            """
        let bothNull = "(\(integer) IS NULL AND \(double) IS NULL)"
        switch op {
        case .eq: return "coalesce(\(order) = 0, \(bothNull))"
        case .ne: return "(NOT coalesce(\(order) = 0, \(bothNull)))"
        default: return "coalesce(\(order) \(PostgresQuery.symbol(op)) 0, false)"
        }
    }

    /// `operand in (values)`: true when the operand equals one of the values, null-safely.
    private mutating func membership(_ expression: FilterExpression, _ values: [Value], bare: Bool) -> String {
        let operandKind = kind(of: expression)
        let value = operand(expression)
        var alternatives: [String] = []
        if values.contains(where: \.isNull) { alternatives.append("(\(value.sql) IS NULL)") }
        var listed: [String] = []
        for candidate in values where !candidate.isNull {
            switch (operandKind, candidate) {
            case (.int, .double(let number)):
                alternatives.append(
                    exactComparison(integer: value.sql, .eq, double: literal(.double(number), hint: nil).sql))
            case (.double, .int(let number)):
                alternatives.append(
                    exactComparison(integer: literal(.int(number), hint: nil).sql, .eq, double: value.sql))
            case (.text, .string(let text)) where text.utf8.contains(0),
                (.text, .json(let text)) where text.utf8.contains(0):
                let needle = literal(.string(text), hint: nil).sql
                alternatives.append("coalesce(convert_to(\(value.sql), 'UTF8') = \(needle), false)")
            default:
                listed.append(literal(candidate, hint: operandKind).sql)
            }
        }
        if !listed.isEmpty {
            let test = "\(value.sql) IN (\(listed.joined(separator: ", ")))"
            alternatives.append(bare ? "(\(test))" : "coalesce(\(test), false)")
        }
        return alternatives.isEmpty ? "false" : "(\(alternatives.joined(separator: " OR ")))"
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    fileprivate var reversed: ComparisonOperator {
        switch self {
        case .eq, .ne: return self
        case .gt: return .lt
        case .ge: return .le
        case .lt: return .gt
        case .le: return .ge
        }
    }
}
