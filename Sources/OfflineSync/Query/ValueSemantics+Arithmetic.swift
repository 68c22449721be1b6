extension ValueSemantics {
    /// The result of `lhs op rhs`, the single definition of OData arithmetic every backend
    /// reproduces (a SQL database's own arithmetic may follow the same rules, so a SQL backend can
    /// leave most of it to the database):
    ///
    /// - A null (or non-numeric) operand gives null.
    /// - Two integers give an integer: `div` truncates toward zero, `mod` is the remainder of that
    ///   division (its sign is the dividend's, `-7 mod 2` is `-1`). When the exact result does not
    ///   fit in `Int64` (`9223372036854775807 add 1`, `-9223372036854775808 div -1`), the result is
    ///   the double of the same operation on the operands converted to doubles, so a query never
    ///   fails on a large value and comparisons stay numeric.
    /// - Otherwise the integer operand is converted to the nearest double and the operation is
    ///   IEEE 754 double arithmetic; `mod` is the truncated remainder (`5.5 mod 2` is `1.5`, as in
    ///   C#, JavaScript and SQL Server), and an infinite result stays infinite.
    /// - Division or remainder by zero (`0`, `0.0` or `-0.0`) is null, never an error: a filter is
    ///   evaluated row by row, and one row's zero must not fail the whole read. This is what the
    ///   Azure Node server answers on its SQL database and what the clients' offline stores
    ///   answer; a null in a comparison makes it false (`x div 0 eq 1` matches nothing,
    ///   `x div 0 eq null` matches every row).
    /// - A result that is not a number (`INF sub INF`, `0 mul INF`) is null.
    public static func arithmetic(_ lhs: Value, _ op: ArithmeticOperator, _ rhs: Value) -> Value {
        if case .int(let a) = lhs, case .int(let b) = rhs { return integerArithmetic(a, op, b) }
        guard let a = lhs.numericValue, let b = rhs.numericValue else { return .null }
        let result: Double
        switch op {
        case .add: result = a + b
        case .sub: result = a - b
        case .mul: result = a * b
        case .div:
            if b == 0 { return .null }
            result = a / b
        case .mod:
            if b == 0 { return .null }
            result = a.truncatingRemainder(dividingBy: b)
        }
        return result.isNaN ? .null : .double(result)
    }

    /// Unary minus: `0 sub value` (so `-(-9223372036854775808)` is the double
    /// 9223372036854775808.0, and the negation of `0.0` is `0.0`); null for null.
    public static func negate(_ value: Value) -> Value {
        arithmetic(.int(0), .sub, value)
    }

    /// `round`, `floor` or `ceiling` of a number: an integer is returned as it is; a double is
    /// rounded to an integral double by `rule` (`round` takes halves away from zero: `2.5` → `3`,
    /// `-2.5` → `-3`, `-0.4` → `-0.0`). Null for null.
    public static func rounded(_ value: Value, _ rule: FloatingPointRoundingRule) -> Value {
        switch value {
        case .int: return value
        case .double(let number): return number.isNaN ? .null : .double(number.rounded(rule))
        default: return .null
        }
    }

    private static func integerArithmetic(_ a: Int64, _ op: ArithmeticOperator, _ b: Int64) -> Value {
        let (result, overflow): (Int64, Bool)
        switch op {
        case .add: (result, overflow) = a.addingReportingOverflow(b)
        case .sub: (result, overflow) = a.subtractingReportingOverflow(b)
        case .mul: (result, overflow) = a.multipliedReportingOverflow(by: b)
        case .div:
            if b == 0 { return .null }
            (result, overflow) = a.dividedReportingOverflow(by: b)
        case .mod:
            if b == 0 { return .null }
            // `Int64.min mod -1` is 0; Swift reports it as an overflow.
            return .int(b == -1 ? 0 : a % b)
        }
        guard overflow else { return .int(result) }
        return arithmetic(.double(Double(a)), op, .double(Double(b)))
    }
}

extension Value {
    /// An integer or double as a double; `nil` for other values.
    fileprivate var numericValue: Double? {
        switch self {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: return nil
        }
    }
}
