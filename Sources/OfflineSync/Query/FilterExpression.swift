/// A filter expression over the columns of one table: the abstract syntax of an OData `$filter`.
///
/// Expressions are typed (see ``Query/validate(against:)``): a filter must be boolean, comparisons
/// need operands of one type family (integers and doubles mix; `null` matches any type), and each
/// ``Function`` takes fixed argument types. The meaning of every node is defined once, by
/// ``QueryEvaluator``, and every backend must agree with it exactly. The rules are collected in
/// the article <doc:FilterLanguage>; in short:
///
/// - `eq` and `ne` are null-safe: `x eq null` is true when `x` is null, `null eq 5` is false and
///   `null ne 5` is true.
/// - `gt`, `ge`, `lt`, `le` with a null operand are false.
/// - Functions and arithmetic of a null operand are null; a null in a boolean position (a null
///   `bool` column, a function of null) counts as false, so `not startswith(x, 'a')` is true when
///   `x` is null.
/// - Strings compare by their UTF-8 bytes; `tolower` / `toupper` change ASCII letters only;
///   `length`, `indexof` and `substring` count Unicode scalars; `contains`, `startswith`,
///   `endswith`, `indexof` and `replace` match bytes exactly.
/// - `-0.0 eq 0` is true; integers and doubles compare numerically. Arithmetic of two integers
///   is integer arithmetic (`div` truncates); a result beyond `Int64` becomes the double of the
///   same operation; a zero divisor gives null.
/// - `year` … `second` read the UTC calendar fields of a date (dates before 1970 included).
public indirect enum FilterExpression: Sendable, Hashable, CustomStringConvertible {
    /// A constant.
    case literal(Value)
    /// The value of a column (`id` included).
    case column(String)
    /// Logical negation of a boolean expression.
    case not(FilterExpression)
    /// Logical conjunction.
    case and(FilterExpression, FilterExpression)
    /// Logical disjunction.
    case or(FilterExpression, FilterExpression)
    /// A comparison of two operands.
    case comparison(FilterExpression, ComparisonOperator, FilterExpression)
    /// True when the operand equals (null-safely) one of the listed values.
    case isIn(FilterExpression, [Value])
    /// A call of a built-in function.
    case function(Function, [FilterExpression])
    /// Arithmetic on two numbers (`add`, `sub`, `mul`, `div`, `mod`).
    case arithmetic(FilterExpression, ArithmeticOperator, FilterExpression)
    /// Unary minus of a number (`-x`).
    case negate(FilterExpression)

    public var description: String { ODataPrinter.filter(self) }
}

/// The former name of ``FilterExpression``: with `import Foundation` (whose `Expression` is the
/// predicate macro's type) an unqualified `Expression` is ambiguous.
@available(*, deprecated, renamed: "FilterExpression")
public typealias Expression = FilterExpression

/// The comparison operators of OData.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// Equal (null-safe).
    case eq
    /// Not equal (null-safe).
    case ne
    /// Greater than (false with a null operand).
    case gt
    /// Greater than or equal (false with a null operand).
    case ge
    /// Less than (false with a null operand).
    case lt
    /// Less than or equal (false with a null operand).
    case le
}

/// The arithmetic operators of OData. `mul`, `div` and `mod` bind tighter than `add` and `sub`;
/// all associate to the left. See ``ValueSemantics/arithmetic(_:_:_:)`` for their results.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    /// Addition.
    case add
    /// Subtraction.
    case sub
    /// Multiplication.
    case mul
    /// Division; truncated toward zero when both operands are integers.
    case div
    /// Remainder of the truncated division; its sign is the dividend's.
    case mod

    /// `true` for `mul`, `div` and `mod`, which bind tighter than `add` and `sub`.
    public var isMultiplicative: Bool { self == .mul || self == .div || self == .mod }
}

