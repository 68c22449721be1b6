/// A row of a table: a string `id` and named values.
///
/// Every table's primary key is the string column `id`; it is compared byte-wise (UTF-8), so ids are
/// case-sensitive. Columns that are absent and columns that hold ``Value/null`` read back the same.
/// The system properties of synced tables are ordinary columns with reserved names, see
/// ``SystemProperty``.
public struct Item: Sendable, Hashable, CustomStringConvertible {
    /// The primary key.
    public var id: String
    /// The values by column name, without `id`.
    public var values: [String: Value]

    /// Creates an item.
    public init(id: String, values: [String: Value] = [:]) {
        self.id = id
        self.values = values
    }

    /// The value of a column; ``Value/null`` when absent. `"id"` answers the id.
    public subscript(column: String) -> Value {
        get {
            if column == "id" { return .string(id) }
            return values[column] ?? .null
        }
        set {
            if column == "id" {
                if case .string(let text) = newValue { id = text }
                return
            }
            values[column] = newValue
        }
    }

    /// The value of `updatedAt`, when it is a date.
    public var updatedAt: Timestamp? { values[SystemProperty.updatedAt.rawValue]?.dateValue }
    /// The value of `createdAt`, when it is a date.
    public var createdAt: Timestamp? { values[SystemProperty.createdAt.rawValue]?.dateValue }
    /// The value of `version`, when it is a string.
    public var version: String? { values[SystemProperty.version.rawValue]?.stringValue }
    /// `true` when the `deleted` column holds `true`.
    public var isDeleted: Bool { values[SystemProperty.deleted.rawValue]?.boolValue ?? false }

    /// Two items are equal when their ids are byte-equal and their non-null values are equal
    /// (absent and null columns are the same thing).
    public static func == (lhs: Item, rhs: Item) -> Bool {
        guard lhs.id.utf8.elementsEqual(rhs.id.utf8) else { return false }
        let left = lhs.values.filter { !$0.value.isNull }
        let right = rhs.values.filter { !$0.value.isNull }
        return left == right
    }

    public func hash(into hasher: inout Hasher) {
        for byte in id.utf8 { hasher.combine(byte) }
    }

    public var description: String {
        let fields = values.keys.sorted().map { "\($0): \(values[$0]!)" }
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
}
