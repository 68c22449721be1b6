/// Decodes a nested `Decodable` value of a model from a ``JSONNode`` (the parsed text of a
/// ``Value/json(_:)`` column, or a primitive column value for enums with raw values and
/// single-value wrappers). Dates are read from ISO 8601 text.
struct NodeDecoder: Decoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node else {
            throw NodeDecoder.mismatch([String: Int].self, "an object", node, codingPath)
        }
        return KeyedDecodingContainer(NodeKeyedDecoder<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = node else {
            throw NodeDecoder.mismatch([Int].self, "an array", node, codingPath)
        }
        return NodeUnkeyedDecoder(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        NodeSingleDecoder(node: node, codingPath: codingPath)
    }

    static func mismatch(_ type: Any.Type, _ expected: String, _ node: JSONNode, _ path: [any CodingKey])
        -> DecodingError
    {
        if case .null = node {
            return .valueNotFound(
                type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(
            type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found \(node.kind)"))
    }

    static func bool(_ node: JSONNode, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = node else { throw mismatch(Bool.self, "a boolean", node, path) }
        return flag
    }

    static func string(_ node: JSONNode, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = node else { throw mismatch(String.self, "a string", node, path) }
        return text
    }

    static func double(_ node: JSONNode, _ path: [any CodingKey]) throws -> Double {
        switch node {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(Double.self, "a number", node, path)
        }
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ node: JSONNode, _ path: [any CodingKey]) throws -> T {
        let exact: T?
        switch node {
        case .int(let number): exact = T(exactly: number)
        case .double(let number): exact = number.isFinite ? T(exactly: number) : nil
        default: throw mismatch(type, "an integer", node, path)
        }
        guard let exact else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path, debugDescription: "\(node) does not fit \(T.self)"))
        }
        return exact
    }

    /// A value of any decodable type: dates from ISO 8601 text, the rest through `init(from:)`.
    static func value<T: Decodable>(_ type: T.Type, _ node: JSONNode, _ path: [any CodingKey]) throws -> T {
        if type == Timestamp.self || DateBridge.isDateType(type) {
            let text = try string(node, path)
            guard let timestamp = Timestamp(iso8601: text) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(codingPath: path, debugDescription: "'\(text)' is not an ISO 8601 date"))
            }
            if let result = timestamp as? T ?? DateBridge.date(timestamp, as: type) { return result }
        }
        return try T(from: NodeDecoder(node: node, codingPath: path))
    }
}

private struct NodeKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONNode]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func node(_ key: Key) throws -> JSONNode {
        guard let node = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: "no member '\(key.stringValue)'"))
        }
        return node
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let node = members[key.stringValue] else { return true }
        if case .null = node { return true }
        return false
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try NodeDecoder.bool(node(key), codingPath + [key])
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try NodeDecoder.string(node(key), codingPath + [key])
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try NodeDecoder.double(node(key), codingPath + [key])
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        Float(try NodeDecoder.double(node(key), codingPath + [key]))
    }
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
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try NodeDecoder.value(type, node(key), codingPath + [key])
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try NodeDecoder.integer(type, node(key), codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try NodeDecoder(node: node(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeDecoder(node: node(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        NodeDecoder(node: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoder(node: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct NodeUnkeyedDecoder: UnkeyedDecodingContainer {
    let elements: [JSONNode]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONNode], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> (JSONNode, [any CodingKey]) {
        let path = codingPath + [ArrayElementKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: path, debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (node, path) = try next(type)
        return try NodeDecoder.bool(node, path)
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let (node, path) = try next(type)
        return try NodeDecoder.string(node, path)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let (node, path) = try next(type)
        return try NodeDecoder.double(node, path)
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let (node, path) = try next(type)
        return Float(try NodeDecoder.double(node, path))
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (node, path) = try next(type)
        return try NodeDecoder.value(type, node, path)
    }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let (node, path) = try next(type)
        return try NodeDecoder.integer(type, node, path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (node, path) = try next([String: Int].self)
        return try NodeDecoder(node: node, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (node, path) = try next([Int].self)
        return try NodeDecoder(node: node, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (node, path) = try next(Any.self)
        return NodeDecoder(node: node, codingPath: path)
    }
}

private struct NodeSingleDecoder: SingleValueDecodingContainer {
    let node: JSONNode
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = node { return true }
        return false
    }
    func decode(_ type: Bool.Type) throws -> Bool { try NodeDecoder.bool(node, codingPath) }
    func decode(_ type: String.Type) throws -> String { try NodeDecoder.string(node, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try NodeDecoder.double(node, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try NodeDecoder.double(node, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try NodeDecoder.integer(type, node, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try NodeDecoder.integer(type, node, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try NodeDecoder.value(type, node, codingPath) }
}
