/// Prints queries as OData `$filter` / `$orderby` text that ``ODataParser`` reads back to the same
/// tree (`parse(print(q)) == q`).
///
/// Binary operators, `not` and unary minus (as `(-(x))`, so that `-` never merges with a number)
/// are parenthesised, strings use single quotes with `''` for a quote, dates print
/// as `datetimeoffset'2026-01-02T03:04:05.678Z'` (understood by OData v3 and v4 servers, the
/// Azure Node server among them), doubles always carry a `.` or an exponent so they read back as
/// doubles (NaN and the infinities print as v4's `NaN`, `INF`, `-INF`), and ``Function/contains``
/// prints as v4's `contains(s, needle)` unless the v3 dialect asks for `substringof(needle, s)`
/// (which also prints unary minus as `(0 sub x)`, see ``Dialect/v3``).
///
/// The round trip holds for every expression whose column names are identifiers other than the
/// parser's keywords, whose functions have their declared number of arguments, whose dates lie in
/// years 1–9999 and whose depth is at most ``ODataParser/maximumDepth``. OData has no JSON
/// literal: a ``Value/json(_:)`` literal prints as a string and reads back as
/// ``Value/string(_:)``, which compares equal to it (see ``ValueSemantics``).
public enum ODataPrinter {
    /// The OData dialect to print.
    public enum Dialect: Sendable {
        /// OData v4 (`contains`).
        case v4
        /// OData v3 (`substringof`, and unary minus as `(0 sub x)`), what Azure Mobile Apps
        /// servers expect: the Azure Node server parses `-x` but drops it when it generates SQL,
        /// so unary minus is printed as the JavaScript client prints it, which means the same
        /// (``ValueSemantics/negate(_:)``) but reads back as ``FilterExpression/arithmetic(_:_:_:)``.
        case v3
    }

    /// The `$filter` text of an expression.
    public static func filter(_ expression: FilterExpression, dialect: Dialect = .v4) -> String {
        switch expression {
        case .literal(let value):
            return literal(value)
        case .column(let name):
            return name
        case .not(let operand):
            return "(not \(filter(operand, dialect: dialect)))"
        case .and(let lhs, let rhs):
            return "(\(filter(lhs, dialect: dialect)) and \(filter(rhs, dialect: dialect)))"
        case .or(let lhs, let rhs):
            return "(\(filter(lhs, dialect: dialect)) or \(filter(rhs, dialect: dialect)))"
        case .comparison(let lhs, let op, let rhs):
            return "(\(filter(lhs, dialect: dialect)) \(op.rawValue) \(filter(rhs, dialect: dialect)))"
        case .arithmetic(let lhs, let op, let rhs):
            return "(\(filter(lhs, dialect: dialect)) \(op.rawValue) \(filter(rhs, dialect: dialect)))"
        case .negate(let operand):
            if dialect == .v3 { return "(0 sub \(filter(operand, dialect: dialect)))" }
            return "(-(\(filter(operand, dialect: dialect))))"
        case .isIn(let operand, let values):
            return "(\(filter(operand, dialect: dialect)) in (\(values.map(literal).joined(separator: ", "))))"
        case .function(let function, let arguments):
            if function == .contains, dialect == .v3, arguments.count == 2 {
                return
                    "substringof(\(filter(arguments[1], dialect: dialect)), \(filter(arguments[0], dialect: dialect)))"
            }
            return "\(function.rawValue)(\(arguments.map { filter($0, dialect: dialect) }.joined(separator: ", ")))"
        }
    }

    /// The `$orderby` text of ordering keys, e.g. `priority desc,text`.
    public static func orderBy(_ keys: [SortKey]) -> String {
        keys.map { $0.descending ? "\($0.column) desc" : $0.column }.joined(separator: ",")
    }

    /// The OData literal of a value.
    public static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number):
            if number.isNaN { return "NaN" }
            if number.isInfinite { return number < 0 ? "-INF" : "INF" }
            let text = String(number)
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case .string(let text), .json(let text):
            var quoted = String.UnicodeScalarView()
            quoted.append("'")
            for scalar in text.unicodeScalars {
                if scalar == "'" { quoted.append(scalar) }
                quoted.append(scalar)
            }
            quoted.append("'")
            return String(quoted)
        case .date(let date):
            return "datetimeoffset'\(date.iso8601)'"
        }
    }
}
