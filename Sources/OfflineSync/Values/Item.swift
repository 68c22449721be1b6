/// A row of a table: a string `id` and named values.
///
/// Every table's primary key is the string column `id`; it is compared byte-wise (UTF-8), so ids are
/// case-sensitive. Columns that are absent and columns that hold ``Value/null`` read back the same.
/// The system properties of synced tables are ordinary columns with reserved names, see
/// ``SystemProperty``.
///
/// An item keeps its values by position in a ``RowLayout`` (the column names, shared by every
/// item laid out alike), not in a dictionary: reading a row from a store or writing one into it
/// hashes no column name. ``subscript(_:)`` and ``values`` read and write by name as before.
///
/// ## Building rows fast
///
/// `Item(id:values:)` takes a dictionary and lays the item out on the dictionary's keys, which
/// costs a layout per item. Code that builds many rows of one table (a decoder, a typed model's
/// encoder) should lay them out on the table's own layout instead, one value per column in
/// ``TableSchema/columns`` order (`nil` for an absent value):
///
/// ```swift
/// let schema = TableSchema("todo", columns: [Column("text", .string), Column("done", .bool)])
/// let layout = schema.rowLayout  // text, done, then the system properties
/// var values = [Value?](repeating: nil, count: layout.names.count)
/// values[0] = .string("milk")
/// values[1] = .bool(false)
/// let item = Item(id: "1", layout: layout, values: values)
/// ```
///
/// A store then checks and stores the row by position (see
/// ``TableSchema/forEachStoredValue(of:origin:_:)``), and rows a store reads back arrive on
/// the same layout.
public struct Item: Sendable, Hashable, CustomStringConvertible {
    /// The primary key.
    public var id: String
    /// The names of ``slots``' positions.
    @usableFromInline
    package private(set) var layout: RowLayout
    /// The values by position in ``layout``: `nil` where the item has no value (a present
    /// ``Value/null`` is kept, as a dictionary would keep it).
    @usableFromInline
    package private(set) var slots: [Value?]

    /// Creates an item with the values of a dictionary (laid out on its keys).
    public init(id: String, values: [String: Value] = [:]) {
        self.id = id
        guard !values.isEmpty else {
            layout = .empty
            slots = []
            return
        }
        var names: [String] = []
        var slots: [Value?] = []
        names.reserveCapacity(values.count)
        slots.reserveCapacity(values.count)
        for (name, value) in values {
            names.append(name)
            slots.append(value)
        }
        self.layout = RowLayout(uniqueNames: names)
        self.slots = slots
    }

    /// Creates an item from values by position in `layout` (`nil`: no value), without looking any
    /// name up: the fast way to build rows of a table, on its ``TableSchema/rowLayout``.
    ///
    /// - Precondition: `values` has one entry per name of `layout`.
    public init(id: String, layout: RowLayout, values: [Value?]) {
        precondition(
            values.count == layout.names.count,
            "Item(id:layout:values:) got \(values.count) values for a layout of \(layout.names.count) columns")
        self.id = id
        self.layout = layout
        self.slots = values
    }

    /// The value of a column; ``Value/null`` when absent. `"id"` answers the id.
    public subscript(column: String) -> Value {
        get {
            if column == "id" { return .string(id) }
            guard let position = layout.position(of: column) else { return .null }
            return slots[position] ?? .null
        }
        set {
            if column == "id" {
                if case .string(let text) = newValue { id = text }
                return
            }
            if let position = layout.position(of: column) {
                slots[position] = newValue
            } else {
                layout = layout.appending(column)
                slots.append(newValue)
            }
        }
    }

    /// The values by column name, without `id`: every column the item holds a value for
    /// (``Value/null`` included when it was set).
    ///
    /// Reading builds a dictionary and setting replaces every value; to read or change a few
    /// columns, ``subscript(_:)`` and ``removeValue(forColumn:)`` are cheaper.
    public var values: [String: Value] {
        get {
            var values = [String: Value](minimumCapacity: slots.count)
            for position in slots.indices {
                if let value = slots[position] { values[layout.names[position]] = value }
            }
            return values
        }
        set {
            self = Item(id: id, values: newValue)
        }
    }

    /// Removes the value of a column (it then reads as ``Value/null`` and is absent from
    /// ``values``).
    public mutating func removeValue(forColumn column: String) {
        if let position = layout.position(of: column), slots[position] != nil { slots[position] = nil }
    }

    /// Calls `body` with every column the item holds a value for (``Value/null`` included when it
    /// was set), in layout order, without building a dictionary.
    @inlinable
    public func forEachValue(_ body: (_ column: String, _ value: Value) throws -> Void) rethrows {
        let names = layout.names
        for position in slots.indices {
            if let value = slots[position] { try body(names[position], value) }
        }
    }

