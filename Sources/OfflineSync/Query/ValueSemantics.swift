/// Comparison and ordering of values as queries see them: the single definition every backend
/// must reproduce (the conformance suite checks it).
public enum ValueSemantics {
    /// Null-safe equality: `null` equals only `null`; integers and doubles compare numerically
    /// (`-0.0` equals `0`); strings and JSON text compare by UTF-8 bytes, and a string equals a JSON
    /// value with the same text.
    public static func equal(_ lhs: Value, _ rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        default: return compareNonNull(lhs, rhs) == 0
        }
    }

    /// Total order used for sorting: `null` first, then booleans (false < true), numbers,
    /// strings and JSON text (UTF-8 byte order), dates. Values of one column always share a type,
    /// so the order between types only matters for literals.
    public static func compare(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        default: return compareNonNull(lhs, rhs)
        }
    }

    private static func rank(_ value: Value) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int, .double: return 2
        case .string, .json: return 3
        case .date: return 4
        }
    }

    private static func compareNonNull(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.int(let a), .int(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.int(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .int(let b)): return -compare(b, a)
        case (.double(let a), .double(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.string(let a), .string(let b)), (.json(let a), .json(let b)),
            (.string(let a), .json(let b)), (.json(let a), .string(let b)):
            return compareBytes(a, b)
        case (.date(let a), .date(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        default:
            let a = rank(lhs)
            let b = rank(rhs)
            return a < b ? -1 : (a > b ? 1 : 0)
        }
    }

    /// Exact comparison of an integer with a double (no rounding of large integers).
    private static func compare(_ integer: Int64, _ double: Double) -> Int {
        if double.isNaN { return -1 }
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let truncated = Int64(double.rounded(.towardZero))
        if integer != truncated { return integer < truncated ? -1 : 1 }
        let fraction = double - Double(truncated)
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    /// Byte-wise comparison of the UTF-8 encodings (what a SQL `BINARY` collation and a key-value
    /// store's default key order do).
    public static func compareBytes(_ a: String, _ b: String) -> Int {
        UTF8Bytes.withBytes(of: a) { x in
            UTF8Bytes.withBytes(of: b) { y in
                let common = min(x.count, y.count)
                if common > 0 {
                    let result = memcmp(x.baseAddress!, y.baseAddress!, common)
                    if result != 0 { return result < 0 ? -1 : 1 }
                }
                return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
            }
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif
