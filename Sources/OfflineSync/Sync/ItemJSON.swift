/// The text form of an item kept inside the system tables (a deleted item in the queue, the local
/// and server copies in an operation error).
///
/// It is JSON that round-trips every ``Value`` exactly without knowing the table's schema:
/// integers print without a fraction, doubles always with a `.` or an exponent, dates as
/// `{"$date": "…"}` and JSON values as `{"$json": "…"}` (their text as a string). The id is the
/// member `id`. Only this file writes and reads the format.
enum ItemJSON {
    static func encode(_ item: Item) -> String {
        var output = "{\"id\":"
        appendString(item.id, to: &output)
        for key in item.values.keys.sorted() {
            guard let value = item.values[key], !value.isNull else { continue }
            output += ","
            appendString(key, to: &output)
            output += ":"
            switch value {
            case .null: output += "null"
            case .bool(let flag): output += flag ? "true" : "false"
            case .int(let number): output += String(number)
            case .double(let number):
                let text = String(number)
                output += text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
            case .string(let text): appendString(text, to: &output)
            case .date(let date): output += "{\"$date\":\"\(date.iso8601)\"}"
            case .json(let text):
                output += "{\"$json\":"
                appendString(text, to: &output)
                output += "}"
            }
        }
        output += "}"
        return output
    }

    static func decode(_ text: String) throws -> Item {
        var parser = Parser(bytes: Array(text.utf8))
        let item = try parser.parseItem()
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.failure("trailing characters") }
        return item
    }

    private static func appendString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func failure(_ what: String) -> OfflineSyncError {
            OfflineSyncError(.storage, "a stored item in a system table is damaged (\(what) at byte \(index)); the store's system tables were changed outside OfflineSync")
        }

        mutating func skipSpace() {
            while index < bytes.count, [32, 9, 10, 13].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw failure("expected '\(Character(UnicodeScalar(byte)))'") }
            index += 1
        }

        mutating func peek() -> UInt8? {
            skipSpace()
            return index < bytes.count ? bytes[index] : nil
        }

        mutating func parseItem() throws -> Item {
            try expect(UInt8(ascii: "{"))
            var id: String?
            var values: [String: Value] = [:]
            if peek() == UInt8(ascii: "}") { index += 1 } else {
                while true {
                    let key = try parseString()
                    try expect(UInt8(ascii: ":"))
                    if key == "id" {
                        id = try parseString()
                    } else {
                        values[key] = try parseValue()
                    }
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    break
                }
            }
            guard let id else { throw failure("missing id") }
            return Item(id: id, values: values)
        }

        mutating func parseValue() throws -> Value {
            guard let byte = peek() else { throw failure("unexpected end") }
            switch byte {
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "{"):
                index += 1
                let tag = try parseString()
                try expect(UInt8(ascii: ":"))
                let text = try parseString()
                try expect(UInt8(ascii: "}"))
                switch tag {
                case "$date":
                    guard let date = Timestamp(iso8601: text) else { throw failure("bad date '\(text)'") }
                    return .date(date)
                case "$json": return .json(text)
                default: throw failure("unknown tag '\(tag)'")
                }
            default: return try parseNumber()
            }
        }

        mutating func literal(_ word: String) throws {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw failure("expected \(word)")
            }
            index += expected.count
        }

        mutating func parseNumber() throws -> Value {
            let start = index
            var isDouble = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { isDouble = true }
                guard (byte >= 48 && byte <= 57) || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(byte) else { break }
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isDouble, let number = Double(text) { return .double(number) }
            if !isDouble, let number = Int64(text) { return .int(number) }
            throw failure("bad number '\(text)'")
        }

        mutating func parseString() throws -> String {
            try expect(UInt8(ascii: "\""))
            var runStart = index
            var result = ""
            func flush(_ end: Int) {
                if end > runStart { result += String(decoding: bytes[runStart..<end], as: UTF8.self) }
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    flush(index)
                    index += 1
                    return result
                }
                if byte == UInt8(ascii: "\\") {
                    flush(index)
                    index += 1
                    guard index < bytes.count else { break }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "n"): result += "\n"
                    case UInt8(ascii: "r"): result += "\r"
                    case UInt8(ascii: "t"): result += "\t"
                    case UInt8(ascii: "b"): result += "\u{8}"
                    case UInt8(ascii: "f"): result += "\u{C}"
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try hex4()
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = UnicodeScalar(code) else { throw failure("bad \\u escape") }
                        result.unicodeScalars.append(scalar)
                    default: result.unicodeScalars.append(UnicodeScalar(escape))
                    }
                    runStart = index
                    continue
                }
                index += 1
            }
            throw failure("unterminated string")
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                throw failure("bad \\u escape")
            }
            index += 4
            return code
        }
    }
}
