/// Encodes a model straight into a row (``Item``): the model's `id` becomes ``Item/id``, every other
/// key a column. No JSON text is produced except for nested values, which become
/// ``Value/json(_:)`` columns.
///
/// Column values: `String`, `Bool`, the integer types (as `Int64`; an unsigned value above
/// `Int64.max` is an error), `Double` and `Float`, ``Timestamp`` and `Date` (as
/// ``Value/date(_:)``), enums with raw values (their raw value), `nil` (no value); anything else
/// that encodes as an array or object is stored as its compact JSON text.
final class RowEncoder: Encoder {
    // The per-model state below is written once per property. It never leaves the encoding of one
    // model on one thread, so it goes without dynamic exclusivity checks (two calls per write).
    @exclusivity(unchecked) var id: String?
    /// The row's columns: those of the target layout by position, then any other key the model
    /// encodes (appended to the layout at the end).
    let layout: RowLayout
    @exclusivity(unchecked) var slots: [Value?]
    /// Where the next key is looked for first: a model encodes its keys in the order it declares
    /// them, which is usually the table's column order, so most keys are found at the position
    /// after the previous one by a single comparison.
    @exclusivity(unchecked) private var nextPosition = 0
    var extra: [(String, Value)] = []
    /// Keys whose values are never written (the model's system properties, which an insert or
    /// update never writes): left out of the row, and their generic values not even converted.
    let skipped: [String]
    /// Which positions of ``layout`` hold a ``skipped`` key.
    private let skippedPositions: [Bool]
    /// Containers handed out for nested values written through `nestedContainer`, resolved at the end.
    var nested: [(String, NodeBox)] = []
    /// Set when the model does not encode as a keyed container.
    var shapeProblem: String?
    let codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// An encoder of rows laid out on `layout`, reusable for many models (see ``item(of:)``).
    init(layout: RowLayout, skipping skipped: [String]) {
        self.layout = layout
        self.skipped = skipped
        skippedPositions = layout.names.map(skipped.contains)
        slots = []
    }

    /// The position of column `name` in ``layout``: tried first at ``nextPosition``, then by a
    /// length-then-bytes search of the layout's names (no hashing).
    @inline(__always)
    private func position(of name: String) -> Int? {
        let names = layout.names
        let guess = nextPosition
        if guess < names.count, names[guess] == name { return guess }
        return layout.position(of: name)
    }

    /// `true` when the model's values under `name` are left out of the row. A key that is not
    /// skipped is then stored by ``set(_:column:)``, which finds it at the same position.
    func skips(_ name: String) -> Bool {
        if let position = position(of: name) {
            if skippedPositions[position] {
                nextPosition = position + 1
                return true
            }
            nextPosition = position
            return false
        }
        return skipped.contains(name)
    }

    /// Stores the value of column `name`: in its slot when the layout has it, otherwise among the
    /// extra columns. A skipped key's value is dropped.
    func set(_ value: Value, column name: String) {
        if let position = position(of: name) {
            nextPosition = position + 1
            if !skippedPositions[position] { slots[position] = value }
        } else if skipped.contains(name) {
            return
        } else if let index = extra.firstIndex(where: { $0.0 == name }) {
            extra[index].1 = value
        } else {
            extra.append((name, value))
        }
    }

    /// Encodes `model` and returns its row, laid out on `layout` (the table's own layout, so the
    /// store writes it by position; keys outside it are appended). Generic values of the
    /// `skipped` keys are left out.
    static func item<Model: Encodable>(of model: Model, layout: RowLayout, skipping skipped: [String] = []) throws
        -> Item
    {
        try RowEncoder(layout: layout, skipping: skipped).item(of: model)
    }

    /// Encodes `model` and returns its row (see ``item(of:layout:skipping:)``). The encoder starts
    /// afresh for each model, so one encoder serves a whole batch (an allocation less per row).
    func item<Model: Encodable>(of model: Model) throws -> Item {
        slots = []
        return try encodeIntoSlots(model)
    }

    /// Rewrites `row` into the row of `model` (see ``item(of:)``), reusing the storage of its
    /// values when it is laid out on ``layout`` and nothing else holds them: a batch encoded a
    /// chunk at a time allocates no row per model.
    func refill<Model: Encodable>(_ row: inout Item, of model: Model) throws {
        // Moved, not copied, into `slots`: a second reference would make the first write copy them.
        slots = row.slotCount == layout.names.count && row.layoutIs(layout) ? row.takeSlots() : []
        row = try encodeIntoSlots(model)
    }

