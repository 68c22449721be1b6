/// A ``SyncModel`` that writes its own row, property by property, instead of going through its
/// `Encodable` conformance: typed inserts and updates then cost about what inserting prebuilt
/// ``Item``s does (`Codable` encoding was about half of a typed batched insert on LMDB).
///
/// ``ModelTable`` builds the rows of an insert or update from ``writeRow(to:)`` when the model
/// conforms, and from `encode(to:)` otherwise (reads: see ``RowReadable``). The two
/// must give the same row: the first time a model type is used, its probe values (see
/// <doc:TypedModels>) are written both ways and compared, and any difference (a value under the
/// wrong key, a key `encode(to:)` does not write, a missing value) throws
/// ``OfflineSyncError/Code-swift.struct/invalidSchema`` naming the key, so a conformance that does
/// not match the model's `Codable` shape is never used to write a row.
///
/// The conformance lists the coding keys (`id` included; a renamed property under its
/// `CodingKeys` name) and writes one value per key, in the same order, every property as it is:
///
/// ```swift
/// struct TodoItem: RowWritable {
///     var id: String
///     var text: String
///     var complete: Bool
///     var due: Date?
///     var version: String?
///
///     static let rowKeys = ["id", "text", "complete", "due", "version"]
///
///     func writeRow(to row: inout RowWriter) throws {
///         try row.write(id)
///         try row.write(text)
///         try row.write(complete)
///         try row.write(due)
///         try row.write(version)   // a system property: dropped, as through Codable
///     }
/// }
/// ```
public protocol RowWritable: SyncModel {
    /// The coding keys ``writeRow(to:)`` writes (`id` included), in the order it writes them.
    static var rowKeys: [String] { get }

    /// Writes one value per key of ``rowKeys``, in that order, with ``RowWriter``'s `write`
    /// methods (an optional `nil` writes no value, as `encodeIfPresent` would).
    func writeRow(to row: inout RowWriter) throws
}

/// Where ``RowWritable/writeRow(to:)`` writes a model's values: the slots of one row laid out on
/// a table's ``RowLayout``, filled in the order of the model's ``RowWritable/rowKeys`` without
/// looking a column name up (the key → slot table is computed once per table).
public struct RowWriter {
    /// The slot of each key of ``RowWritable/rowKeys``: a position of the layout, ``idTarget``
    /// or ``skippedTarget``.
    @usableFromInline let targets: [Int]
    /// The row's values by layout position.
    @usableFromInline var slots: [Value?]
    /// The position in ``targets`` of the next value written.
    @usableFromInline var next = 0
    /// The value written under `id`.
    @usableFromInline var id: String?

    /// The target of the key `id`.
    @usableFromInline static let idTarget = -1
    /// The target of a key whose value is never written (a system property).
    @usableFromInline static let skippedTarget = -2

    init(targets: [Int], width: Int) {
        self.targets = targets
        slots = .noValues(count: width)
    }

    /// A writer filling `slots`, which it empties first (keeping their storage).
    init(targets: [Int], reusing slots: [Value?]) {
        self.targets = targets
        self.slots = slots
        for position in self.slots.indices where self.slots[position] != nil { self.slots[position] = nil }
    }

    /// The target of the next key, advancing past it.
    @inlinable
    mutating func nextTarget() -> Int {
        // A value beyond the keys is dropped here and reported by `item(layout:model:keyCount:)`.
        guard next < targets.count else {
            next += 1
            return RowWriter.skippedTarget
        }
        let target = targets[next]
        next += 1
        return target
    }

    @inlinable
    mutating func store(_ value: Value) {
        let target = nextTarget()
        if target >= 0 { slots[target] = value }
    }

    /// Writes a string (the row's id under the key `id`).
    @inlinable
    public mutating func write(_ value: String) throws {
        let target = nextTarget()
        if target >= 0 {
            slots[target] = .string(value)
        } else if target == RowWriter.idTarget {
            id = value
        }
    }

    /// Writes an optional string; `nil` writes no value.
    @inlinable
    public mutating func write(_ value: String?) throws {
        if let value { try write(value) } else { next += 1 }
    }

    /// Writes a Boolean.
    @inlinable
    public mutating func write(_ value: Bool) throws { store(.bool(value)) }

    /// Writes an optional Boolean; `nil` writes no value.
    @inlinable
    public mutating func write(_ value: Bool?) throws {
        if let value { store(.bool(value)) } else { next += 1 }
    }

    /// Writes an integer.
    @inlinable
    public mutating func write(_ value: Int) throws { store(.int(Int64(value))) }

