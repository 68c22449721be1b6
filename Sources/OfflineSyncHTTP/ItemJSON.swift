import Foundation
import OfflineSync

/// The JSON form of items on the wire: the one place where item bodies are read and written,
/// for the client and for the reference server.
///
/// - Writing: `id` first, then the system properties in protocol order (`createdAt`, `updatedAt`,
///   `version`, `deleted`), then the other columns in the order given (or sorted by name). Dates are
///   ISO 8601 strings with milliseconds, JSON columns are embedded as JSON, doubles always print
///   as numbers with a fraction or exponent.
/// - Reading: a body must be an object with a string `id`; `createdAt` and `updatedAt` must be
///   ISO 8601 strings, `version` a string and `deleted` a boolean (each may be null or absent).
///   Nested arrays and objects become ``Value/json(_:)``. Anything else is a ``WireFormatError``
///   that names the item and the property.
package enum ItemJSON {
    /// The body of a client write: the item's columns without system properties (the version
    /// travels in `If-Match`), and without `id` when the id is empty (the server assigns one).
    package static func encodeForWrite(_ item: Item) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        if !item.id.isEmpty { writer.member("id", .string(item.id)) }
        for key in item.values.keys.sorted() where SystemProperty(rawValue: key) == nil && key != "id" {
            if let value = item.values[key], !value.isNull { writer.member(key, value) }
        }
        writer.endObject()
        return writer.bytes
    }

    /// The body of a server answer: `id`, the system properties, then `columns` in order (other
    /// columns follow, sorted by name). Null columns are written as `null` when listed in `columns`.
    package static func encode(_ item: Item, columns: [String] = []) -> [UInt8] {
        var writer = JSONWriter()
        write(item, columns: columns, into: &writer)
        return writer.bytes
    }

    /// A JSON array of items, or `{"results": [...], "count": N}` when `count` is given.
    package static func encodePage(_ items: [Item], count: Int?, columns: [String] = []) -> [UInt8] {
        var writer = JSONWriter()
        if let count {
            writer.raw("{\"results\":")
            writeArray(items, columns: columns, into: &writer)
            writer.raw(",\"count\":\(count)}")
        } else {
            writeArray(items, columns: columns, into: &writer)
        }
        return writer.bytes
    }

    /// A JSON object of the given members, keys sorted (error bodies and the like).
    package static func encodeObject(_ members: [String: Value]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for key in members.keys.sorted() { writer.member(key, members[key] ?? .null) }
        writer.endObject()
        return writer.bytes
    }

    /// Reads one item.
    package static func decodeItem(_ body: [UInt8]) throws(WireFormatError) -> Item {
        try item(from: parse(body), position: nil)
    }

    /// Reads a page: a JSON array of items, or `{"results": [...], "count": N}`.
    package static func decodePage(_ body: [UInt8]) throws(WireFormatError) -> QueryResult {
        let root = try parse(body)
        if let array = root as? [Any] {
            return QueryResult(items: try items(from: array))
        }
        guard let object = root as? [String: Any] else {
            throw WireFormatError("the body is a \(describe(root)), not a JSON array of items or {\"results\": [...], \"count\": N}")
        }
        guard let results = object["results"] as? [Any] else {
            throw WireFormatError("the body is an object without a \"results\" array; expected a JSON array of items or {\"results\": [...], \"count\": N}")
        }
        var count: Int?
        if let value = object["count"], !(value is NSNull) {
            guard let number = integer(value) else {
                throw WireFormatError("\"count\" is \(describe(value)), not an integer")
            }
            count = Int(number)
        }
        return QueryResult(items: try items(from: results), totalCount: count)
    }

    /// Reads a JSON object of column values (a request body), without requiring `id`.
    package static func decodeObject(_ body: [UInt8]) throws(WireFormatError) -> [String: Value] {
        let root = try parse(body)
        guard let object = root as? [String: Any] else {
            throw WireFormatError("the body is a \(describe(root)), not a JSON object")
        }
        var values: [String: Value] = [:]
        for (key, raw) in object {
            values[key] = try value(raw, key: key, id: nil)
        }
        return values
    }

    // MARK: Reading

    /// The single call into the JSON parser; replace this to change codecs.
    private static func parse(_ body: [UInt8]) throws(WireFormatError) -> Any {
        if body.isEmpty { throw WireFormatError("the body is empty; expected JSON") }
        do {
            return try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            let tail = String(decoding: body.suffix(24), as: UTF8.self)
            throw WireFormatError("the body is not valid JSON (\(body.count) bytes, ending with '\(tail)'); it may have been truncated")
        }
    }

    private static func items(from array: [Any]) throws(WireFormatError) -> [Item] {
        var result: [Item] = []
        result.reserveCapacity(array.count)
        for (position, element) in array.enumerated() {
            result.append(try item(from: element, position: position))
        }
        return result
    }

    private static func item(from root: Any, position: Int?) throws(WireFormatError) -> Item {
        let place = position.map { "item \($0) of the page" } ?? "the item"
        guard let object = root as? [String: Any] else {
            throw WireFormatError("\(place) is a \(describe(root)), not a JSON object")
        }
        guard let rawId = object["id"], !(rawId is NSNull) else {
            throw WireFormatError("\(place) has no \"id\"; every item of the table protocol carries a string id")
        }
        guard let id = rawId as? String, !isNumber(rawId) else {
            throw WireFormatError("\(place) has \"id\" \(describe(rawId)); ids must be strings")
        }
        var values: [String: Value] = [:]
        values.reserveCapacity(object.count)
        for (key, raw) in object where key != "id" {
            let converted = try value(raw, key: key, id: id)
            if !converted.isNull { values[key] = converted }
        }
        return Item(id: id, values: values)
    }

    private static func value(_ raw: Any, key: String, id: String?) throws(WireFormatError) -> Value {
        let converted = try plainValue(raw)
        guard let property = SystemProperty(rawValue: key), !converted.isNull else { return converted }
        let owner = id.map { "item '\($0)'" } ?? "the body"
        switch (property, converted) {
        case (.createdAt, .string(let text)), (.updatedAt, .string(let text)):
            guard let date = Timestamp(iso8601: text) else {
                throw WireFormatError("\(owner) has \"\(key)\" '\(text)', which is not an ISO 8601 date (e.g. 2026-01-02T03:04:05.678Z)")
            }
            return .date(date)
        case (.version, .string), (.deleted, .bool):
            return converted
        default:
            throw WireFormatError("\(owner) has \"\(key)\" \(describe(raw)); it must be \(property == .deleted ? "a boolean" : property == .version ? "a string" : "an ISO 8601 date string")")
        }
    }

    private static func plainValue(_ raw: Any) throws(WireFormatError) -> Value {
        switch raw {
        case is NSNull:
            return .null
        case let number as NSNumber:
            return try numberValue(number)
        case let text as String:
            return .string(text)
        case is [Any], is [String: Any]:
            guard let data = try? JSONSerialization.data(withJSONObject: raw, options: [.withoutEscapingSlashes]) else {
                throw WireFormatError("a nested JSON value could not be re-encoded")
            }
            return .json(String(decoding: data, as: UTF8.self))
        default:
            throw WireFormatError("unexpected JSON value \(raw)")
        }
    }

    private static func numberValue(_ number: NSNumber) throws(WireFormatError) -> Value {
        switch number.objCType.pointee {
        case CChar(UInt8(ascii: "c")), CChar(UInt8(ascii: "B")):
            return .bool(number.boolValue)
        case CChar(UInt8(ascii: "d")), CChar(UInt8(ascii: "f")):
            return .double(number.doubleValue)
        case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")), CChar(UInt8(ascii: "I")):
            guard let exact = Int64(exactly: number.uint64Value) else { return .double(number.doubleValue) }
            return .int(exact)
        default:
            return .int(number.int64Value)
        }
    }

    private static func integer(_ raw: Any) -> Int64? {
        guard isNumber(raw), let number = raw as? NSNumber, case .int(let value)? = try? numberValue(number) else { return nil }
        return value
    }

    private static func isNumber(_ raw: Any) -> Bool {
        guard let number = raw as? NSNumber else { return false }
        let type = number.objCType.pointee
        return type != CChar(UInt8(ascii: "c")) && type != CChar(UInt8(ascii: "B"))
    }

    private static func describe(_ raw: Any) -> String {
        switch raw {
        case is NSNull: return "null"
        case let number as NSNumber: return isNumber(number) ? "the number \(number)" : "the boolean \(number.boolValue)"
        case let text as String: return "the string '\(text.prefix(40))'"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "an unexpected value"
        }
    }

    // MARK: Writing

    private static func writeArray(_ items: [Item], columns: [String], into writer: inout JSONWriter) {
        writer.raw("[")
        for (index, item) in items.enumerated() {
            if index > 0 { writer.raw(",") }
            write(item, columns: columns, into: &writer)
        }
        writer.raw("]")
    }

    private static func write(_ item: Item, columns: [String], into writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("id", .string(item.id))
        for property in SystemProperty.allCases {
            if let value = item.values[property.rawValue], !value.isNull { writer.member(property.rawValue, value) }
        }
        var written = 0
        for column in columns where column != "id" && SystemProperty(rawValue: column) == nil {
            let value = item.values[column] ?? .null
            if !value.isNull { written += 1 }
            writer.member(column, value)
        }
        let remaining = item.values.count - written - SystemProperty.allCases.count { item.values[$0.rawValue] != nil }
        if remaining > 0 {
            for key in item.values.keys.sorted() where SystemProperty(rawValue: key) == nil && !columns.contains(key) {
                if let value = item.values[key], !value.isNull { writer.member(key, value) }
            }
        }
        writer.endObject()
    }
}

/// A body of the table protocol that could not be read; the message names what was wrong.
package struct WireFormatError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}

/// A small JSON writer producing UTF-8 bytes directly.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        bytes.reserveCapacity(256)
    }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = false
    }

    mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func member(_ key: String, _ value: Value) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(key)
        bytes.append(UInt8(ascii: ":"))
        self.value(value)
        needsComma = true
    }

    private mutating func value(_ value: Value) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number): bytes.append(contentsOf: ODataPrinter.literal(.double(number)).utf8)
        case .string(let text): string(text)
        case .date(let date): string(date.iso8601)
        case .json(let text): bytes.append(contentsOf: text.utf8)
        }
    }

    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
