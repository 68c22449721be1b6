/// The type of a declared column.
public enum ColumnType: String, Sendable, Hashable, Codable, CaseIterable {
    /// `true` / `false`.
    case bool
    /// A 64-bit signed integer.
    case integer
    /// A finite double.
    case double
    /// A string (compared byte-wise on UTF-8).
    case string
    /// A ``Timestamp`` (UTC, milliseconds).
    case date
    /// A JSON array or object kept as text.
    case json
}

/// A declared column: a name and a type. Every column is nullable.
public struct Column: Sendable, Hashable, Codable {
    /// The column name (see ``Identifier``).
    public var name: String
    /// The column type.
    public var type: ColumnType

    /// Creates a column.
    public init(_ name: String, _ type: ColumnType) {
        self.name = name
        self.type = type
    }
}

/// A declared secondary index over one or more columns, in order.
public struct TableIndex: Sendable, Hashable, Codable {
    /// The index name (see ``Identifier``), unique within its table.
    public var name: String
    /// The indexed columns, most significant first.
    public var columns: [String]

    /// Creates an index.
    public init(_ name: String, on columns: [String]) {
        self.name = name
        self.columns = columns
    }
}

/// The former name of ``TableIndex``, which a collection's own `Index` type shadows inside its
/// extensions and conformances.
@available(*, deprecated, renamed: "TableIndex")
public typealias Index = TableIndex

/// Where a write comes from, which decides how unknown columns are treated.
public enum WriteOrigin: Sendable, Hashable {
    /// The app wrote the item: a column the table does not declare is an error.
    case local
    /// The server sent the item: columns the table does not declare are dropped.
    case server
}

/// The declaration of one table: typed columns and indexes.
///
/// Every table has the implicit primary key `id` (a string). Synced tables (the default) also get
/// the system properties `createdAt`, `updatedAt`, `version` and `deleted` as ordinary columns.
public struct TableSchema: Sendable, Hashable, Codable {
    /// The table name (see ``Identifier``).
    public var name: String
    /// The columns, `id` excluded, system properties included when ``synced`` is `true`.
    public private(set) var columns: [Column] {
        didSet { rowLayout = RowLayout(uniqueNames: columns.map(\.name)) }
    }
    /// The names of ``columns`` as a ``RowLayout``: rows laid out on it are read and written by
    /// position (see ``Item/init(id:layout:values:)``). Every copy of a schema shares it.
    public private(set) var rowLayout: RowLayout
    /// The secondary indexes.
    public var indexes: [TableIndex]
    /// `true` when the table carries the system properties of the table protocol.
    public private(set) var synced: Bool

    /// Declares a table.
    /// - Parameters:
    ///   - name: the table name.
    ///   - columns: the app's columns (do not list `id`; system properties are added when `synced`).
    ///   - indexes: secondary indexes.
    ///   - synced: whether to add `createdAt`, `updatedAt`, `version`, `deleted`.
    public init(_ name: String, columns: [Column], indexes: [TableIndex] = [], synced: Bool = true) {
        self.name = name
        self.synced = synced
        var all = columns
        if synced {
            for property in SystemProperty.allCases where !columns.contains(where: { $0.name == property.rawValue }) {
                all.append(Column(property.rawValue, property.type))
            }
        }
        self.columns = all
        self.rowLayout = RowLayout(uniqueNames: all.map(\.name))
        self.indexes = indexes
    }

    private enum CodingKeys: String, CodingKey {
        case name, columns, indexes, synced
    }

