/// One token of an OData `$filter`, `$orderby` or `$select` text.
struct ODataToken: Equatable {
    enum Kind: Equatable {
        /// A name: a column, a function, a keyword (`and`, `eq`, `null`, `desc` …).
        case word
        /// A number, string or date literal (`null`, `true` and `false` are words).
        case literal(Value)
        case leftParen
        case rightParen
        case comma
        /// A `-` not followed by a number: unary minus.
        case minus
        case end
    }

    var kind: Kind
    /// The byte offset of the first byte of the token in the text.
    var start: Int
    /// The byte offset just past the token.
    var end: Int
}

/// Splits OData text into tokens, one at a time.
///
/// Literals: `'O''Brien'` strings, integers (`Int64`, an optional `L` suffix), doubles (`1.5`,
/// `1e10`, `-0.0`, an optional `d`, `f` or `m` suffix, `NaN`, `INF`, `-INF`), `datetimeoffset'…'`
/// and `datetime'…'` (no zone means UTC), and bare ISO 8601 dates and date-times (OData v4). A `-`
/// directly followed by a digit or `INF` starts a negative number; any other `-` is unary minus.
struct ODataLexer {
    let source: ODataText
    private(set) var offset = 0

    init(_ source: ODataText) {
        self.source = source
    }

    private var bytes: [UInt8] { source.bytes }

    private func byte(at index: Int) -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    static func isWordStart(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
    }

    static func isWordByte(_ byte: UInt8) -> Bool {
        isWordStart(byte) || isDigit(byte)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// The token after the current position.
    mutating func next() throws -> ODataToken {
        while let byte = byte(at: offset), byte == 32 || byte == 9 || byte == 10 || byte == 13 {
            offset += 1
        }
        let start = offset
        guard let first = byte(at: offset) else { return ODataToken(kind: .end, start: start, end: start) }
        switch first {
        case UInt8(ascii: "("):
            offset += 1
            return ODataToken(kind: .leftParen, start: start, end: offset)
        case UInt8(ascii: ")"):
            offset += 1
            return ODataToken(kind: .rightParen, start: start, end: offset)
        case UInt8(ascii: ","):
            offset += 1
            return ODataToken(kind: .comma, start: start, end: offset)
        case UInt8(ascii: "'"): return ODataToken(kind: .literal(.string(try quoted())), start: start, end: offset)
        case UInt8(ascii: "-"):
            let infinity =
                bytes[(offset + 1)...].starts(with: "INF".utf8)
                && !(byte(at: offset + 4).map(ODataLexer.isWordByte) ?? false)
            if let next = byte(at: offset + 1), ODataLexer.isDigit(next) || infinity { return try number() }
            offset += 1
            return ODataToken(kind: .minus, start: start, end: offset)
        case 48...57: return try number()
        default:
            guard ODataLexer.isWordStart(first) else {
                throw source.error(
                    "unexpected character '\(scalar(at: start))'", at: start,
                    hint: "names use letters, digits and '_', strings are quoted with '")
            }
            return try word()
        }
    }

    private func scalar(at index: Int) -> String {
        var end = index + 1
        while let byte = byte(at: end), byte & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[index..<end], as: UTF8.self)
    }

    private mutating func word() throws -> ODataToken {
        let start = offset
        while let byte = byte(at: offset), ODataLexer.isWordByte(byte) { offset += 1 }
        let token = ODataToken(kind: .word, start: start, end: offset)
        let spelling = source.spelling(of: token)
        if spelling == "NaN" { return ODataToken(kind: .literal(.double(.nan)), start: start, end: offset) }
        if spelling == "INF" { return ODataToken(kind: .literal(.double(.infinity)), start: start, end: offset) }
        guard byte(at: offset) == UInt8(ascii: "'") else { return token }
        switch source.keyword(of: token) {
        case "datetimeoffset":
            let text = try quoted()
            return ODataToken(
                kind: .literal(.date(try date(text, at: start, zoneRequired: true))), start: start, end: offset)
        case "datetime":
            let text = try quoted()
            return ODataToken(
                kind: .literal(.date(try date(text, at: start, zoneRequired: false))), start: start, end: offset)
        default:
            return token
        }
    }

    /// Reads a `'…'` string at the current position, `''` standing for one quote.
    private mutating func quoted() throws -> String {
        let start = offset
        offset += 1
        var content: [UInt8] = []
        var runStart = offset
        while true {
            guard let byte = byte(at: offset) else {
                throw source.error(
                    "unterminated string", at: start, hint: "close it with ' (write a quote inside a string as '')")
            }
            if byte == UInt8(ascii: "'") {
                content.append(contentsOf: bytes[runStart..<offset])
                if self.byte(at: offset + 1) == UInt8(ascii: "'") {
                    content.append(byte)
                    offset += 2
                    runStart = offset
                    continue
                }
                offset += 1
                return String(decoding: content, as: UTF8.self)
            }
            offset += 1
        }
    }

