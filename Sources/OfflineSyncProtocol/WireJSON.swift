import Foundation
package import OfflineSync

/// The JSON bodies of the table protocol, for the client and for the reference server: items and
/// pages go through the core's single-pass ``JSONCodec``; this adds the protocol's rules.
///
/// - Reading an item or page also checks the system properties: `createdAt` and `updatedAt` must
///   be ISO 8601 dates, `version` a string and `deleted` a boolean (each may be null or absent).
///   Anything else is a ``WireFormatError`` naming the item and the property, so nothing
///   half-read reaches a store.
/// - A client write carries the item's columns without system properties (the version travels
///   in `If-Match`), and no `id` when the id is empty (the server assigns one).
package enum WireJSON {
    // MARK: Writing

    /// The body of a client write.
    package static func encodeForWrite(_ item: Item) throws(WireFormatError) -> [UInt8] {
        try codec("item '\(item.id)'") {
            try JSONCodec.encode(item, nonNullMembersWhere: { SystemProperty(columnName: $0) == nil })
        }
    }

    /// A JSON object of the given members, `first` (when present) then the others by name.
    package static func encodeObject(_ members: [String: Value], first: String? = nil) throws(WireFormatError)
        -> [UInt8]
    {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        var keys = members.keys.sorted()
        if let first, let position = keys.firstIndex(of: first) { keys.insert(keys.remove(at: position), at: 0) }
        for key in keys {
            guard let value = members[key] else { continue }
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes += try codec("member '\(key)'") {
                try JSONCodec.encode(.string(key)) + [UInt8(ascii: ":")] + JSONCodec.encode(value)
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// One item as the server answers it.
    package static func encode(_ item: Item) throws(WireFormatError) -> [UInt8] {
        try codec("item '\(item.id)'") { try JSONCodec.encode(item) }
    }

    /// A page: a JSON array of items, or `{"results": [...], "count": N}` with a total count.
    package static func encodePage(_ result: QueryResult) throws(WireFormatError) -> [UInt8] {
        try codec("the page") { try JSONCodec.encode(result) }
    }

    // MARK: Reading

    /// Reads one item.
    package static func decodeItem(_ body: [UInt8]) throws(WireFormatError) -> Item {
        try requireBody(body)
        let item = try codec("the item") { try JSONCodec.decodeItem(body) }
        try checkSystemProperties(of: item)
        return item
    }

    /// Reads a page: a JSON array of items, or `{"results": [...], "count": N}`.
    package static func decodePage(_ body: [UInt8]) throws(WireFormatError) -> QueryResult {
        try requireBody(body)
        let result = try codec("the page") { try JSONCodec.decodeResult(body) }
        for item in result.items { try checkSystemProperties(of: item) }
        return result
    }

    /// Reads a JSON object of column values (a request body, which may lack `id`). Nested arrays
    /// and objects become ``Value/json(_:)``.
    package static func decodeObject(_ body: [UInt8]) throws(WireFormatError) -> [String: Value] {
        try requireBody(body)
        let itemError: any Error
        do {
            let item = try JSONCodec.decodeItem(body)
            var values = item.values
            values["id"] = .string(item.id)
            return values
        } catch {
            itemError = error
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            // The core's reader says what is wrong and where, as `import` does for the same text:
            // a fault of the JSON text, else what kept the text from being read as an item.
            let reason: any Error
            do {
                _ = try JSONCodec.decodeValue(body)
                reason = itemError
            } catch {
                reason = error
            }
            guard let reason = reason as? OfflineSyncError else {
                throw WireFormatError("the body is not valid JSON (\(body.count) bytes); it may have been truncated")
            }
            throw WireFormatError("the body is not valid JSON: \(reason.message)")
        }
        guard let object = root as? [String: Any] else {
            throw WireFormatError("the body is \(describe(root)), not a JSON object")
        }
        var values: [String: Value] = [:]
        for (key, raw) in object {
            values[key] = try value(raw)
        }
        return values
    }

    // MARK: Checks

    private static func requireBody(_ body: [UInt8]) throws(WireFormatError) {
        if body.isEmpty { throw WireFormatError("the body is empty; expected JSON") }
    }

    private static func checkSystemProperties(of item: Item) throws(WireFormatError) {
        for property in SystemProperty.allCases {
            let value = item[property.rawValue]
            guard !value.isNull else { continue }
            switch (property, value) {
            case (.createdAt, .date), (.updatedAt, .date), (.version, .string), (.deleted, .bool):
                continue
            case (.createdAt, .string(let text)), (.updatedAt, .string(let text)):
                throw WireFormatError(
                    "item '\(item.id)' has \"\(property.rawValue)\" '\(text)', which is not an ISO 8601 date (e.g. 2026-01-02T03:04:05.678Z)"
                )
            default:
                let expected =
                    property == .deleted ? "a boolean" : property == .version ? "a string" : "an ISO 8601 date string"
                throw WireFormatError("item '\(item.id)' has \"\(property.rawValue)\" \(value); it must be \(expected)")
            }
        }
    }

    /// Runs a codec call, turning its error into a ``WireFormatError`` that says what was read.
    private static func codec<Result>(_ what: @autoclosure () -> String, _ body: () throws -> Result) throws(WireFormatError) -> Result {
        do {
            return try body()
        } catch let error as OfflineSyncError {
            let truncated = error.code == .syntax || error.message.contains("end of the input")
            let hint = truncated ? " (the body may have been truncated or is not JSON)" : ""
            throw WireFormatError("\(what()): \(error.message)\(hint)")
        } catch {
            throw WireFormatError("\(what()): \(error)")
        }
    }

    private static func value(_ raw: Any) throws(WireFormatError) -> Value {
        switch raw {
        case is NSNull:
            return .null
        case let number as NSNumber:
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"), UInt8(ascii: "B"): return .bool(number.boolValue)
            case UInt8(ascii: "d"), UInt8(ascii: "f"): return .double(number.doubleValue)
            case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"):
                return Int64(exactly: number.uint64Value).map(Value.int) ?? .double(number.doubleValue)
            default: return .int(number.int64Value)
            }
        case let text as String:
            return .string(text)
        case is [Any], is [String: Any]:
            guard let data = try? JSONSerialization.data(withJSONObject: raw, options: [.withoutEscapingSlashes]) else {
                throw WireFormatError("a nested JSON value could not be re-encoded")
            }
            return .json(String(decoding: data, as: UTF8.self))
        default:
            throw WireFormatError("the body holds an unexpected JSON value \(raw)")
        }
    }

    private static func describe(_ raw: Any) -> String {
        switch raw {
        case is [Any]: return "an array"
        case is String: return "a string"
        case is NSNull: return "null"
        default: return "a scalar"
        }
    }
}
