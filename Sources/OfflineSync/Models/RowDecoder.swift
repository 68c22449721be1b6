/// Decodes a model straight from a row (``Item``): the key `id` reads ``Item/id``, every other key
/// its column; an absent column reads as its declared default (see
/// ``ModelSchemaOption/default(_:_:)``), or as `nil` when it has none.
///
/// Besides each column type's own Swift types, a `date` column reads as `String` (ISO 8601) or as
/// an integer (milliseconds since 1970), a `json` column as `String` (its text), an `integer`
/// column as `Double`, and an integral `double` as an integer.
struct RowDecoder: Decoder {
    let item: Item
    /// The values of columns without a value, by column.
    var defaults: [String: Value] = [:]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedDecoder<Key>(item: item, defaults: defaults))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Int].self,
            DecodingError.Context(
                codingPath: [], debugDescription: "a row is keyed by column; the model decodes an array"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Int.self,
            DecodingError.Context(
                codingPath: [], debugDescription: "a row is keyed by column; the model decodes a single value"))
    }

    /// The error of a column value that cannot be read as `type` (`expected` describes it).
    static func mismatch(
        _ type: Any.Type, _ key: any CodingKey, _ value: Value, expected: String, itemId: String
    ) -> DecodingError {
        if value.isNull {
            return .valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: [key],
                    debugDescription: "item '\(itemId)' has no value but the property is not optional (\(type))"))
        }
        return .typeMismatch(
            type,
            DecodingError.Context(
                codingPath: [key],
                debugDescription:
                    "item '\(itemId)' holds \(value.type?.rawValue ?? "null") \(value), which cannot be read as \(expected)"
            ))
    }

    /// A property of any `Decodable` type from its column's `value`: dates from dates or ISO 8601
    /// text, URLs from text, everything else (enums, nested values, other number types) through
    /// the value's JSON form.
    static func decode<T: Decodable>(_ type: T.Type, _ value: Value, key: any CodingKey, itemId: String) throws -> T {
        if type == Timestamp.self || DateBridge.isDateType(type) {
            let timestamp: Timestamp?
            switch value {
            case .date(let date): timestamp = date
            case .string(let text): timestamp = Timestamp(iso8601: text)
            default: throw mismatch(type, key, value, expected: "a date", itemId: itemId)
            }
            guard let timestamp else { throw mismatch(type, key, value, expected: "an ISO 8601 date", itemId: itemId) }
            if type == Timestamp.self { return unsafeBitCast(timestamp, to: T.self) }
            if let result = DateBridge.date(timestamp, as: type) { return result }
        }
        if URLBridge.isURLType(type) {
            guard case .string(let text) = value, let url: T = URLBridge.url(text, as: type) else {
                throw mismatch(type, key, value, expected: "a URL as text", itemId: itemId)
            }
            return url
        }
        let node: JSONNode
        do {
            node = try JSONNode(value)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [key], debugDescription: "item '\(itemId)' holds invalid JSON text",
                    underlyingError: error))
        }
        return try T(from: NodeDecoder(node: node, codingPath: [key]))
    }

    /// A message naming the column and what went wrong, for a decoding or encoding error.
    static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            guard let first = codingPath.first else { return "the model" }
            var text = "column '\(first.stringValue)'"
            let rest = codingPath.dropFirst().map { $0.intValue != nil ? $0.stringValue : "." + $0.stringValue }
            if !rest.isEmpty { text += " at \(rest.joined())" }
            return text
        }
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): no value (\(context.debugDescription))"
        case EncodingError.invalidValue(_, let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case let error as OfflineSyncError:
            return error.message
        default:
            return "\(error)"
        }
    }
}

private struct RowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let item: Item
    let defaults: [String: Value]
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        ([Key(stringValue: "id")] + item.values.keys.map { Key(stringValue: $0) }).compactMap { $0 }
    }

    func contains(_ key: Key) -> Bool {
        !value(key).isNull
    }

    /// The column's value by position on the item's layout (``Item/values`` would build a
    /// dictionary of the whole row for every property decoded).
    private func value(_ key: Key) -> Value {
        let name = key.stringValue
        if name == "id" { return .string(item.id) }
        let value = item[name]
        if value.isNull, !defaults.isEmpty, let fallback = defaults[name] { return fallback }
        return value
    }

    private func mismatch(_ type: Any.Type, _ key: Key, _ value: Value, expected: String) -> DecodingError {
        RowDecoder.mismatch(type, key, value, expected: expected, itemId: item.id)
    }

    func decodeNil(forKey key: Key) throws -> Bool { value(key).isNull }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let value = value(key)
        guard case .bool(let flag) = value else { throw mismatch(type, key, value, expected: "a Bool") }
        return flag
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let value = value(key)
        switch value {
        case .string(let text), .json(let text): return text
        case .date(let date): return date.iso8601
        default: throw mismatch(type, key, value, expected: "a String")
        }
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let value = value(key)
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(type, key, value, expected: "a Double")
        }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        let value = value(key)
        let exact: T?
        switch value {
        case .int(let number): exact = T(exactly: number)
        case .double(let number): exact = number.isFinite ? T(exactly: number) : nil
        case .date(let date): exact = T(exactly: date.millisecondsSince1970)
        default: throw mismatch(type, key, value, expected: "an integer")
        }
        guard let exact else { throw mismatch(type, key, value, expected: "\(T.self)") }
        return exact
    }

    // Optional properties: one lookup of the column (the protocol's default implementation
    // looks it up three times: `contains`, `decodeNil`, then `decode`).
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        value(key).isNull ? nil : try decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        value(key).isNull ? nil : try decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        value(key).isNull ? nil : try decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        value(key).isNull ? nil : try decode(type, forKey: key)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let value = value(key)
        return value.isNull ? nil : try decode(type, value, forKey: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decode(type, value(key), forKey: key)
    }

    /// A generic property's value from its column's `value`.
    private func decode<T: Decodable>(_ type: T.Type, _ value: Value, forKey key: Key) throws -> T {
        try RowDecoder.decode(type, value, key: key, itemId: item.id)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try NodeDecoder(node: JSONNode(value(key)), codingPath: [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeDecoder(node: JSONNode(value(key)), codingPath: [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        NodeDecoder(node: try JSONNode(item["super"]), codingPath: [])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoder(node: try JSONNode(value(key)), codingPath: [key])
    }
}
