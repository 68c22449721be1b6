/// A point in time with millisecond precision, in UTC.
///
/// Dates in OfflineSync are always UTC and always carry exactly three fractional digits on the wire
/// (`2026-01-02T03:04:05.678Z`), the format of the Azure Mobile Apps table protocol. Internally a
/// timestamp is a signed count of milliseconds since 1970-01-01T00:00:00.000Z, so dates before 1970
/// are negative and ordering is plain integer ordering on every backend.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00.000Z (negative before it).
    public var millisecondsSince1970: Int64

    /// The earliest representable instant handled by the ISO 8601 formatter: 0001-01-01T00:00:00.000Z.
    public static let minimum = Timestamp(millisecondsSince1970: -62_135_596_800_000)
    /// The latest representable instant handled by the ISO 8601 formatter: 9999-12-31T23:59:59.999Z.
    public static let maximum = Timestamp(millisecondsSince1970: 253_402_300_799_999)
    /// 1970-01-01T00:00:00.000Z, the initial delta token of an incremental pull.
    public static let epoch = Timestamp(millisecondsSince1970: 0)

    /// Creates a timestamp from milliseconds since 1970-01-01T00:00:00.000Z.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Creates a timestamp from calendar fields in UTC. Returns `nil` when a field is out of range.
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0)
    {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Timestamp.daysIn(month: month, year: year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
            (0...999).contains(millisecond)
        else { return nil }
        let days = Timestamp.daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)
        self.millisecondsSince1970 = seconds * 1000 + Int64(millisecond)
    }

    /// The current time, truncated to milliseconds.
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// The UTC calendar fields of this instant.
    public var components: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) {
        let ms = millisecondsSince1970
        let msOfDay = ((ms % 86_400_000) + 86_400_000) % 86_400_000
        // Floor division without `ms - msOfDay`, which overflows near Int64.min.
        let days = ms / 86_400_000 - (ms % 86_400_000 < 0 ? 1 : 0)
        let (y, m, d) = Timestamp.civilFromDays(days)
        let secondsOfDay = msOfDay / 1000
        return (
            Int(y), Int(m), Int(d), Int(secondsOfDay / 3600), Int(secondsOfDay / 60 % 60),
            Int(secondsOfDay % 60), Int(msOfDay % 1000)
        )
    }

    /// ISO 8601 with milliseconds and `Z`, e.g. `2026-01-02T03:04:05.678Z`.
    ///
    /// Years outside 1–9999 (beyond ``minimum`` and ``maximum``) print in ISO 8601's expanded form
    /// (`+10000-…`, `-0001-…`), which ``init(iso8601:)`` does not read.
    public var iso8601: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendISO8601(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The digits and the separator after each field of `YYYY-MM-DDTHH:MM:SS.fffZ` (the year
    /// takes more digits when it has them).
    private static let iso8601Fields: [(width: Int, separator: UInt8)] = [
        (4, UInt8(ascii: "-")), (2, UInt8(ascii: "-")), (2, UInt8(ascii: "T")), (2, UInt8(ascii: ":")),
        (2, UInt8(ascii: ":")), (2, UInt8(ascii: ".")), (3, UInt8(ascii: "Z")),
    ]

    /// Appends ``iso8601`` as UTF-8 without building a string, in one piece.
    func appendISO8601(to bytes: inout [UInt8]) {
        let c = components
        let year = Int(c.year.magnitude)
        var yearWidth = 4
        var limit = 10_000
        while year >= limit {
            yearWidth += 1
            limit *= 10
        }
        // A sign, at most 10 year digits (Int64 milliseconds reach year 292,278,994) and 20 more.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
            var end = 0
            if c.year > 9999 || c.year < 0 {
                text[0] = UInt8(ascii: c.year < 0 ? "-" : "+")
                end = 1
            }
            for (field, (value, (width, separator))) in zip(
                [year, c.month, c.day, c.hour, c.minute, c.second, c.millisecond], Timestamp.iso8601Fields
            ).enumerated() {
                let digits = field == 0 ? yearWidth : width
                var rest = value
                for index in stride(from: end + digits - 1, through: end, by: -1) {
                    text[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                    rest /= 10
                }
                text[end + digits] = separator
                end += digits + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<end]))
        }
    }

    public var description: String { iso8601 }

    /// Parses ISO 8601 date-times as servers and clients of the table protocol send them.
    ///
    /// Accepts `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or an offset `±HH:MM`, and a bare date
    /// `YYYY-MM-DD` (midnight UTC). Fractions beyond milliseconds are truncated (toward the past).
    /// Returns `nil` for anything else.
    public init?(iso8601 text: some StringProtocol) {
        let parsed =
            text.utf8.withContiguousStorageIfAvailable(Timestamp.parseISO8601)
            ?? Array(text.utf8).withUnsafeBufferPointer(Timestamp.parseISO8601)
        guard let parsed else { return nil }
        self = parsed
    }

    /// ``init(iso8601:)`` on UTF-8 bytes.
    static func parseISO8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        if let canonical = parseCanonicalISO8601(bytes) { return canonical }
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2),
            expect(UInt8(ascii: "-")), let day = number(2)
        else { return nil }
        var second = 0
        var millisecond = 0
        var offsetMinutes = 0
        if index == bytes.count {
            return Timestamp(year: year, month: month, day: day)
        }
        guard expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")),
            let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2)
        else { return nil }
        if expect(UInt8(ascii: ":")) {
            guard let s = number(2) else { return nil }
            second = s
            if expect(UInt8(ascii: ".")) {
                var digits = 0
                var fraction = 0
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    if digits < 3 { fraction = fraction * 10 + Int(bytes[index] - 48) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                for _ in digits..<max(digits, 3) { fraction *= 10 }
                millisecond = fraction
            }
        }
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
            offsetMinutes = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let oh = number(2) else { return nil }
            _ = expect(UInt8(ascii: ":"))
            guard let om = number(2), oh <= 23, om <= 59 else { return nil }
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            return nil
        }
        guard index == bytes.count,
            let local = Timestamp(
                year: year, month: month, day: day, hour: hour, minute: minute,
                second: second, millisecond: millisecond)
        else { return nil }
        return Timestamp(millisecondsSince1970: local.millisecondsSince1970 - Int64(offsetMinutes) * 60_000)
    }

    /// The fast path of ``parseISO8601(_:)`` for the wire format `YYYY-MM-DDTHH:MM:SS.mmmZ`;
    /// `nil` for any other text (which the general parser then reads).
    private static func parseCanonicalISO8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
            bytes[23] == UInt8(ascii: "Z")
        else { return nil }
        guard let year = digits(bytes, 0..<4), let month = digits(bytes, 5..<7), let day = digits(bytes, 8..<10),
            let hour = digits(bytes, 11..<13), let minute = digits(bytes, 14..<16), let second = digits(bytes, 17..<19),
            let millisecond = digits(bytes, 20..<23)
        else { return nil }
        return Timestamp(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, millisecond: millisecond)
    }

    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var value = 0
        for position in range {
            let digit = bytes[position] &- 48
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not an ISO 8601 date-time")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days, exact for the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif
