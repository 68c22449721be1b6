/// A ``SyncModel`` that reads itself from a row, property by property, instead of going through
/// its `Decodable` conformance (as GRDB's `FetchableRecord.init(row:)` does): typed reads then
/// cost about what reading ``Item``s does, where `Decodable`'s keyed containers cost as much as
/// the store's own work.
///
/// ``ModelTable`` reads rows with ``init(row:)`` when the model conforms, and with
/// `init(from:)` otherwise; writes are unaffected (see ``RowWritable`` for those). The two must
/// read the same model from the same row: the first time a model type is used, the rows of its
/// probe values (see <doc:TypedModels>) are read both ways and the models compared through their
/// `Encodable` rows, and any difference (a value read from the wrong key, a key left out, a key
/// `init(from:)` does not read) throws ``OfflineSyncError/Code-swift.struct/invalidSchema``
/// naming the key, so a conformance that does not match the model's `Codable` shape is never used.
///
/// The conformance lists the coding keys (`id` included; a renamed property under its
/// `CodingKeys` name) and reads one value per key, in the same order; the type of each value is
/// the type of the property it is assigned to:
///
/// ```swift
/// struct TodoItem: RowReadable {
///     var id: String
///     var text: String
///     var complete: Bool
///     var due: Date?
///     var version: String?
///
///     static let rowKeys = ["id", "text", "complete", "due", "version"]
///
///     init(row: inout RowReader) throws {
///         id = try row.read()
///         text = try row.read()
///         complete = try row.read()
///         due = try row.read()
///         version = try row.read()
///     }
/// }
/// ```
///
/// A model that also conforms to ``RowWritable`` shares one ``rowKeys`` list for both.
public protocol RowReadable: SyncModel {
    /// The coding keys ``init(row:)`` reads (`id` included), in the order it reads them.
    static var rowKeys: [String] { get }

    /// Reads one value per key of ``rowKeys``, in that order, with ``RowReader``'s `read`
    /// methods.
    init(row: inout RowReader) throws

    /// The models of a batch of rows, read with ``init(row:)``. Keep the default: declared here
    /// so that it is compiled in the model's module for the model's type, where a loop in the
    /// core, generic over the model, would copy each model through its type's value witnesses.
    static func _models(_ rows: inout _RowBatch) throws -> [Self]
}

extension RowReadable {
    /// Reads every row of the batch with ``init(row:)``, in order.
    @inlinable
    public static func _models(_ rows: inout _RowBatch) throws -> [Self] {
        var models: [Self] = []
        models.reserveCapacity(rows.count)
        while rows.next() {
            do {
                models.append(try rows.reader.model(Self.self))
            } catch {
                try rows.undecodable(error)
            }
        }
        return models
    }
}

/// The rows a ``RowReadable/_models(_:)`` call reads: a ``RowReader`` positioned on each in turn.
public struct _RowBatch {
    @usableFromInline let items: [Item]
    @usableFromInline var position = 0
    /// The reader, on the current row once ``next()`` answered `true`.
    @usableFromInline var reader: RowReader
    let keys: [String]
    let defaults: [String: Value]
    let report: (_ id: String, _ error: any Error) throws -> Void

    /// The rows `items` (at least one) for a model of `keys` and `defaults`; `report` throws or
    /// reports a row that cannot be read.
    init(
        items: [Item], keys: [String], defaults: [String: Value],
        report: @escaping (_ id: String, _ error: any Error) throws -> Void
    ) {
        self.items = items
        self.keys = keys
        self.defaults = defaults
        self.report = report
        reader = RowReader(plan: RowReadingPlan(keys: keys, layout: items[0].layout, defaults: defaults))
    }

    /// The number of rows.
    @usableFromInline var count: Int { items.count }

    /// Moves the reader to the next row; `false` past the last.
    @usableFromInline
    mutating func next() -> Bool {
        guard position < items.count else { return false }
        if !items[position].layoutIs(reader.layout) {
            reader = RowReader(plan: RowReadingPlan(keys: keys, layout: items[position].layout, defaults: defaults))
        }
        reader.start(items[position])
        position += 1
        return true
    }

    /// Throws or reports the current row, which could not be read.
    @usableFromInline
    func undecodable(_ error: any Error) throws {
        try report(items[position - 1].id, error)
    }
}

/// Where ``RowReadable/init(row:)`` reads a model's values from: the slots of one row, read in
/// the order of the model's ``RowReadable/rowKeys`` without looking a column name up (the key →
/// slot table is computed once per row layout and batch of rows).
///
/// A column without a value reads as the default the model declares for it
/// (``ModelSchemaOption/default(_:_:)``), then as `nil` for an optional property; a
/// non-optional property without either throws, naming the item and the column, as reading
/// through `Decodable` does.
public struct RowReader {
    /// The source of each key: a position of the row's layout, ``idSource`` or ``absentSource``.
    @usableFromInline let sources: [Int]
    /// The value each key reads as when its column holds none, by key.
    @usableFromInline let defaults: [Value?]
    /// The keys, to name them in errors.
    @usableFromInline let keys: [String]
    /// The row's values by layout position.
    @usableFromInline var slots: [Value?]
    /// The row's id.
    @usableFromInline var id: String
    /// The position in ``sources`` of the next value read.
    @usableFromInline var next = 0
    /// The layout of the rows this reader reads.
    let layout: RowLayout

    /// The source of the key `id`.
    @usableFromInline static let idSource = -1
    /// The source of a key whose column the row does not have.
    @usableFromInline static let absentSource = -2

    /// A reader of rows of the plan's layout; ``model(_:of:)`` reads each of them.
    init(plan: RowReadingPlan) {
        sources = plan.sources
        defaults = plan.defaults
        keys = plan.keys
        layout = plan.layout
        slots = []
        id = ""
    }

    /// The model of `item`, a row of this reader's layout: `init(row:)` reads it from its first
    /// key, and must read exactly one value per key.
    mutating func model<Model: RowReadable>(_ type: Model.Type, of item: Item) throws -> Model {
        start(item)
        return try model(type)
    }

    /// The model of the row the reader is on (see ``start(_:)``): `init(row:)` reads it from its
    /// first key, and must read exactly one value per key.
    @inlinable
    mutating func model<Model: RowReadable>(_ type: Model.Type) throws -> Model {
        let model = try Model(row: &self)
        try finish(model: Model.self)
        return model
    }

    /// Positions the reader on the first key of `item`, a row of this reader's layout.
    mutating func start(_ item: Item) {
        slots = item.slots
        id = item.id
        next = 0
    }

    /// The next key's value (its default, or ``Value/null``, when the row holds none), and the
    /// key's position, advancing past it.
    @inlinable @inline(__always)
    mutating func nextValue() -> (value: Value, index: Int) {
        let index = next
        next += 1
        // A value beyond the keys is reported by `finish(model:)`.
        guard index < sources.count else { return (.null, index) }
        let source = sources[index]
        let value: Value
        if source >= 0 {
            value = slots[source] ?? .null
        } else if source == RowReader.idSource {
            value = .string(id)
        } else {
            value = .null
        }
        if value.isNull, let fallback = defaults[index] { return (fallback, index) }
        return (value, index)
    }

    /// The layout position of the next key's value when the row has the column, else `nil`
    /// (the `id` key, a column the row lacks, a value past the keys). The reads look at the
    /// slot in place first, which spares a copy of the value for the common case of a value of
    /// the property's own type.
    @inlinable @inline(__always)
    func nextSlot() -> Int? {
        guard next < sources.count else { return nil }
        let source = sources[next]
        return source >= 0 ? source : nil
    }

    /// Reads a string (the row's id under the key `id`; a date as ISO 8601 text, a `json` value
    /// as its text).
    @inlinable @inline(__always)
    public mutating func read() throws -> String {
        if let slot = nextSlot(), case .string(let text)? = slots[slot] {
            next += 1
            return text
        }
        let (value, index) = nextValue()
        switch value {
        case .string(let text), .json(let text): return text
        default: return try stringFallback(value, index: index)
        }
    }

