/// A single-pass JSON reader over UTF-8 bytes that builds ``Value``s and ``Item``s directly,
/// without an intermediate tree (the rules are on ``JSONCodec``).
///
/// Every read checks the bounds first, so any input — truncated, invalid UTF-8, deeply nested —
/// ends in a thrown ``OfflineSyncError`` naming the byte offset, never in a crash.
struct JSONReader {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 512

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Decoded bytes of a string with escapes, reused between strings.
    var scratch: [UInt8] = []
    /// The layout of the previous item: the next one, with the same members in the same order
    /// (as the items of a page have), shares it.
    var previousLayout = RowLayout.empty

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    // MARK: - Errors

    func describeByte(at offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the input" }
        let byte = bytes[offset]
        return byte >= 0x20 && byte < 0x7F
            ? "'\(Unicode.Scalar(byte))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    func syntaxError(_ problem: String, at offset: Int) -> OfflineSyncError {
        OfflineSyncError(.syntax, "invalid JSON at byte offset \(offset): \(problem)")
    }

    func expected(_ what: String) -> OfflineSyncError {
        syntaxError("expected \(what), found \(describeByte(at: index))", at: index)
    }

    func shapeError(_ problem: String, at offset: Int) -> OfflineSyncError {
        OfflineSyncError(.invalidValue, "unexpected JSON shape at byte offset \(offset): \(problem)")
    }

    // MARK: - Structure

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The next non-whitespace byte, not consumed; `nil` at the end.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    mutating func consume(_ byte: UInt8, _ what: String) throws {
        guard peek() == byte else { throw expected(what) }
        index += 1
    }

    /// Consumes `byte` if it comes next.
    mutating func consumeIf(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    /// Throws unless only whitespace is left.
    mutating func finish() throws {
        guard peek() == nil else { throw expected("the end of the input after the JSON value") }
    }

    /// Reads `{ "key": value, … }`, calling `member` with each key; `member` reads the value.
    mutating func readObject(_ member: (inout JSONReader, _ key: String, _ keyOffset: Int) throws -> Void) throws {
        try consume(UInt8(ascii: "{"), "'{'")
        if consumeIf(UInt8(ascii: "}")) { return }
        repeat {
            guard peek() == UInt8(ascii: "\"") else { throw expected("a member name in double quotes") }
            let keyOffset = index
            let key = try readString()
            try consume(UInt8(ascii: ":"), "':' after a member name")
            try member(&self, key, keyOffset)
        } while consumeIf(UInt8(ascii: ","))
        try consume(UInt8(ascii: "}"), "',' or '}' after an object member")
    }

    /// Reads `[ value, … ]`, calling `element` to read each value.
    mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        try consume(UInt8(ascii: "["), "'['")
        if consumeIf(UInt8(ascii: "]")) { return }
        repeat {
            try element(&self)
        } while consumeIf(UInt8(ascii: ","))
        try consume(UInt8(ascii: "]"), "',' or ']' after an array element")
    }

    // MARK: - Values

    /// Reads any JSON value; arrays and objects become ``Value/json(_:)`` with their compact text.
    mutating func readValue() throws -> Value {
        guard let byte = peek() else { throw expected("a JSON value") }
        switch byte {
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var text: [UInt8] = []
            try appendCompact(to: &text, depth: 0)
            return .json(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "t"):
            try readWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readWord("null")
            return .null
        case UInt8(ascii: "-"), 48...57: return try readNumber()
        default: throw expected("a JSON value")
        }
    }

