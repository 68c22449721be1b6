/// The column names of items laid out alike, in order, each once: shared by every item built on
/// it, so that an item keeps its values by position and one allocation describes a whole page of
/// rows.
///
/// Every table schema has one, ``TableSchema/rowLayout``, in the order of its
/// ``TableSchema/columns``. The stores decode rows straight into it, and ``TableSchema``
/// recognises an item on it (by identity) and reads its values by position, without looking a
/// single column name up. Build rows fast with ``Item/init(id:layout:values:)`` on that layout.
public final class RowLayout: Sendable, Hashable, CustomStringConvertible {
    /// The column names, in order, without duplicates.
    public let names: [String]
    /// Name → position, for layouts too wide for a linear search.
    private let positions: [String: Int]?
    /// The positions of the system properties, by ``SystemProperty`` case (`-1`: absent), so
    /// that ``Item/updatedAt``, ``Item/isDeleted`` and the like look no name up: a pull reads
    /// `updatedAt` and `deleted` of every row it receives.
    private let systemPositions: [Int]

    /// The layout without columns.
    static let empty = RowLayout(uniqueNames: [])

    /// Layouts up to this many columns are searched linearly (comparing lengths first), which
    /// beats hashing the name for the handful of columns a table usually has.
    static let linearSearchLimit = 16

    /// A layout of `names`, which must not repeat a name (a repeated name is found at its first
    /// position only).
    package init(uniqueNames names: [String]) {
        self.names = names
        positions = names.count > RowLayout.linearSearchLimit ? RowLayout.positionTable(names) : nil
        var systemPositions = [Int](repeating: -1, count: SystemProperty.allCases.count)
        for (position, name) in names.enumerated() {
            if let property = SystemProperty(columnName: name), systemPositions[property.ordinal] < 0 {
                systemPositions[property.ordinal] = position
            }
        }
        self.systemPositions = systemPositions
    }

    /// Name → position of `names`, a repeated name at its first position.
    private static func positionTable(_ names: [String]) -> [String: Int] {
        Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private init(names: [String], positions: [String: Int]?, systemPositions: [Int]) {
        self.names = names
        self.positions = positions
        self.systemPositions = systemPositions
    }

    /// The position of a system property's column, if the layout has it (found when the layout
    /// was made, so no name is compared).
    func position(of property: SystemProperty) -> Int? {
        let position = systemPositions[property.ordinal]
        return position < 0 ? nil : position
    }

    /// The position of the column with this exact name, if the layout has it.
    @inlinable
    public func position(of name: String) -> Int? {
        if let positions = positionTable { return positions[name] }
        let length = name.utf8.count
        return names.withUnsafeBufferPointer { names in
            for position in names.indices where names[position].utf8.count == length && names[position] == name {
                return position
            }
            return nil
        }
    }

    @usableFromInline
    var positionTable: [String: Int]? { positions }

    /// A layout of `names`; a repeated name is kept at its first position only.
    package convenience init(_ names: [String]) {
        var unique: [String] = []
        unique.reserveCapacity(names.count)
        var seen: Set<String> = []
        for name in names where seen.insert(name).inserted { unique.append(name) }
        self.init(uniqueNames: unique)
    }

    /// This layout with `name` appended (a new layout; this one is shared and never changes).
    func appending(_ name: String) -> RowLayout {
        let appended = names + [name]
        var systemPositions = self.systemPositions
        if let property = SystemProperty(columnName: name), systemPositions[property.ordinal] < 0 {
            systemPositions[property.ordinal] = names.count
        }
        var positions = self.positions
        if appended.count > RowLayout.linearSearchLimit {
            if positions == nil {
                positions = RowLayout.positionTable(appended)
            } else if positions?[name] == nil {
                positions?[name] = names.count
            }
        }
        return RowLayout(names: appended, positions: positions, systemPositions: systemPositions)
    }

    /// Two layouts are equal when they list the same names in the same order.
    public static func == (lhs: RowLayout, rhs: RowLayout) -> Bool {
        lhs === rhs || lhs.names == rhs.names
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
    }

    public var description: String { "RowLayout(\(names.joined(separator: ", ")))" }
}
