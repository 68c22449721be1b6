/// A parsed JSON value: what a nested `Codable` value of a model (an array, a struct) is encoded to
/// and decoded from before it is stored as the compact text of a ``Value/json(_:)`` column.
///
/// Objects keep their members in a dictionary and are written in ascending member order, so the
/// same value always gives the same text.
indirect enum JSONNode: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    /// The node of a primitive column value (`json` text is parsed).
    init(_ value: Value) throws {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .date(let date): self = .string(date.iso8601)
        case .json(let text): self = try JSONNode.parse(text)
        }
    }

    /// The column value of this node: primitives as themselves, arrays and objects as `json` text.
    func columnValue() throws -> Value {
        switch self {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .int(let number): return .int(number)
        case .double(let number): return .double(number)
        case .string(let text): return .string(text)
        case .array, .object:
            var bytes: [UInt8] = []
            try write(to: &bytes)
            return .json(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// A short name of the node's kind, for error messages.
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Parses JSON text (any JSON value) with the core's ``JSONReader``.
    static func parse(_ text: String) throws -> JSONNode {
        try JSONCodec.withContiguousBytes(text.utf8) { buffer in
            var reader = JSONReader(buffer)
            let node = try read(&reader, depth: 0)
            try reader.finish()
            return node
        }
    }

    private static func read(_ reader: inout JSONReader, depth: Int) throws -> JSONNode {
        guard depth < JSONReader.maximumDepth else {
            throw reader.syntaxError("nesting deeper than \(JSONReader.maximumDepth) levels", at: reader.index)
        }
        switch reader.peek() {
        case UInt8(ascii: "{"):
            var members: [String: JSONNode] = [:]
            try reader.readObject { reader, key, offset in
                guard members[key] == nil else {
                    throw reader.shapeError("member '\(key)' appears twice", at: offset)
                }
                members[key] = try read(&reader, depth: depth + 1)
            }
            return .object(members)
        case UInt8(ascii: "["):
            var elements: [JSONNode] = []
            try reader.readArray { reader in elements.append(try read(&reader, depth: depth + 1)) }
            return .array(elements)
        default:
            switch try reader.readValue() {
            case .null: return .null
            case .bool(let flag): return .bool(flag)
            case .int(let number): return .int(number)
            case .double(let number): return .double(number)
            case .string(let text): return .string(text)
            case .date(let date): return .string(date.iso8601)
            case .json(let text): return try parse(text)
            }
        }
    }

    /// Appends the compact text of this node.
    func write(to bytes: inout [UInt8]) throws {
        switch self {
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                try element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                try members[key]!.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .int(let number): JSONWriter.appendInteger(number, to: &bytes)
        case .double(let number):
            var writer = JSONWriter()
            try writer.write(.double(number), context: "a nested value")
            bytes.append(contentsOf: writer.bytes)
        case .string(let text): JSONWriter.appendString(text, to: &bytes)
        }
    }
}