    /// Reads a declaration written by `encode(to:)`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        columns = try container.decode([Column].self, forKey: .columns)
        indexes = try container.decode([TableIndex].self, forKey: .indexes)
        synced = try container.decode(Bool.self, forKey: .synced)
        rowLayout = RowLayout(uniqueNames: columns.map(\.name))
    }

    /// The declared column with this exact name, if any.
    public func column(named name: String) -> Column? {
        columnIndex(named: name).map { columns[$0] }
    }

    /// `true` for OfflineSync's own tables (names starting with `__`).
    public var isSystem: Bool { name.hasPrefix("__") }

    /// Checks names, duplicates and index columns; throws a message naming the fault.
    /// - Parameter reservedPrefixes: name prefixes the store reserves
    ///   (``LocalStore/reservedNamePrefixes``), rejected in table, column and index names.
    public func validate(reservedPrefixes: [String] = []) throws {
        if isSystem {
            try Identifier.validate(name, kind: "table", reservedPrefixes: reservedPrefixes)
        } else {
            try Identifier.validateUserTable(name, reservedPrefixes: reservedPrefixes)
        }
        var seen: Set<String> = ["id"]
        for column in columns {
            try Identifier.validate(column.name, kind: "column", reservedPrefixes: reservedPrefixes)
            guard seen.insert(Identifier.folded(column.name)).inserted else {
                throw OfflineSyncError(
                    .invalidSchema,
                    "table '\(name)' declares column '\(column.name)' twice (names are compared case-insensitively, and 'id' is implicit)"
                )
            }
            if let property = SystemProperty(rawValue: column.name), synced, column.type != property.type {
                throw OfflineSyncError(
                    .invalidSchema,
                    "table '\(name)' declares system column '\(column.name)' as \(column.type.rawValue); it must be \(property.type.rawValue)"
                )
            }
        }
        var indexNames: Set<String> = []
        for index in indexes {
            try Identifier.validate(index.name, kind: "index", reservedPrefixes: reservedPrefixes)
            guard indexNames.insert(Identifier.folded(index.name)).inserted else {
                throw OfflineSyncError(.invalidSchema, "table '\(name)' declares index '\(index.name)' twice")
            }
            guard !index.columns.isEmpty else {
                throw OfflineSyncError(.invalidSchema, "index '\(index.name)' on table '\(name)' lists no columns")
            }
            for column in index.columns where column != "id" && self.column(named: column) == nil {
                throw OfflineSyncError(
                    .invalidSchema,
                    "index '\(index.name)' on table '\(name)' names column '\(column)', which the table does not declare"
                )
            }
        }
    }

    /// This declaration widened by `newer`: columns and indexes that `newer` adds are appended.
    /// A column whose type changed is an error (columns are never retyped or dropped).
    ///
    /// Linear in the number of columns: the added ones are appended at once (each change of
    /// ``columns`` rebuilds ``rowLayout``), and letter-case clashes are found in a set.
    public func merged(with newer: TableSchema) throws -> TableSchema {
        var result = self
        var added: [Column] = []
        let folded = Set(columns.map { Identifier.folded($0.name) })
        for column in newer.columns {
            if let existing = self.column(named: column.name) {
                guard existing.type == column.type else {
                    throw OfflineSyncError(
                        .invalidSchema,
                        "table '\(name)' column '\(column.name)' is stored as \(existing.type.rawValue) but now declared as \(column.type.rawValue); columns cannot change type (declare a new column instead)"
                    )
                }
            } else if folded.contains(Identifier.folded(column.name)) {
                throw OfflineSyncError(
                    .invalidSchema,
                    "table '\(name)' column '\(column.name)' differs only in letter case from an existing column")
            } else {
                added.append(column)
            }
        }
        if !added.isEmpty { result.columns += added }
        for index in newer.indexes where !result.indexes.contains(where: { $0.name == index.name }) {
            result.indexes.append(index)
        }
        result.synced = synced || newer.synced
        return result
    }

    /// Checks and converts an item for writing into this table, the one place where every backend's
    /// value rules come from.
    ///
    /// - Unknown columns: an error for ``WriteOrigin/local`` writes, dropped for ``WriteOrigin/server``.
    /// - Conversions: an integer into a `double` column becomes a double; an integral double into an
    ///   `integer` column becomes an integer; an ISO 8601 string into a `date` column becomes a date.
    /// - Rejected: other type mismatches, NaN and infinities, dates outside ``Timestamp/minimum`` ...
    ///   ``Timestamp/maximum`` (years 1 to 9999, what ISO 8601 text carries), ``Value/json(_:)`` text that
    ///   is not one JSON array or object, an empty id or one longer than ``maximumIdLength`` UTF-8 bytes
    ///   or containing U+0000.
    /// - `null` values are removed: an absent column and a null column are the same.
    public func normalize(_ item: Item, origin: WriteOrigin) throws -> Item {
        // An item already laid out on this table's columns whose values need no conversion is
        // returned as it is (no allocation, its layout object swapped for ``rowLayout``); any other
        // comes back laid out on ``rowLayout``.
        if item.layout === rowLayout || item.layout.names == rowLayout.names {
            var result = item
            // Stored rows then share the table's layout object, which later reads and the
            // compiled filters recognise by identity.
            if result.layout !== rowLayout { result.adoptLayout(rowLayout) }
            try forEachStoredValue(of: item, origin: origin) { position, value in
                if result.slots[position] != value { result.setSlot(position, value) }
            }
            for position in result.slots.indices {
                if let value = result.slots[position], value.isNull { result.setSlot(position, nil) }
            }
            return result
        }
        var slots = [Value?].noValues(count: columns.count)
        try forEachStoredValue(of: item, origin: origin) { slots[$0] = $1 }
        return Item(id: item.id, layout: rowLayout, values: slots)
    }

    /// The error for a local write of a column the table does not declare.
    @usableFromInline
    func unknownColumn(_ column: String, item id: String) -> OfflineSyncError {
        OfflineSyncError(
            .unknownColumn,
            "table '\(name)' has no column '\(column)' (item '\(id)'); declare it in the table schema before writing it"
        )
    }

    /// The longest accepted id, in UTF-8 bytes.
    public static let maximumIdLength = 255

    /// Throws unless `id` is a non-empty string of at most ``maximumIdLength`` UTF-8 bytes without U+0000.
    public static func validateId(_ id: String, table: String) throws {
        let length = id.utf8.count
        guard length > 0 else {
            throw OfflineSyncError(
                .invalidValue, "table '\(table)': an item has an empty id; ids must be 1 to \(maximumIdLength) bytes")
        }
        guard length <= maximumIdLength else {
            throw OfflineSyncError(
                .invalidValue,
                "table '\(table)': id '\(id.prefix(32))…' is \(length) bytes long; the limit is \(maximumIdLength)")
        }
        let hasNUL = id.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? id.utf8.contains(0)
        guard !hasNUL else {
            throw OfflineSyncError(
                .invalidValue,
                "table '\(table)': id '\(id.replacingNUL)' contains the character U+0000, which ids may not contain")
        }
    }

    /// `true` when a column of `type` stores `value` as it is (its own type, a finite double, a
    /// date in years 1 to 9999): the common case, answered without a call or a copy of the
    /// value. ``converted(_:to:table:column:id:)`` answers every other case (a conversion or
    /// an error), so the rules stay in one place.
    @inlinable @inline(__always)
    static func isStoredAsIs(_ value: Value, in type: ColumnType) -> Bool {
        switch value {
        case .bool: return type == .bool
        case .int: return type == .integer
        case .string: return type == .string
        case .json: return false  // its text is checked (``converted(_:to:table:column:id:)``)
        case .double(let number): return type == .double && number.isFinite
        case .date(let date): return type == .date && date >= .minimum && date <= .maximum
        case .null: return false
        }
    }

    /// The value to store for `value` in a column of `type`: `nil` when it is stored as it is,
    /// the converted value otherwise; throws when it does not fit.
    @usableFromInline
    static func converted(_ value: Value, to type: ColumnType, table: String, column: String, id: String) throws
        -> Value?
    {
        if isStoredAsIs(value, in: type) { return nil }
        // The messages name the item, the column and the kind of value, never the value itself:
        // they reach logs and HTTP answers, and item contents are never logged.
        func mismatch() -> OfflineSyncError {
            OfflineSyncError(
                .invalidValue,
                "table '\(table)' column '\(column)' is \(type.rawValue) but item '\(id)' has a\(value.type == .integer ? "n" : "") \(value.type?.rawValue ?? "null") value there"
            )
        }
        switch (type, value) {
        case (.json, .json(let text)):
            var scratch: [UInt8] = []
            scratch.reserveCapacity(text.utf8.count)
            do {
                try JSONWriter.appendContainer(text, to: &scratch)
            } catch let error as OfflineSyncError {
                throw OfflineSyncError(
                    .invalidValue,
                    "table '\(table)' column '\(column)' is json but item '\(id)' has text there that is not one JSON array or object (\(error.message))"
                )
            }
            return nil
        case (.date, .date(let date)):
            throw OfflineSyncError(
                .invalidValue,
                "table '\(table)' column '\(column)' of item '\(id)' holds a date \(date.millisecondsSince1970 < 0 ? "before year 1" : "after year 9999"), outside the years 1 to 9999 that ISO 8601 and the table protocol carry"
            )
        case (.double, .double(let number)):
            throw OfflineSyncError(
                .invalidValue,
                "table '\(table)' column '\(column)' of item '\(id)' holds \(number.isNaN ? "NaN" : "an infinity"); only finite doubles can be stored"
            )
        case (.double, .int(let number)):
            return .double(Double(number))
        case (.integer, .double(let number)):
            guard number.isFinite, number.rounded() == number, let exact = Int64(exactly: number) else {
                throw mismatch()
            }
            return .int(exact)
        case (.date, .string(let text)):
            guard let date = Timestamp(iso8601: text) else {
                throw OfflineSyncError(
                    .invalidValue,
                    "table '\(table)' column '\(column)' is a date but item '\(id)' has a string there that is not an ISO 8601 date (e.g. 2026-01-02T03:04:05.678Z)"
                )
            }
            guard date >= .minimum, date <= .maximum else {
                // An offset can carry a date written in year 9999 (or 1) past the years a date
                // column holds: `9999-12-31T23:59:59.999-07:00` is in year 10000 in UTC.
                throw OfflineSyncError(
                    .invalidValue,
                    "table '\(table)' column '\(column)' of item '\(id)' holds a date that is \(date < .minimum ? "before year 1" : "after year 9999") in UTC, outside the years 1 to 9999 that ISO 8601 and the table protocol carry"
                )
            }
            return .date(date)
        default:
            throw mismatch()
        }
    }
}

