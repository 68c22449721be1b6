#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#elseif canImport(Foundation)
    internal import Foundation
#endif

/// Foundation's `Date` in model properties, stored as a ``Timestamp`` (``Value/date(_:)``).
///
/// The conversion rounds to the nearest millisecond, the precision of every stored date, so a
/// `Date` read back from a store equals the written one only when it had whole milliseconds. This
/// file is the only one in the core that imports Foundation (its `FoundationEssentials` part where
/// there is one), and it does so only for this type; no Foundation type appears in the public API.
enum DateBridge {
    /// The timestamp of `value` when it is a `Date`; `nil` for anything else or a date beyond `Int64`
    /// milliseconds.
    static func timestamp(of value: Any) -> Timestamp? {
        guard let date = value as? Date else { return nil }
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard let exact = Int64(exactly: milliseconds) else { return nil }
        return Timestamp(millisecondsSince1970: exact)
    }

    /// The timestamp of a value whose static type `T` is `Date` (checked by comparing types, which
    /// costs less than casting the value); `nil` for another type or an unrepresentable date.
    static func timestamp<T>(ofDate value: T) -> Timestamp? {
        guard T.self == Date.self else { return nil }
        let milliseconds = (unsafeBitCast(value, to: Date.self).timeIntervalSince1970 * 1000).rounded()
        guard let exact = Int64(exactly: milliseconds) else { return nil }
        return Timestamp(millisecondsSince1970: exact)
    }

    /// `true` when `value` is a `Date`, representable or not.
    static func isDate(_ value: Any) -> Bool { value is Date }

    /// `true` when `type` is `Date`.
    static func isDateType(_ type: Any.Type) -> Bool { type == Date.self }

    /// The `Date` of a timestamp, as `T` (which must be `Date`).
    static func date<T>(_ timestamp: Timestamp, as type: T.Type) -> T? {
        let date = Date(timeIntervalSince1970: Double(timestamp.millisecondsSince1970) / 1000)
        // Told by comparing types (a dynamic cast per decoded date otherwise).
        if T.self == Date.self { return unsafeBitCast(date, to: T.self) }
        return date as? T
    }
}