    /// Reads an optional string; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read() throws -> String? {
        if let slot = nextSlot(), case .string(let text)? = slots[slot] {
            next += 1
            return text
        }
        let (value, index) = nextValue()
        switch value {
        case .string(let text), .json(let text): return text
        case .null: return nil
        default: return try stringFallback(value, index: index)
        }
    }

    /// Reads a Boolean.
    @inlinable @inline(__always)
    public mutating func read() throws -> Bool {
        if let slot = nextSlot(), case .bool(let flag)? = slots[slot] {
            next += 1
            return flag
        }
        let (value, index) = nextValue()
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, index: index, expected: "a Bool") }
        return flag
    }

    /// Reads an optional Boolean; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read() throws -> Bool? {
        if let slot = nextSlot(), case .bool(let flag)? = slots[slot] {
            next += 1
            return flag
        }
        let (value, index) = nextValue()
        switch value {
        case .bool(let flag): return flag
        case .null: return nil
        default: throw mismatch(Bool.self, value, index: index, expected: "a Bool")
        }
    }

    /// Reads an integer.
    @inlinable @inline(__always)
    public mutating func read() throws -> Int {
        if let slot = nextSlot(), case .int(let number)? = slots[slot], let exact = Int(exactly: number) {
            next += 1
            return exact
        }
        let (value, index) = nextValue()
        if case .int(let number) = value, let exact = Int(exactly: number) { return exact }
        return try integer(value, index: index)
    }

    /// Reads an optional integer; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read() throws -> Int? {
        if let slot = nextSlot(), case .int(let number)? = slots[slot], let exact = Int(exactly: number) {
            next += 1
            return exact
        }
        let (value, index) = nextValue()
        if case .int(let number) = value, let exact = Int(exactly: number) { return exact }
        if value.isNull { return nil }
        return try integer(value, index: index)
    }

    /// Reads a 64-bit integer.
    @inlinable @inline(__always)
    public mutating func read() throws -> Int64 {
        if let slot = nextSlot(), case .int(let number)? = slots[slot] {
            next += 1
            return number
        }
        let (value, index) = nextValue()
        if case .int(let number) = value { return number }
        return try integer(value, index: index)
    }

    /// Reads an optional 64-bit integer; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read() throws -> Int64? {
        if let slot = nextSlot(), case .int(let number)? = slots[slot] {
            next += 1
            return number
        }
        let (value, index) = nextValue()
        if case .int(let number) = value { return number }
        if value.isNull { return nil }
        return try integer(value, index: index)
    }

    /// Reads a double (an integer converted).
    @inlinable @inline(__always)
    public mutating func read() throws -> Double {
        if let slot = nextSlot(), case .double(let number)? = slots[slot] {
            next += 1
            return number
        }
        let (value, index) = nextValue()
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(Double.self, value, index: index, expected: "a Double")
        }
    }

    /// Reads an optional double; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read() throws -> Double? {
        if let slot = nextSlot(), case .double(let number)? = slots[slot] {
            next += 1
            return number
        }
        let (value, index) = nextValue()
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        case .null: return nil
        default: throw mismatch(Double.self, value, index: index, expected: "a Double")
        }
    }

    /// Reads any other decodable value as `Decodable` reads it from a row: dates from dates,
    /// enums from their raw values, nested values from JSON text, other integer types checked
    /// for range.
    ///
    /// Disfavoured, so that an optional property reads through the optional overload.
    @inlinable @inline(__always)
    @_disfavoredOverload
    public mutating func read<T: Decodable>() throws -> T {
        if let slot = nextSlot(), case .date(let timestamp)? = slots[slot], T.self == RowReader.dateType {
            next += 1
            return RowReader.date(timestamp, as: T.self)
        }
        let (value, index) = nextValue()
        if case .date(let timestamp) = value, T.self == RowReader.dateType {
            return RowReader.date(timestamp, as: T.self)
        }
        return try RowReader.decode(T.self, value, key: keyName(index), itemId: id)
    }

    /// Reads any other optional decodable value; a missing value reads as `nil`.
    @inlinable @inline(__always)
    public mutating func read<T: Decodable>() throws -> T? {
        if let slot = nextSlot(), case .date(let timestamp)? = slots[slot], T.self == RowReader.dateType {
            next += 1
            return RowReader.date(timestamp, as: T.self)
        }
        let (value, index) = nextValue()
        if case .date(let timestamp) = value, T.self == RowReader.dateType {
            return RowReader.date(timestamp, as: T.self)
        }
        if value.isNull { return nil }
        return try RowReader.decode(T.self, value, key: keyName(index), itemId: id)
    }

    /// The `Date` of a timestamp as `T`, which must be Foundation's `Date` (``dateType``): made by
    /// the core into storage of the caller's, so that a read specialized for `Date` (inlined into
    /// the model's module) converts a date without a dynamic cast or a generic optional.
    @inlinable
    static func date<T>(_ timestamp: Timestamp, as type: T.Type) -> T {
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer in
            RowReader.initializeDate(timestamp, at: UnsafeMutableRawPointer(buffer.baseAddress!))
            return buffer.baseAddress!.move()
        }
    }

    /// The name of the key at `index` (past the keys: a placeholder; the count is reported).
    @usableFromInline
    func keyName(_ index: Int) -> String {
        index < keys.count ? keys[index] : "(value \(index + 1) of \(keys.count) keys)"
    }

    @usableFromInline
    static func decode<T: Decodable>(_ type: T.Type, _ value: Value, key: String, itemId: String) throws -> T {
        try RowDecoder.decode(type, value, key: ColumnKey(key), itemId: itemId)
    }

    @usableFromInline
    func stringFallback(_ value: Value, index: Int) throws -> String {
        if case .date(let date) = value { return date.iso8601 }
        throw mismatch(String.self, value, index: index, expected: "a String")
    }

    @usableFromInline
    func integer<T: FixedWidthInteger>(_ value: Value, index: Int) throws -> T {
        let exact: T?
        switch value {
        case .int(let number): exact = T(exactly: number)
        case .double(let number): exact = number.isFinite ? T(exactly: number) : nil
        case .date(let date): exact = T(exactly: date.millisecondsSince1970)
        default: throw mismatch(T.self, value, index: index, expected: "an integer")
        }
        guard let exact else { throw mismatch(T.self, value, index: index, expected: "\(T.self)") }
        return exact
    }

    @usableFromInline
    func mismatch(_ type: Any.Type, _ value: Value, index: Int, expected: String) -> any Error {
        RowDecoder.mismatch(type, ColumnKey(keyName(index)), value, expected: expected, itemId: id)
    }

    /// Checks that the model read exactly one value per key.
    @usableFromInline
    func finish(model: Any.Type) throws {
        guard next == sources.count else {
            throw OfflineSyncError(
                .invalidSchema,
                "\(model).init(row:) read \(next) values for the \(sources.count) keys of its rowKeys; they must match one to one"
            )
        }
    }
}

/// The coding key of a column, to name it in a decoding error.
struct ColumnKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) {
        stringValue = name
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

/// How the models of one ``RowReadable`` type are read from rows of one ``RowLayout``.
struct RowReadingPlan {
    let sources: [Int]
    let defaults: [Value?]
    let keys: [String]
    let layout: RowLayout

    /// The plan for `keys` on `layout`, with the model's `defaults` by column.
    init(keys: [String], layout: RowLayout, defaults: [String: Value]) {
        self.keys = keys
        self.layout = layout
        sources = keys.map { key in
            key == "id" ? RowReader.idSource : layout.position(of: key) ?? RowReader.absentSource
        }
        self.defaults = keys.map { defaults[$0] }
    }

    /// The model of `item`, which must be laid out on ``layout``.
    func model<Model: RowReadable>(_ type: Model.Type, of item: Item) throws -> Model {
        var reader = RowReader(plan: self)
        return try reader.model(type, of: item)
    }
}
