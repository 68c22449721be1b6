import OfflineSync

/// One item as one line of JSON, the format of `import` and `export`.
///
/// Values map as follows: strings, booleans and `null` as themselves; integers without a fraction
/// or exponent become integers, other numbers doubles; nested arrays and objects are kept as their
/// exact text (for `json` columns); dates are ISO 8601 strings (a `date` column converts them on
/// write). Export writes `id` first, then the table's columns in declaration order, and leaves out
/// null values, so the same items export to the same bytes on every backend.
enum JSONLine {
    /// The line of an item, with columns in the order of `columns`.
    static func encode(_ item: Item, columns: [Column]) -> String {
        var text = "{\"id\":"
        appendString(item.id, to: &text)
        for column in columns {
            let value = item[column.name]
            if value.isNull { continue }
            text += ","
            appendString(column.name, to: &text)
            text += ":"
            appendValue(value, to: &text)
        }
        text += "}"
        return text
    }

    /// The JSON text of a value.
    static func appendValue(_ value: Value, to text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .int(let number): text += String(number)
        case .double(let number): text += String(number)
        case .string(let string): appendString(string, to: &text)
        case .date(let date): appendString(date.iso8601, to: &text)
        case .json(let json): text += json
        }
    }

    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let digits = Array("0123456789abcdef")
                text += "\\u00" + String(digits[Int(scalar.value >> 4)]) + String(digits[Int(scalar.value & 0xF)])
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// Parses one line holding a JSON object with a string `id` into an item.
    /// Throws a ``Failure`` naming the column (1-based, in bytes) and what was expected.
    static func decode(_ line: some StringProtocol) throws(Failure) -> Item {
        var reader = Reader(bytes: Array(line.utf8))
        let fields = try reader.topLevelObject()
        var id: String?
        var values: [String: Value] = [:]
        for (key, value) in fields {
            if key == "id" {
                guard case .string(let text) = value else {
                    throw Failure(message: "\"id\" must be a string, not \(value.type?.rawValue ?? "null")")
                }
                id = text
            } else {
                values[key] = value
            }
        }
        guard let id else { throw Failure(message: "the object has no \"id\"") }
        return Item(id: id, values: values)
    }

    /// Why a line could not be read.
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func topLevelObject() throws(Failure) -> [(String, Value)] {
            skipSpace()
            guard peek == UInt8(ascii: "{") else { throw expected("a JSON object '{'") }
            index += 1
            var fields: [(String, Value)] = []
            var seen: Set<String> = []
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard peek == UInt8(ascii: "\"") else { throw expected("a key in double quotes") }
                    let key = try string()
                    guard seen.insert(key).inserted else { throw Failure(message: "key \"\(key)\" appears twice") }
                    skipSpace()
                    guard peek == UInt8(ascii: ":") else { throw expected("':'") }
                    index += 1
                    skipSpace()
                    fields.append((key, try value()))
                    skipSpace()
                    if peek == UInt8(ascii: ",") { index += 1; continue }
                    if peek == UInt8(ascii: "}") { index += 1; break }
                    throw expected("',' or '}'")
                }
            }
            skipSpace()
            guard index == bytes.count else { throw expected("the end of the line") }
            return fields
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 32 || byte == 9 || byte == 10 || byte == 13 { index += 1 }
        }

        func expected(_ what: String) -> Failure {
            let found = peek.map { "'\(String(decoding: [$0], as: UTF8.self))'" } ?? "the end of the line"
            return Failure(message: "expected \(what) at column \(index + 1), found \(found)")
        }

        mutating func value() throws(Failure) -> Value {
            switch peek {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let start = index
                try skipComposite()
                return .json(String(decoding: bytes[start..<index], as: UTF8.self))
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case let byte? where byte == UInt8(ascii: "-") || (byte >= 48 && byte <= 57): return try number()
            default: throw expected("a value")
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            let expectedBytes = Array(word.utf8)
            guard index + expectedBytes.count <= bytes.count,
                  Array(bytes[index..<index + expectedBytes.count]) == expectedBytes else { throw expected("a value") }
            index += expectedBytes.count
        }

        mutating func number() throws(Failure) -> Value {
            let start = index
            var isInteger = true
            if peek == UInt8(ascii: "-") { index += 1 }
            while let byte = peek {
                if byte >= 48 && byte <= 57 { index += 1; continue }
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                    isInteger = false
                    index += 1
                    continue
                }
                break
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .int(integer) }
            guard let double = Double(text), double.isFinite else {
                index = start
                throw expected("a number")
            }
            return .double(double)
        }

        mutating func string() throws(Failure) -> String {
            index += 1
            var result: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: result, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escape = peek else { throw expected("an escaped character") }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                    case UInt8(ascii: "b"): result.append(8)
                    case UInt8(ascii: "f"): result.append(12)
                    case UInt8(ascii: "n"): result.append(10)
                    case UInt8(ascii: "r"): result.append(13)
                    case UInt8(ascii: "t"): result.append(9)
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                                throw expected("the second half of a UTF-16 surrogate pair")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw expected("a low surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw Failure(message: "\\u escape at column \(index) is not a Unicode scalar") }
                        result += Array(String(Character(scalar)).utf8)
                    default:
                        index -= 1
                        throw expected("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u")
                    }
                case 0..<0x20:
                    index -= 1
                    throw expected("a control character to be escaped")
                default:
                    result.append(byte)
                }
            }
            throw expected("a closing '\"'")
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = peek, let digit = HexDigit.value(byte) else { throw expected("4 hex digits") }
                code = code << 4 | UInt32(digit)
                index += 1
            }
            return code
        }

        /// Skips a nested array or object, checking its syntax.
        mutating func skipComposite() throws(Failure) {
            let open = bytes[index]
            let close = open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipSpace()
            if peek == close { index += 1; return }
            while true {
                skipSpace()
                if open == UInt8(ascii: "{") {
                    guard peek == UInt8(ascii: "\"") else { throw expected("a key in double quotes") }
                    _ = try string()
                    skipSpace()
                    guard peek == UInt8(ascii: ":") else { throw expected("':'") }
                    index += 1
                    skipSpace()
                }
                _ = try value()
                skipSpace()
                if peek == UInt8(ascii: ",") { index += 1; continue }
                if peek == close { index += 1; return }
                throw expected("',' or '\(String(decoding: [close], as: UTF8.self))'")
            }
        }
    }
}

/// Hex digit values.
enum HexDigit {
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