extension String {
    var replacingNUL: String { split(separator: "\u{0}", omittingEmptySubsequences: false).joined(separator: "\\0") }
}

/// All the tables a store holds: the app's tables and, when used with sync, the system tables.
public struct StoreSchema: Sendable, Hashable, Codable {
    /// The declared tables.
    public private(set) var tables: [TableSchema]

    /// Creates a schema; names are validated when a store opens with it (see ``validate(reservedPrefixes:)``).
    public init(_ tables: [TableSchema]) {
        self.tables = tables
    }

    /// The table with this exact name, if declared.
    public func table(named name: String) -> TableSchema? {
        tables.first { $0.name == name }
    }

    /// The table with this name, or an error telling the caller to declare it.
    public func requireTable(_ name: String) throws -> TableSchema {
        if let table = table(named: name) { return table }
        try Identifier.validate(name, kind: "table")
        throw OfflineSyncError(
            .unknownTable, "table '\(name)' is not declared; declare it in the schema before opening the store")
    }

    /// Validates every table and rejects tables whose names differ only in letter case.
    /// - Parameter reservedPrefixes: name prefixes the store reserves
    ///   (``LocalStore/reservedNamePrefixes``).
    public func validate(reservedPrefixes: [String] = []) throws {
        var seen: Set<String> = []
        for table in tables {
            try table.validate(reservedPrefixes: reservedPrefixes)
            guard seen.insert(Identifier.folded(table.name)).inserted else {
                throw OfflineSyncError(
                    .invalidSchema, "table '\(table.name)' is declared twice (names are compared case-insensitively)")
            }
        }
    }

    /// This schema widened by `newer`: new tables are added and existing tables gain new columns and
    /// indexes. Tables absent from `newer` are kept.
    public func merged(with newer: StoreSchema) throws -> StoreSchema {
        var result = self
        for table in newer.tables {
            if let position = result.tables.firstIndex(where: { $0.name == table.name }) {
                result.tables[position] = try result.tables[position].merged(with: table)
            } else if result.tables.contains(where: { Identifier.folded($0.name) == Identifier.folded(table.name) }) {
                throw OfflineSyncError(
                    .invalidSchema, "table '\(table.name)' differs only in letter case from an existing table")
            } else {
                result.tables.append(table)
            }
        }
        return result
    }

    /// Adds or replaces one table declaration.
    public mutating func declare(_ table: TableSchema) {
        if let position = tables.firstIndex(where: { $0.name == table.name }) {
            tables[position] = table
        } else {
            tables.append(table)
        }
    }
}