    /// Checks the value at the current position and moves past it, building nothing: what
    /// ``readValue()`` accepts inside an array or object (numbers are scanned, not converted).
    mutating func skipValue(depth: Int = 0) throws {
        guard depth < JSONReader.maximumDepth else {
            throw syntaxError("arrays and objects nested deeper than \(JSONReader.maximumDepth) levels", at: index)
        }
        guard let byte = peek() else { throw expected("a JSON value") }
        switch byte {
        case UInt8(ascii: "{"):
            index += 1
            if consumeIf(UInt8(ascii: "}")) { return }
            repeat {
                guard peek() == UInt8(ascii: "\"") else { throw expected("a member name in double quotes") }
                _ = try scanString()
                try consume(UInt8(ascii: ":"), "':' after a member name")
                try skipValue(depth: depth + 1)
            } while consumeIf(UInt8(ascii: ","))
            try consume(UInt8(ascii: "}"), "',' or '}' after an object member")
        case UInt8(ascii: "["):
            index += 1
            if consumeIf(UInt8(ascii: "]")) { return }
            repeat {
                try skipValue(depth: depth + 1)
            } while consumeIf(UInt8(ascii: ","))
            try consume(UInt8(ascii: "]"), "',' or ']' after an array element")
        case UInt8(ascii: "\""): _ = try scanString()
        case UInt8(ascii: "-"), 48...57: _ = try scanNumber()
        case UInt8(ascii: "t"): try readWord("true")
        case UInt8(ascii: "f"): try readWord("false")
        case UInt8(ascii: "n"): try readWord("null")
        default: throw expected("a JSON value")
        }
    }

    mutating func readWord(_ word: StaticString) throws {
        let start = index
        let count = word.utf8CodeUnitCount
        let matches = index + count <= bytes.count && (0..<count).allSatisfy { bytes[index + $0] == word.utf8Start[$0] }
        guard matches else { throw syntaxError("expected '\(word)'", at: start) }
        index += count
    }