    /// The value of `updatedAt`, when it is a date.
    public var updatedAt: Timestamp? { self[.updatedAt].dateValue }
    /// The value of `createdAt`, when it is a date.
    public var createdAt: Timestamp? { self[.createdAt].dateValue }
    /// The value of `version`, when it is a string.
    public var version: String? { self[.version].stringValue }
    /// `true` when the `deleted` column holds `true`.
    public var isDeleted: Bool { self[.deleted].boolValue ?? false }

    /// The value of a system property's column (``Value/null`` when absent), found by its
    /// position in the layout without comparing a name.
    subscript(property: SystemProperty) -> Value {
        guard let position = layout.position(of: property) else { return .null }
        return slots[position] ?? .null
    }

    /// The number of non-null values.
    var nonNullCount: Int {
        var count = 0
        for slot in slots { if let slot, !slot.isNull { count += 1 } }
        return count
    }

    /// Two items are equal when their ids are byte-equal and their non-null values are equal
    /// (absent and null columns are the same thing).
    public static func == (lhs: Item, rhs: Item) -> Bool {
        guard UTF8Bytes.equal(lhs.id, rhs.id) else { return false }
        if lhs.layout === rhs.layout {
            for position in lhs.slots.indices {
                let left = lhs.slots[position] ?? .null
                let right = rhs.slots[position] ?? .null
                guard left == right || (left.isNull && right.isNull) else { return false }
            }
            return true
        }
        guard lhs.nonNullCount == rhs.nonNullCount else { return false }
        for position in lhs.slots.indices {
            guard let value = lhs.slots[position], !value.isNull else { continue }
            guard let other = rhs.layout.position(of: lhs.layout.names[position]), rhs.slots[other] == value else {
                return false
            }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        for byte in id.utf8 { hasher.combine(byte) }
    }

    public var description: String {
        let fields = slots.indices.compactMap { position in
            slots[position].map { (name: layout.names[position], value: $0) }
        }.sorted { $0.name < $1.name }.map { "\($0.name): \($0.value)" }
        return "{id: '\(id)'" + (fields.isEmpty ? "" : ", " + fields.joined(separator: ", ")) + "}"
    }
}

/// The system properties that the table protocol maintains on every synced row.
public enum SystemProperty: String, Sendable, CaseIterable {
    /// When the server first stored the row (a date).
    case createdAt
    /// When the server last changed the row (a date); the delta token of incremental pulls.
    case updatedAt
    /// An opaque version string that changes on every server write; sent as `If-Match`.
    case version
    /// `true` for rows soft-deleted on the server.
    case deleted

    /// The declared type of the property.
    public var type: ColumnType {
        switch self {
        case .createdAt, .updatedAt: return .date
        case .version: return .string
        case .deleted: return .bool
        }
    }

    /// The property a column of this name holds, if any: ``init(rawValue:)`` after a length
    /// check, which most column names fail (layouts are built for every item a server writes).
    package init?(columnName name: String) {
        let length = name.utf8.count
        guard length == 7 || length == 9 else { return nil }
        self.init(rawValue: name)
    }

    /// The property's position in ``allCases``.
    var ordinal: Int {
        switch self {
        case .createdAt: return 0
        case .updatedAt: return 1
        case .version: return 2
        case .deleted: return 3
        }
    }
}

extension Item {
    /// Replaces the value at a position of ``layout``.
    mutating func setSlot(_ position: Int, _ value: Value?) {
        slots[position] = value
    }

    /// The number of positions of the item's layout.
    var slotCount: Int { slots.count }

    /// `true` when the item is laid out on exactly `layout` (the same object).
    func layoutIs(_ layout: RowLayout) -> Bool { self.layout === layout }

    /// The values by position, leaving the item without any (so that the caller holds the only
    /// reference to their storage and can rewrite it in place).
    mutating func takeSlots() -> [Value?] {
        let taken = slots
        slots = []
        layout = .empty
        return taken
    }

    /// Lays the item on `layout`, which lists the same names in the same order as its own (so
    /// that a row built elsewhere on equal names passes the identity checks made against a
    /// table's ``TableSchema/rowLayout``).
    mutating func adoptLayout(_ layout: RowLayout) {
        assert(layout.names == self.layout.names, "adoptLayout(_:) needs a layout of the same names")
        self.layout = layout
    }
}

extension Item {
    /// `true` when the item holds a value for the column (``Value/null`` included when set), as
    /// `values[column] != nil` would answer.
    func hasValue(forColumn column: String) -> Bool {
        if column == "id" { return true }
        guard let position = layout.position(of: column) else { return false }
        return slots[position] != nil
    }

    /// The same values under another id.
    func identified(as id: String) -> Item {
        var copy = self
        copy.id = id
        return copy
    }
}
