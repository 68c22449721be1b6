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
/// there is one), and it does so only for this type, ``URLBridge``, ``FoundationProbe`` and
/// ``RowReader``'s dates; no Foundation type appears in the public API.
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

extension RowReader {
    /// Foundation's `Date` type (the core's public API names no Foundation type). Computed: a
    /// stored static would be reached through a lazy initializer's check on every read of a date.
    @usableFromInline static var dateType: Any.Type { Date.self }

    /// Initializes the memory at `pointer`, storage for one `Date`, with the `Date` of
    /// `timestamp` (as ``DateBridge/date(_:as:)`` converts it).
    @usableFromInline
    static func initializeDate(_ timestamp: Timestamp, at pointer: UnsafeMutableRawPointer) {
        pointer.initializeMemory(
            as: Date.self, repeating: Date(timeIntervalSince1970: Double(timestamp.millisecondsSince1970) / 1000),
            count: 1)
    }
}

/// Foundation's `URL` in model properties, stored as its absolute text in a `string` column (its
/// own `Codable` form is an object of its relative and base parts, which a string column cannot
/// hold and a server would not expect).
enum URLBridge {
    /// `true` when `type` is `URL`.
    static func isURLType(_ type: Any.Type) -> Bool { type == URL.self }

    /// The absolute text of `value` when it is a `URL` (also inside an optional or an
    /// existential); `nil` otherwise.
    static func text(of value: Any) -> String? {
        (value as? URL)?.absoluteString
    }

    /// The URL of `text`, as `T` (which must be `URL`); `nil` when the text is not a URL.
    static func url<T>(_ text: String, as type: T.Type) -> T? {
        URL(string: text) as? T
    }
}

/// Sample values of Foundation types that encode as a single string (`UUID`, `URL`) for the probe
/// models that derive a model's columns (see `ProbeDecoder`): the probe hands every string
/// property a text of its own, which these types' decoders refuse, so they get a valid value of
/// their own type instead, distinct per property (`ordinal`) and per probe round (`second`).
enum FoundationProbe {
    /// A sample of `type` when it is `UUID` or `URL`; `nil` for any other type.
    static func sample<T>(of type: T.Type, ordinal: Int, second: Bool) -> T? {
        let number = ordinal * 2 + (second ? 1 : 0)
        if T.self == UUID.self {
            let text = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(number).count) + String(number)
            return UUID(uuidString: text) as? T
        }
        if T.self == URL.self {
            return URL(string: "https://probe.invalid/\(number)") as? T
        }
        return nil
    }
}
