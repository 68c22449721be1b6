/// Encodes a nested `Encodable` value of a model (an array, a struct, a dictionary) to a
/// ``JSONNode``; the row encoder stores it as ``Value/json(_:)`` text, or as a primitive column
/// value when the value encodes as one (an enum with a raw value, a single-value wrapper).
///
/// Dates (`Date`, ``Timestamp``) nested in JSON are written as ISO 8601 text, as the table
/// protocol writes dates.
struct NodeEncoder: Encoder {
    let box: NodeBox
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if box.members == nil { box.members = [:] }
        return KeyedEncodingContainer(NodeKeyedEncoder<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if box.elements == nil { box.elements = [] }
        return NodeUnkeyedEncoder(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        NodeSingleEncoder(box: box, codingPath: codingPath)
    }

    /// The node of one value: dates as ISO 8601 text, everything else through its `encode(to:)`.
    static func node<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSONNode {
        if let timestamp = value as? Timestamp { return .string(timestamp.iso8601) }
        if DateBridge.isDate(value) {
            guard let timestamp = DateBridge.timestamp(of: value) else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: codingPath, debugDescription: "the date is out of range"))
            }
            return .string(timestamp.iso8601)
        }
        let box = NodeBox()
        try value.encode(to: NodeEncoder(box: box, codingPath: codingPath))
        return box.node()
    }

    static func integer<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> Int64 {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "\(value) does not fit a 64-bit signed integer"))
        }
        return exact
    }
}

/// What one encoder or container wrote: a single value, object members or array elements.
final class NodeBox {
    var single: JSONNode?
    var members: [String: NodeBox]?
    var elements: [NodeBox]?

    init(_ single: JSONNode? = nil) {
        self.single = single
    }

    /// The node written; an encoder that wrote nothing gives an empty object, as Foundation's does.
    func node() -> JSONNode {
        if let members { return .object(members.mapValues { $0.node() }) }
        if let elements { return .array(elements.map { $0.node() }) }
        return single ?? .object([:])
    }
}

private struct NodeKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: NodeBox
    let codingPath: [any CodingKey]

    private func set(_ node: JSONNode, _ key: Key) { box.members![key.stringValue] = NodeBox(node) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        set(.int(try NodeEncoder.integer(value, codingPath: codingPath + [key])), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(.int(try NodeEncoder.integer(value, codingPath: codingPath + [key])), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try NodeEncoder.node(value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = NodeBox()
        box.members![key.stringValue] = child
        return NodeEncoder(box: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = NodeBox()
        box.members![key.stringValue] = child
        return NodeEncoder(box: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = NodeBox()
        box.members!["super"] = child
        return NodeEncoder(box: child, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = NodeBox()
        box.members![key.stringValue] = child
        return NodeEncoder(box: child, codingPath: codingPath + [key])
    }
}

private struct NodeUnkeyedEncoder: UnkeyedEncodingContainer {
    let box: NodeBox
    let codingPath: [any CodingKey]
    var count: Int { box.elements!.count }

    private func append(_ node: JSONNode) { box.elements!.append(NodeBox(node)) }
    private var nextPath: [any CodingKey] { codingPath + [ArrayElementKey(count)] }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(.int(try NodeEncoder.integer(value, codingPath: nextPath))) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(.int(try NodeEncoder.integer(value, codingPath: nextPath))) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try NodeEncoder.node(value, codingPath: nextPath)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = NodeBox()
        let path = nextPath
        box.elements!.append(child)
        return NodeEncoder(box: child, codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = NodeBox()
        let path = nextPath
        box.elements!.append(child)
        return NodeEncoder(box: child, codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = NodeBox()
        let path = nextPath
        box.elements!.append(child)
        return NodeEncoder(box: child, codingPath: path)
    }
}

private struct NodeSingleEncoder: SingleValueEncodingContainer {
    let box: NodeBox
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.single = .null }
    mutating func encode(_ value: Bool) throws { box.single = .bool(value) }
    mutating func encode(_ value: String) throws { box.single = .string(value) }
    mutating func encode(_ value: Double) throws { box.single = .double(value) }
    mutating func encode(_ value: Float) throws { box.single = .double(Double(value)) }
    mutating func encode(_ value: Int) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { box.single = .int(value) }
    mutating func encode(_ value: UInt) throws {
        box.single = .int(try NodeEncoder.integer(value, codingPath: codingPath))
    }
    mutating func encode(_ value: UInt8) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: UInt16) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: UInt32) throws { box.single = .int(Int64(value)) }
    mutating func encode(_ value: UInt64) throws {
        box.single = .int(try NodeEncoder.integer(value, codingPath: codingPath))
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let node = try NodeEncoder.node(value, codingPath: codingPath)
        box.single = node
    }
}

/// The coding key of an array element.
struct ArrayElementKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "[\(intValue ?? 0)]" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}
