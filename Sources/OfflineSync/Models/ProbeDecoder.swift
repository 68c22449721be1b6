/// Builds probe instances of a model by decoding made-up values, to learn its columns without a
/// second declaration: which keys it decodes, the column type of each, and (by comparing the
/// values found behind a key path with the values each column was given) which column a key path
/// reads.
///
/// Every top-level key gets an ordinal `n` in the order the model decodes it. In round `r` a key is
/// given: a string `"probe n"`, the integer or double `n + 1`, the date `n + 1` ms after 1970, and
/// for booleans and `CaseIterable` enums bit `r` of `n + 1` (`false`/`true`, first/second case).
/// Over ⌈log₂(keys + 1)⌉ rounds every column's sequence of values is different from every other
/// column's, booleans included. Nested values (arrays, structs) are decoded empty: their optional
/// members `nil`, arrays and dictionaries empty, numbers 0, strings empty.
final class ProbeState {
    /// The round: which bit of a key's ordinal booleans and enum cases follow.
    let round: Int
    /// Keys answered `nil` because decoding a value for them failed in an earlier attempt.
    let nilKeys: Set<String>
    private(set) var ordinals: [String: Int] = [:]
    /// The column type of each top-level key decoded with a value.
    var types: [String: ColumnType] = [:]
    /// The key being decoded, to name it when decoding fails.
    var currentKey: String?

    init(round: Int, nilKeys: Set<String>) {
        self.round = round
        self.nilKeys = nilKeys
    }

    func ordinal(_ key: String) -> Int {
        if let ordinal = ordinals[key] { return ordinal }
        let ordinal = ordinals.count
        ordinals[key] = ordinal
        return ordinal
    }

    func bit(_ key: String) -> Bool { ((ordinal(key) + 1) >> round) & 1 == 1 }
}

struct ProbeDecoder: Decoder {
    let state: ProbeState
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedDecoder<Key>(state: state))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Int].self, DecodingError.Context(codingPath: [], debugDescription: "a model must decode a keyed container")
        )
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Int.self, DecodingError.Context(codingPath: [], debugDescription: "a model must decode a keyed container"))
    }

    /// The first case, or the second when `second` is set and there is one, of a `CaseIterable` type.
    static func someCase<T>(of type: T.Type, second: Bool) -> T? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        func pick<C: CaseIterable>(_ type: C.Type) -> Any? {
            let cases = Array(type.allCases)
            guard !cases.isEmpty else { return nil }
            return cases[second && cases.count > 1 ? 1 : 0]
        }
        return pick(iterable) as? T
    }
}