/// The built-in functions of the query language.
///
/// Argument and result types are checked by ``Query/validate(against:)``; the results are
/// defined by ``QueryEvaluator/apply(_:_:)``.
public enum Function: String, Sendable, Hashable, CaseIterable {
    /// `startswith(string, prefix)` → bool.
    case startsWith = "startswith"
    /// `endswith(string, suffix)` → bool.
    case endsWith = "endswith"
    /// `contains(string, needle)` → bool; OData v3's `substringof(needle, string)` parses to this.
    case contains = "contains"
    /// `tolower(string)` → string, ASCII letters only.
    case toLower = "tolower"
    /// `toupper(string)` → string, ASCII letters only.
    case toUpper = "toupper"
    /// `length(string)` → integer, in Unicode scalars.
    case length = "length"
    /// `indexof(string, needle)` → integer: the 0-based position (in Unicode scalars) of the
    /// first occurrence of `needle`, `-1` when there is none.
    case indexOf = "indexof"
    /// `substring(string, start)` or `substring(string, start, length)` → string, positions and
    /// lengths in Unicode scalars.
    case substring = "substring"
    /// `trim(string)` → string without leading and trailing white space.
    case trim = "trim"
    /// `concat(string, string)` → string.
    case concat = "concat"
    /// `replace(string, find, replacement)` → string with every occurrence of `find` replaced.
    case replace = "replace"
    /// `year(date)` → integer, UTC.
    case year = "year"
    /// `month(date)` → integer 1–12, UTC.
    case month = "month"
    /// `day(date)` → integer 1–31, UTC.
    case day = "day"
    /// `hour(date)` → integer 0–23, UTC.
    case hour = "hour"
    /// `minute(date)` → integer 0–59.
    case minute = "minute"
    /// `second(date)` → integer 0–59 (milliseconds dropped).
    case second = "second"
    /// `round(number)` → the nearest integral number of the same type, halves away from zero.
    case round = "round"
    /// `floor(number)` → the greatest integral number not above it, of the same type.
    case floor = "floor"
    /// `ceiling(number)` → the least integral number not below it, of the same type.
    case ceiling = "ceiling"

    /// The argument types of the function's longest form (`substring` also takes just the first
    /// two). `round`, `floor` and `ceiling` take an integer as well as a double, and return the
    /// type of their argument.
    public var parameterTypes: [ColumnType] {
        switch self {
        case .startsWith, .endsWith, .contains, .indexOf, .concat: return [.string, .string]
        case .toLower, .toUpper, .trim, .length: return [.string]
        case .substring: return [.string, .integer, .integer]
        case .replace: return [.string, .string, .string]
        case .year, .month, .day, .hour, .minute, .second: return [.date]
        case .round, .floor, .ceiling: return [.double]
        }
    }

    /// The type of the result (for `round`, `floor` and `ceiling`, of a double argument).
    public var resultType: ColumnType {
        switch self {
        case .startsWith, .endsWith, .contains: return .bool
        case .toLower, .toUpper, .trim, .substring, .concat, .replace: return .string
        case .length, .indexOf, .year, .month, .day, .hour, .minute, .second: return .integer
        case .round, .floor, .ceiling: return .double
        }
    }

    /// How many arguments the function takes.
    public var arity: ClosedRange<Int> {
        switch self {
        case .toLower, .toUpper, .length, .trim, .year, .month, .day, .hour, .minute, .second, .round, .floor,
            .ceiling:
            return 1...1
        case .startsWith, .endsWith, .contains, .indexOf, .concat: return 2...2
        case .substring: return 2...3
        case .replace: return 3...3
        }
    }
}

/// One ordering key of a query.
public struct SortKey: Sendable, Hashable {
    /// The column to order by (`id` allowed).
    public var column: String
    /// `true` for descending order.
    public var descending: Bool

    /// Creates an ordering key.
    public init(_ column: String, descending: Bool = false) {
        self.column = column
        self.descending = descending
    }
}