    /// Writes the compact text of the array or object at the current position: no whitespace
    /// outside strings, strings re-escaped canonically, numbers as written.
    mutating func appendCompact(to text: inout [UInt8], depth: Int) throws {
        guard depth < JSONReader.maximumDepth else {
            throw syntaxError("arrays and objects nested deeper than \(JSONReader.maximumDepth) levels", at: index)
        }
        guard let byte = peek() else { throw expected("a JSON value") }
        switch byte {
        case UInt8(ascii: "{"):
            text.append(byte)
            var first = true
            try readObject { reader, key, _ in
                if !first { text.append(UInt8(ascii: ",")) }
                first = false
                JSONWriter.appendString(key, to: &text)
                text.append(UInt8(ascii: ":"))
                try reader.appendCompact(to: &text, depth: depth + 1)
            }
            text.append(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            text.append(byte)
            var first = true
            try readArray { reader in
                if !first { text.append(UInt8(ascii: ",")) }
                first = false
                try reader.appendCompact(to: &text, depth: depth + 1)
            }
            text.append(UInt8(ascii: "]"))
        case UInt8(ascii: "\""):
            JSONWriter.appendString(try readString(), to: &text)
        case UInt8(ascii: "-"), 48...57:
            let number = try scanNumber()
            text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[number.start..<index]))
        default:
            let start = index
            _ = try readValue()
            text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        }
    }

    // MARK: - Numbers

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// A number as read: its decimal digits as an integer (while they fit) and a power of ten.
    struct ScannedNumber {
        var start: Int
        var negative: Bool
        var mantissa: UInt64
        var mantissaOverflow: Bool
        var isInteger: Bool
        var exponent10: Int
    }

    /// Reads a number: an integer that fits `Int64` becomes ``Value/int(_:)``, anything else a
    /// correctly rounded ``Value/double(_:)``.
    mutating func readNumber() throws -> Value {
        let number = try scanNumber()
        if number.isInteger, !number.mantissaOverflow {
            let mantissa = number.mantissa
            if number.negative, mantissa <= UInt64(Int64.max) + 1 {
                return .int(Int64(truncatingIfNeeded: 0 &- mantissa))
            }
            if !number.negative, mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
        }
        let exponent10 = number.exponent10
        if !number.mantissaOverflow, number.mantissa <= 1 << 53, exponent10 >= -22, exponent10 <= 22 {
            let magnitude =
                exponent10 < 0
                ? Double(number.mantissa) / JSONReader.powersOfTen[-exponent10]
                : Double(number.mantissa) * JSONReader.powersOfTen[exponent10]
            return .double(number.negative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[number.start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw shapeError("the number \(text) is beyond the range of a double", at: number.start)
        }
        return .double(value)
    }

    /// Reads the text of a number, checking the JSON grammar.
    mutating func scanNumber() throws -> ScannedNumber {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var mantissaOverflow = false
        guard index < bytes.count, bytes[index] &- 48 <= 9 else { throw expected("a digit") }
        let leadingZero = bytes[index] == UInt8(ascii: "0")
        var integerDigits = 0
        while index < bytes.count, case let digit = bytes[index] &- 48, digit <= 9 {
            if mantissa <= (UInt64.max - 9) / 10 {
                mantissa = mantissa &* 10 &+ UInt64(digit)
            } else {
                mantissaOverflow = true
            }
            integerDigits += 1
            index += 1
        }
        if leadingZero, integerDigits > 1 { throw syntaxError("a number may not have a leading zero", at: start) }
        var fractionDigits = 0
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard index < bytes.count, bytes[index] &- 48 <= 9 else { throw expected("a digit after '.'") }
            while index < bytes.count, case let digit = bytes[index] &- 48, digit <= 9 {
                if mantissa <= (UInt64.max - 9) / 10 {
                    mantissa = mantissa &* 10 &+ UInt64(digit)
                } else {
                    mantissaOverflow = true
                }
                fractionDigits += 1
                index += 1
            }
        }
        var exponent = 0
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            isInteger = false
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < bytes.count, bytes[index] &- 48 <= 9 else { throw expected("a digit in the exponent") }
            while index < bytes.count, case let digit = bytes[index] &- 48, digit <= 9 {
                if exponent < 100_000 { exponent = exponent * 10 + Int(digit) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        return ScannedNumber(
            start: start, negative: negative, mantissa: mantissa, mantissaOverflow: mantissaOverflow,
            isInteger: isInteger, exponent10: exponent - fractionDigits)
    }

    // MARK: - Strings

    /// Where the content of a string just read is: in the input, or in ``scratch`` when it had
    /// escapes.
    enum StringContent {
        case input(Range<Int>)
        case scratch
    }

    /// Reads a string at the current position (the opening quote).
    mutating func readString() throws -> String {
        let content = try scanString()
        return withBytes(of: content) { String(decoding: $0, as: UTF8.self) }
    }

    /// The validated, unescaped UTF-8 bytes of a string read by ``scanString()``.
    func withBytes<T>(of content: StringContent, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        switch content {
        case .input(let range): return try body(UnsafeBufferPointer(rebasing: bytes[range]))
        case .scratch: return try scratch.withUnsafeBufferPointer(body)
        }
    }

    /// Reads a string at the current position (the opening quote), validating its UTF-8 and
    /// decoding its escapes.
    mutating func scanString() throws -> StringContent {
        let quote = index
        index += 1
        let start = index
        while index < bytes.count {
            if index + 8 <= bytes.count {
                let special = JSONReader.specialBytes(bytes, at: index)
                if special == 0 {
                    index += 8
                    continue
                }
                index += special.trailingZeroBitCount >> 3
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return .input(start..<index - 1)
            }
            if byte == UInt8(ascii: "\\") {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                try readEscapedRest(openedAt: quote)
                return .scratch
            }
            if byte < 0x20 { throw controlCharacter(byte) }
            if byte < 0x80 { index += 1 } else { index += try utf8SequenceLength(at: index) }
        }
        throw syntaxError("unterminated string", at: quote)
    }

    /// A mask with the high bit set in the lowest of the 8 bytes at `offset` that a string scan
    /// must look at (non-ASCII, a control character, `"` or `\`), 0 when there is none. Higher
    /// bits may be set spuriously; only the lowest one is exact.
    @inline(__always)
    static func specialBytes(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        let word = UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self))
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | word) & highs
    }

    private func controlCharacter(_ byte: UInt8) -> OfflineSyncError {
        let hex = String(byte, radix: 16, uppercase: true)
        return syntaxError(
            "control character U+\(String(repeating: "0", count: 4 - hex.count) + hex) inside a string; it must be escaped",
            at: index)
    }

    /// Continues a string after its first backslash, appending decoded bytes to `scratch`.
    private mutating func readEscapedRest(openedAt quote: Int) throws {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                try readEscape()
            case 0..<0x20:
                throw controlCharacter(byte)
            case 0..<0x80:
                scratch.append(byte)
                index += 1
            default:
                let length = try utf8SequenceLength(at: index)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + length]))
                index += length
            }
        }
        throw syntaxError("unterminated string", at: quote)
    }

    private mutating func readEscape() throws {
        let start = index
        guard index + 1 < bytes.count else { throw syntaxError("unterminated escape sequence", at: start) }
        let code = bytes[index + 1]
        index += 2
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(code)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad(escapeAt: start)
            if (0xDC00...0xDFFF).contains(scalar) {
                throw syntaxError("\\u escape of a low surrogate without a preceding high surrogate", at: start)
            }
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw syntaxError(
                        "\\u escape of a high surrogate not followed by a \\u escape of a low surrogate", at: start)
                }
                let lowStart = index
                index += 2
                let low = try hexQuad(escapeAt: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw syntaxError(
                        "\\u escape of a high surrogate not followed by a \\u escape of a low surrogate", at: start)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            appendUTF8(scalar)
        default:
            throw syntaxError("unknown escape sequence '\\\(Unicode.Scalar(code))'", at: start)
        }
    }

    private mutating func hexQuad(escapeAt start: Int) throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw syntaxError("truncated \\u escape", at: start) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 65...70: digit = byte - 55
            case 97...102: digit = byte - 87
            default: throw syntaxError("\\u escape needs four hexadecimal digits", at: start)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The length of the well-formed multi-byte UTF-8 sequence at `offset` (Unicode table 3-7:
    /// no overlong forms, no surrogates, nothing above U+10FFFF).
    private func utf8SequenceLength(at offset: Int) throws -> Int {
        let lead = bytes[offset]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default:
            throw syntaxError(
                "invalid UTF-8 (byte 0x\(String(lead, radix: 16, uppercase: true)) cannot start a character)",
                at: offset)
        }
        guard offset + length <= bytes.count else { throw syntaxError("truncated UTF-8 sequence", at: offset) }
        let second = bytes[offset + 1]
        guard second >= lower, second <= upper else { throw syntaxError("invalid UTF-8 sequence", at: offset) }
        for position in 2..<max(2, length) where bytes[offset + position] & 0xC0 != 0x80 {
            throw syntaxError("invalid UTF-8 sequence", at: offset)
        }
        return length
    }

    // MARK: - Items

    /// The member names of items read so far.
    var memberNames = JSONMemberNames()

    /// Reads a member name into ``memberNames`` and answers its index there.
    mutating func readMemberName() throws -> Int {
        switch try scanString() {
        case .input(let range): return memberNames.index(of: UnsafeBufferPointer(rebasing: bytes[range]))
        case .scratch: return scratch.withUnsafeBufferPointer { memberNames.index(of: $0) }
        }
    }

    /// Reads an object into an item: `id` must be a string; `createdAt` and `updatedAt` that read
    /// as ISO 8601 become dates; a member name may appear once.
    mutating func readItem() throws -> Item {
        let start = index
        guard let first = peek() else { throw expected("an item") }
        guard first == UInt8(ascii: "{") else {
            throw shapeError("an item must be a JSON object, found \(describeByte(at: index))", at: index)
        }
        index += 1
        var id: String?
        // Members are matched against the previous item's layout while they follow it; the
        // names are collected only from the first member that differs.
        let previous = previousLayout
        var matched = 0
        var names: [String]? = nil
        var seen: Set<String>? = nil
        var slots: [Value?] = []
        slots.reserveCapacity(previous.names.count)
        memberNames.beginObject()
        if !consumeIf(UInt8(ascii: "}")) {
            repeat {
                guard peek() == UInt8(ascii: "\"") else { throw expected("a member name in double quotes") }
                let nameOffset = index
                let member = try readMemberName()
                try consume(UInt8(ascii: ":"), "':' after a member name")
                let value: Value
                switch memberNames.roles[member] {
                case .id:
                    guard peek() == UInt8(ascii: "\"") else {
                        throw shapeError(
                            "the item's 'id' must be a string, found \(describeByte(at: index))", at: index)
                    }
                    guard id == nil else { throw shapeError("the item has the member 'id' twice", at: nameOffset) }
                    id = try readString()
                    continue
                case .systemDate:
                    value = try readDateOrValue()
                case .column:
                    value = try readValue()
                }
                let name = memberNames.names[member]
                if names == nil, matched < previous.names.count, previous.names[matched] == name {
                    matched += 1
                } else {
                    if names == nil { names = Array(previous.names[..<matched]) }
                    // A linear search for an item's usual handful of members, a set beyond (an
                    // object of many members costs no quadratic time).
                    if seen == nil, names!.count >= RowLayout.linearSearchLimit { seen = Set(names!) }
                    let repeated = seen != nil ? !seen!.insert(name).inserted : names!.contains(name)
                    guard !repeated else {
                        throw shapeError("the item has the member '\(name)' twice", at: nameOffset)
                    }
                    names!.append(name)
                }
                slots.append(value)
            } while consumeIf(UInt8(ascii: ","))
            try consume(UInt8(ascii: "}"), "',' or '}' after an object member")
        }
        guard let id else { throw shapeError("the item has no string member 'id'", at: start) }
        if names == nil && matched == previous.names.count {
            return Item(id: id, layout: previous, values: slots)
        }
        let layout = RowLayout(uniqueNames: names ?? Array(previous.names[..<matched]))
        previousLayout = layout
        return Item(id: id, layout: layout, values: slots)
    }

    private mutating func readDateOrValue() throws -> Value {
        guard peek() == UInt8(ascii: "\"") else { return try readValue() }
        let content = try scanString()
        return withBytes(of: content) { text in
            Timestamp.parseISO8601(text).map(Value.date) ?? .string(String(decoding: text, as: UTF8.self))
        }
    }

    /// Reads `[item, …]`.
    mutating func readItems() throws -> [Item] {
        guard let first = peek() else { throw expected("an array of items") }
        guard first == UInt8(ascii: "[") else {
            throw shapeError("expected an array of items, found \(describeByte(at: index))", at: index)
        }
        var items: [Item] = []
        try readArray { reader in items.append(try reader.readItem()) }
        return items
    }

    /// Reads `[item, …]` or `{"results": [item, …], "count": n}`; other members of the object are
    /// checked and ignored.
    mutating func readResult() throws -> QueryResult {
        guard peek() == UInt8(ascii: "{") else { return QueryResult(items: try readItems()) }
        let start = index
        var items: [Item]?
        var count: Int?
        try readObject { reader, key, keyOffset in
            switch key {
            case "results":
                guard items == nil else { throw reader.shapeError("the member 'results' appears twice", at: keyOffset) }
                items = try reader.readItems()
            case "count":
                let countOffset = reader.index
                guard case .int(let value) = try reader.readValue(), value >= 0, let exact = Int(exactly: value) else {
                    throw reader.shapeError("'count' must be a non-negative integer", at: countOffset)
                }
                count = exact
            default:
                var ignored: [UInt8] = []
                try reader.appendCompact(to: &ignored, depth: 0)
            }
        }
        guard let items else { throw shapeError("the object has no member 'results' holding the items", at: start) }
        return QueryResult(items: items, totalCount: count)
    }
}