private struct ProbeKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: ProbeState
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool {
        _ = state.ordinal(key.stringValue)
        return !state.nilKeys.contains(key.stringValue)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        _ = state.ordinal(key.stringValue)
        return state.nilKeys.contains(key.stringValue)
    }

    private func record(_ key: Key, _ type: ColumnType) -> Int {
        state.currentKey = key.stringValue
        state.types[key.stringValue] = type
        return state.ordinal(key.stringValue) + 1
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        _ = record(key, .bool)
        return state.bit(key.stringValue)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { "probe \(record(key, .string) - 1)" }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { Double(record(key, .double)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(record(key, .double)) }
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
        T(truncatingIfNeeded: record(key, .integer))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        state.currentKey = key.stringValue
        let ordinal = state.ordinal(key.stringValue)
        if type == Timestamp.self || DateBridge.isDateType(type) {
            state.types[key.stringValue] = .date
            let timestamp = Timestamp(millisecondsSince1970: Int64(ordinal + 1))
            if let result = timestamp as? T ?? DateBridge.date(timestamp, as: type) { return result }
        }
        if let value = FoundationProbe.sample(of: type, ordinal: ordinal, second: state.bit(key.stringValue)) {
            state.types[key.stringValue] = .string
            return value
        }
        if let value = ProbeDecoder.someCase(of: type, second: state.bit(key.stringValue)) {
            if let encodable = value as? any Encodable {
                state.types[key.stringValue] = try RowEncoder.columnValue(encodable, codingPath: [key]).type ?? .json
            }
            return value
        }
        let shape = ProbeShape()
        let value = try T(from: NestedProbeDecoder(shape: shape, codingPath: [key]))
        state.types[key.stringValue] = shape.type ?? .json
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        _ = record(key, .json)
        return try NestedProbeDecoder(shape: ProbeShape(), codingPath: [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        _ = record(key, .json)
        return try NestedProbeDecoder(shape: ProbeShape(), codingPath: [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { NestedProbeDecoder(shape: ProbeShape(), codingPath: []) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _ = record(key, .json)
        return NestedProbeDecoder(shape: ProbeShape(), codingPath: [key])
    }
}

/// What a nested probe value asked for first: a container (stored as `json`) or a single value of
/// a primitive type (stored as that type).
final class ProbeShape {
    var type: ColumnType?

    func note(_ type: ColumnType) {
        if self.type == nil { self.type = type }
    }
}

/// Decodes nested values empty (see ``ProbeState``).
private struct NestedProbeDecoder: Decoder {
    let shape: ProbeShape
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        shape.note(.json)
        return KeyedDecodingContainer(NestedProbeKeyed<Key>(codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        shape.note(.json)
        return EmptyProbeUnkeyed(codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        NestedProbeSingle(shape: shape, codingPath: codingPath)
    }

    static func empty<T: Decodable>(_ type: T.Type, codingPath: [any CodingKey]) throws -> T {
        if let value = ProbeDecoder.someCase(of: type, second: false) { return value }
        if let value = FoundationProbe.sample(of: type, ordinal: 0, second: false) { return value }
        if type == Timestamp.self || DateBridge.isDateType(type),
            let value = Timestamp.epoch as? T ?? DateBridge.date(Timestamp.epoch, as: type)
        {
            return value
        }
        return try T(from: NestedProbeDecoder(shape: ProbeShape(), codingPath: codingPath))
    }
}

private struct NestedProbeKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let codingPath: [any CodingKey]
    var allKeys: [Key] { [] }
    func contains(_ key: Key) -> Bool { false }
    func decodeNil(forKey key: Key) throws -> Bool { true }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { false }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { "" }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { 0 }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { 0 }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { 0 }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { 0 }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { 0 }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { 0 }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { 0 }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { 0 }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { 0 }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { 0 }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { 0 }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { 0 }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try NestedProbeDecoder.empty(type, codingPath: codingPath + [key])
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        KeyedDecodingContainer(NestedProbeKeyed<NestedKey>(codingPath: codingPath + [key]))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        EmptyProbeUnkeyed(codingPath: codingPath + [key])
    }
    func superDecoder() throws -> any Decoder { NestedProbeDecoder(shape: ProbeShape(), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        NestedProbeDecoder(shape: ProbeShape(), codingPath: codingPath + [key])
    }
}

private struct EmptyProbeUnkeyed: UnkeyedDecodingContainer {
    let codingPath: [any CodingKey]
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end(_ type: Any.Type) -> DecodingError {
        .valueNotFound(type, DecodingError.Context(codingPath: codingPath, debugDescription: "probe arrays are empty"))
    }

    mutating func decodeNil() throws -> Bool { true }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end(type) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    { throw end(type) }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end([Int].self) }
    mutating func superDecoder() throws -> any Decoder { throw end(Any.self) }
}

private struct NestedProbeSingle: SingleValueDecodingContainer {
    let shape: ProbeShape
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool {
        shape.note(.bool)
        return false
    }
    func decode(_ type: String.Type) throws -> String {
        shape.note(.string)
        return ""
    }
    func decode(_ type: Double.Type) throws -> Double {
        shape.note(.double)
        return 0
    }
    func decode(_ type: Float.Type) throws -> Float {
        shape.note(.double)
        return 0
    }
    func decode(_ type: Int.Type) throws -> Int { integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { integer() }
    func decode(_ type: UInt.Type) throws -> UInt { integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { integer() }
    private func integer<T: FixedWidthInteger>() -> T {
        shape.note(.integer)
        return 0
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if type == Timestamp.self || DateBridge.isDateType(type) { shape.note(.date) }
        let value = try NestedProbeDecoder.empty(type, codingPath: codingPath)
        return value
    }
}