    /// ``item(of:)`` into ``slots``, emptied first (their storage kept when they have a slot per
    /// column of ``layout``).
    private func encodeIntoSlots<Model: Encodable>(_ model: Model) throws -> Item {
        id = nil
        nextPosition = 0
        if slots.count == layout.names.count {
            slots.withUnsafeMutableBufferPointer { slots in
                for index in slots.indices { slots[index] = nil }
            }
        } else {
            slots = .noValues(count: layout.names.count)
        }
        extra.removeAll(keepingCapacity: true)
        nested.removeAll(keepingCapacity: true)
        shapeProblem = nil
        try model.encode(to: self)
        if let problem = shapeProblem {
            throw OfflineSyncError(
                .invalidValue,
                "\(Model.self) encodes as \(problem); a model must encode as a keyed container (a struct or class with properties)"
            )
        }
        for (key, box) in nested {
            set(try box.node().columnValue(), column: key)
        }
        guard let id else {
            throw OfflineSyncError(
                .invalidValue, "\(Model.self) encoded no string 'id'; a model must encode its id under the key 'id'")
        }
        var item = Item(id: id, layout: layout, values: slots)
        slots = []
        for (name, value) in extra { item[name] = value }
        return item
    }

    /// The column value of one encodable value.
    static func columnValue<T: Encodable>(_ value: T, codingPath: @autoclosure () -> [any CodingKey]) throws -> Value {
        // The two date types are told by comparing static types, which costs less than casting
        // the value (a dynamic cast, and a box for `Any`, per encoded property).
        if T.self == Timestamp.self { return .date(unsafeBitCast(value, to: Timestamp.self)) }
        if DateBridge.isDateType(T.self) {
            guard let timestamp = DateBridge.timestamp(ofDate: value) else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: codingPath(), debugDescription: "the date is out of range")
                )
            }
            return .date(timestamp)
        }
        if let timestamp = value as? Timestamp { return .date(timestamp) }
        if let text = URLBridge.text(of: value) { return .string(text) }
        if DateBridge.isDate(value) {
            guard let timestamp = DateBridge.timestamp(of: value) else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: codingPath(), debugDescription: "the date is out of range")
                )
            }
            return .date(timestamp)
        }
        return try NodeEncoder.node(value, codingPath: codingPath()).columnValue()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedEncoder<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        shapeProblem = "an array"
        return NodeEncoder(box: NodeBox(), codingPath: []).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        shapeProblem = "a single value"
        return NodeEncoder(box: NodeBox(), codingPath: []).singleValueContainer()
    }
}

private struct RowKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    private func set(_ value: Value, _ key: Key) {
        let name = key.stringValue
        if name == "id" {
            guard case .string(let text) = value else {
                encoder.shapeProblem = "an object whose 'id' is \(value.type?.rawValue ?? "null"), not a string,"
                return
            }
            encoder.id = text
        } else {
            encoder.set(value, column: name)
        }
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws {
        let name = key.stringValue
        if name == "id" {
            encoder.id = value
        } else {
            encoder.set(.string(value), column: name)
        }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        set(.int(try NodeEncoder.integer(value, codingPath: [key])), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(.int(try NodeEncoder.integer(value, codingPath: [key])), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // A system property is never written (see `ModelLayout.item(from:table:layout:)`): skip
        // converting it.
        if encoder.skips(key.stringValue) { return }
        set(try RowEncoder.columnValue(value, codingPath: [key]), key)
    }

    // `encodeIfPresent` written out: the protocol's default implementations are reached through
    // the container box and generic dispatch, which cost more than the `nil` check itself (most
    // of a model's optional properties, its system properties, are `nil` on insert).
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { set(.bool(value), key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { set(.double(value), key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { set(.int(Int64(value)), key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { set(.int(value), key) }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        // The key first: unwrapping a generic optional looks its type up at run time, and the
        // skipped keys (the system properties, `Date?` mostly) need no unwrapping at all.
        if encoder.skips(key.stringValue) { return }
        if let value { set(try RowEncoder.columnValue(value, codingPath: [key]), key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        NodeEncoder(box: box(for: key.stringValue), codingPath: [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(box: box(for: key.stringValue), codingPath: [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(box: box(for: "super"), codingPath: [])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(box: box(for: key.stringValue), codingPath: [key])
    }

    private func box(for name: String) -> NodeBox {
        let box = NodeBox()
        encoder.nested.append((name, box))
        return box
    }
}
