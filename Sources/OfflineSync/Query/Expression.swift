/// A filter expression over the columns of one table: the abstract syntax of an OData `$filter`.
///
/// Expressions are typed (see ``Query/validate(against:)``): a filter must be boolean, comparisons
/// need operands of one type family (integers and doubles mix; `null` matches any type), and each
/// ``Function`` takes fixed argument types. The meaning of every node is defined once, by
/// ``QueryEvaluator``, and every backend must agree with it exactly:
///
/// - `eq` and `ne` are null-safe: `x eq null` is true when `x` is null, `null eq 5` is false and
///   `null ne 5` is true.
/// - `gt`, `ge`, `lt`, `le` with a null operand are false.
/// - Functions of a null argument are null; a null in a boolean position (a null `bool` column, a
///   function of null) counts as false, so `not startswith(x, 'a')` is true when `x` is null.
/// - Strings compare by their UTF-8 bytes; `tolower` / `toupper` change ASCII letters only;
///   `length` counts Unicode scalars; `contains`, `startswith`, `endswith` match bytes exactly and
///   an empty needle always matches.
/// - `-0.0 eq 0` is true; integers and doubles compare numerically.
/// - `year`, `month`, `day` read the UTC calendar fields of a date (dates before 1970 included).
public indirect enum Expression: Sendable, Hashable, CustomStringConvertible {
    /// A constant.
    case literal(Value)
    /// The value of a column (`id` included).
    case column(String)
    /// Logical negation of a boolean expression.
    case not(Expression)
    /// Logical conjunction.
    case and(Expression, Expression)
    /// Logical disjunction.
    case or(Expression, Expression)
    /// A comparison of two operands.
    case comparison(Expression, ComparisonOperator, Expression)
    /// True when the operand equals (null-safely) one of the listed values.
    case isIn(Expression, [Value])
    /// A call of a built-in function.
    case function(Function, [Expression])

    public var description: String { ODataPrinter.filter(self) }
}

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

/// The built-in functions of the query language.
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
    /// `year(date)` → integer, UTC.
    case year = "year"
    /// `month(date)` → integer 1–12, UTC.
    case month = "month"
    /// `day(date)` → integer 1–31, UTC.
    case day = "day"

    /// The argument types the function takes.
    public var parameterTypes: [ColumnType] {
        switch self {
        case .startsWith, .endsWith, .contains: return [.string, .string]
        case .toLower, .toUpper, .length: return [.string]
        case .year, .month, .day: return [.date]
        }
    }

    /// The type of the result.
    public var resultType: ColumnType {
        switch self {
        case .startsWith, .endsWith, .contains: return .bool
        case .toLower, .toUpper: return .string
        case .length, .year, .month, .day: return .integer
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
