/// One stored value.
///
/// The value model is deliberately small so that every backend can store it exactly:
/// - `int` is a 64-bit signed integer; `double` is any finite IEEE 754 double (NaN and the infinities
///   are rejected on write because JSON cannot carry them); `-0.0` keeps its sign.
/// - `string` is compared **byte-wise on its UTF-8 encoding**, not by Swift's canonical equivalence,
///   because that is what every storage engine does; `"é"` precomposed and decomposed are different
///   values.
/// - `date` is a ``Timestamp`` (UTC, millisecond precision).
/// - `json` holds a JSON array or object as its text; other text is rejected on write, so what a
///   store holds can always be sent and exported.
///
/// Equality (`==`) is exact identity of the stored value: `.double(-0.0) != .double(0.0)` and
/// `.int(1) != .double(1)`. Query semantics (where `-0.0 eq 0` holds) live in ``ValueSemantics``.
public enum Value: Sendable, CustomStringConvertible {
    /// The absence of a value.
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int64)
    /// A finite double.
    case double(Double)
    /// A string, compared by its UTF-8 bytes.
    case string(String)
    /// A UTC instant with millisecond precision.
    case date(Timestamp)
    /// A JSON array or object, kept as its text (checked when a store writes it).
    case json(String)

    /// `true` for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The type of a non-null value; `nil` for ``null``.
    public var type: ColumnType? {
        switch self {
        case .null: return nil
        case .bool: return .bool
        case .int: return .integer
        case .double: return .double
        case .string: return .string
        case .date: return .date
        case .json: return .json
        }
    }

    /// The string payload, or `nil` when this is not a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The boolean payload, or `nil` when this is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The integer payload, or `nil` when this is not an integer.
    public var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The numeric payload of an integer or a double as a double.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The date payload, or `nil` when this is not a date.
    public var dateValue: Timestamp? {
        if case .date(let value) = self { return value }
        return nil
    }

    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return "'\(value)'"
        case .date(let value): return value.iso8601
        case .json(let value): return value
        }
    }
}

extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return UTF8Bytes.equal(a, b)
        case (.date(let a), .date(let b)): return a == b
        case (.json(let a), .json(let b)): return UTF8Bytes.equal(a, b)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .int(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .double(let value):
            hasher.combine(3)
            hasher.combine(value.bitPattern)
        case .string(let value):
            hasher.combine(4)
            for byte in value.utf8 { hasher.combine(byte) }
        case .date(let value):
            hasher.combine(5)
            hasher.combine(value)
        case .json(let value):
            hasher.combine(6)
            for byte in value.utf8 { hasher.combine(byte) }
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}