    private func date(_ text: String, at start: Int, zoneRequired: Bool) throws -> Timestamp {
        if let date = Timestamp(iso8601: text) { return date }
        let utc = Timestamp(iso8601: text + "Z")
        if !zoneRequired, let utc { return utc }
        let hint = utc != nil ? "add a time zone (Z or ±HH:MM)" : "write it as ISO 8601, e.g. 2026-01-02T03:04:05.678Z"
        throw source.error("invalid date '\(text)'", at: start, hint: hint)
    }

    private mutating func digits() -> Int {
        let start = offset
        while let byte = byte(at: offset), ODataLexer.isDigit(byte) { offset += 1 }
        return offset - start
    }

    private mutating func number() throws -> ODataToken {
        let start = offset
        let negative = bytes[offset] == UInt8(ascii: "-")
        if negative {
            offset += 1
            if bytes[offset...].starts(with: "INF".utf8), !(byte(at: offset + 3).map(ODataLexer.isWordByte) ?? false) {
                offset += 3
                return ODataToken(kind: .literal(.double(-.infinity)), start: start, end: offset)
            }
            guard let byte = byte(at: offset), ODataLexer.isDigit(byte) else {
                throw source.error("unexpected '-'", at: start, hint: "a minus sign must be followed by a number")
            }
        }
        let integerDigits = digits()
        if !negative, integerDigits == 4, byte(at: offset) == UInt8(ascii: "-") {
            return try bareDate(from: start)
        }
        var isDouble = false
        if byte(at: offset) == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw malformedNumber(from: start) }
            isDouble = true
        }
        if let byte = byte(at: offset), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            offset += 1
            if let sign = self.byte(at: offset), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw malformedNumber(from: start) }
            isDouble = true
        }
        let numberEnd = offset
        if let suffix = byte(at: offset) {
            switch suffix {
            case UInt8(ascii: "d"), UInt8(ascii: "D"), UInt8(ascii: "f"), UInt8(ascii: "F"), UInt8(ascii: "m"),
                UInt8(ascii: "M"):
                offset += 1
                isDouble = true
            case UInt8(ascii: "l"), UInt8(ascii: "L"):
                if !isDouble { offset += 1 }
            default:
                break
            }
        }
        if let byte = byte(at: offset), ODataLexer.isWordByte(byte) || byte == UInt8(ascii: ".") {
            throw malformedNumber(from: start)
        }
        let text = String(decoding: bytes[start..<numberEnd], as: UTF8.self)
        if isDouble {
            guard let value = Double(text), value.isFinite else {
                throw source.error("number \(text) is out of the range of a double", at: start)
            }
            return ODataToken(kind: .literal(.double(value)), start: start, end: offset)
        }
        guard let value = Int64(text) else {
            throw source.error(
                "integer \(text) does not fit in 64 bits", at: start, hint: "write it as a double, e.g. \(text).0")
        }
        return ODataToken(kind: .literal(.int(value)), start: start, end: offset)
    }

    private mutating func malformedNumber(from start: Int) -> OfflineSyncError {
        while let byte = byte(at: offset), ODataLexer.isWordByte(byte) || byte == UInt8(ascii: ".") { offset += 1 }
        return source.error(
            "malformed number '\(String(decoding: bytes[start..<offset], as: UTF8.self))'", at: start,
            hint: "write numbers as 12, -3, 1.5, 1e10 or 1.5E-3")
    }

    /// Reads an unquoted ISO 8601 date or date-time (OData v4), e.g. `2026-01-02T03:04:05.678Z`.
    private mutating func bareDate(from start: Int) throws -> ODataToken {
        while let byte = byte(at: offset),
            ODataLexer.isDigit(byte)
                || [
                    UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "+"),
                    UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: "Z"), UInt8(ascii: "z"),
                ].contains(byte)
        {
            offset += 1
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if let byte = byte(at: offset), ODataLexer.isWordByte(byte) {
            throw source.error(
                "invalid date '\(text)'", at: start, hint: "write it as ISO 8601, e.g. 2026-01-02T03:04:05.678Z")
        }
        return ODataToken(
            kind: .literal(.date(try date(text, at: start, zoneRequired: true))), start: start, end: offset)
    }
}