    /// Writes an optional integer; `nil` writes no value.
    @inlinable
    public mutating func write(_ value: Int?) throws {
        if let value { store(.int(Int64(value))) } else { next += 1 }
    }

    /// Writes a 64-bit integer.
    @inlinable
    public mutating func write(_ value: Int64) throws { store(.int(value)) }

    /// Writes an optional 64-bit integer; `nil` writes no value.
    @inlinable
    public mutating func write(_ value: Int64?) throws {
        if let value { store(.int(value)) } else { next += 1 }
    }

    /// Writes a 32-bit integer.
    @inlinable
    public mutating func write(_ value: Int32) throws { store(.int(Int64(value))) }

    /// Writes a double.
    @inlinable
    public mutating func write(_ value: Double) throws { store(.double(value)) }

    /// Writes an optional double; `nil` writes no value.
    @inlinable
    public mutating func write(_ value: Double?) throws {
        if let value { store(.double(value)) } else { next += 1 }
    }

    /// Writes any other encodable value, converted as `Encodable` would store it (dates as
    /// dates, enums as their raw values, nested values as JSON text).
    ///
    /// Inlinable, so that it is specialized for the model's property types where the model's
    /// conformance is compiled (unspecialized, each optional costs a metadata lookup).
    @inlinable
    public mutating func write<T: Encodable>(_ value: T) throws {
        let target = nextTarget()
        guard target >= 0 else {
            if target == RowWriter.idTarget { throw RowWriter.idIsNotAString(T.self) }
            return
        }
        slots[target] = try RowWriter.columnValue(value)
    }

    /// Writes any other optional encodable value; `nil` writes no value.
    @inlinable
    public mutating func write<T: Encodable>(_ value: T?) throws {
        if let value { try write(value) } else { next += 1 }
    }

    /// The column value of `value`, as the `Codable` row encoder gives it.
    @usableFromInline
    static func columnValue<T: Encodable>(_ value: T) throws -> Value {
        try RowEncoder.columnValue(value, codingPath: [])
    }

    @usableFromInline
    static func idIsNotAString(_ type: Any.Type) -> OfflineSyncError {
        OfflineSyncError(.invalidValue, "the model writes its 'id' as \(type), not a String")
    }

    /// The row written, on `layout` (the layout the targets point into).
    func item(layout: RowLayout, model: Any.Type, keyCount: Int) throws -> Item {
        guard next == keyCount else {
            throw OfflineSyncError(
                .invalidSchema,
                "\(model).writeRow(to:) wrote \(next) values for the \(keyCount) keys of its rowKeys; they must match one to one"
            )
        }
        guard let id else {
            throw OfflineSyncError(.invalidValue, "\(model) wrote no string 'id'; a model must write its id under the key 'id'")
        }
        return Item(id: id, layout: layout, values: slots)
    }
}

/// How the models of one ``RowWritable`` type are written onto one table's row layout.
struct RowWritingPlan: Sendable {
    let targets: [Int]
    let layout: RowLayout

    /// The plan for `keys` on `layout`, leaving out `skipped` keys; `nil` when a key other than
    /// those is not a column of the layout (the model's rows are then encoded instead).
    init?(keys: [String], layout: RowLayout, skipping skipped: [String]) {
        var targets: [Int] = []
        targets.reserveCapacity(keys.count)
        for key in keys {
            if key == "id" {
                targets.append(RowWriter.idTarget)
            } else if skipped.contains(key) {
                targets.append(RowWriter.skippedTarget)
            } else if let position = layout.position(of: key) {
                targets.append(position)
            } else {
                return nil
            }
        }
        guard Set(keys).count == keys.count else { return nil }
        self.targets = targets
        self.layout = layout
    }

    /// Rewrites `row` (a row of this plan's layout, or any row to replace) into the row of
    /// `model`, reusing the storage of its values when nothing else holds them.
    func refill<Model: RowWritable>(_ row: inout Item, with model: Model) throws {
        let width = layout.names.count
        var writer =
            row.slotCount == width && row.layoutIs(layout)
            ? RowWriter(targets: targets, reusing: row.takeSlots()) : RowWriter(targets: targets, width: width)
        try model.writeRow(to: &writer)
        row = try writer.item(layout: layout, model: Model.self, keyCount: targets.count)
    }

    /// The rows of `models`, each written into a row of its own.
    func items<Model: RowWritable>(of models: UnsafeBufferPointer<Model>) throws -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(models.count)
        for index in models.indices {
            var row = Item(id: "")
            try refill(&row, with: models[index])
            items.append(row)
        }
        return items
    }
}
