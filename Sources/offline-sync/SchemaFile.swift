import Foundation
import OfflineSync
import OfflineSyncServer

/// The schema file read by `import --schema`: JSON declaring one or more tables.
///
/// ```json
/// {
///   "tables": [
///     {
///       "name": "todoitem",
///       "columns": [
///         { "name": "text", "type": "string" },
///         { "name": "complete", "type": "bool" }
///       ],
///       "indexes": [ { "name": "todoitem_complete", "columns": ["complete"] } ],
///       "synced": true
///     }
///   ]
/// }
/// ```
///
/// A single table object (without the `tables` wrapper) is accepted too. Column types are `bool`,
/// `integer`, `double`, `string`, `date` and `json`; `id` is implicit; `indexes` is optional;
/// `synced` (default `true`) adds the system columns `createdAt`, `updatedAt`, `version`, `deleted`.
///
/// `serve` also reads each table's access rule (`import` ignores them):
/// `"access": "anonymous" | "authenticated" | "disabled"` (default: authenticated when the server
/// checks tokens) and `"perUser": true` (per-user data: the column `userId`, or the one named by
/// `"userIdColumn"`, is added as a string column with an index and holds each row's owner).
struct SchemaFile: Decodable {
    struct TableDeclaration: Decodable {
        var name: String
        var columns: [Column]
        var indexes: [TableIndex]?
        var synced: Bool?
        var access: TableAccess.Level?
        var perUser: Bool?
        var userIdColumn: String?

        /// The column holding each row's owner, for a per-user table: as the table's columns spell
        /// it when they declare it (names compare in any letter case, rows keep the declared
        /// spelling), else `userIdColumn` or `userId`.
        var ownerColumn: String? {
            guard perUser == true else { return nil }
            let owner = userIdColumn ?? "userId"
            return columns.first { Identifier.folded($0.name) == Identifier.folded(owner) }?.name ?? owner
        }

        var table: TableSchema {
            var columns = columns
            var indexes = indexes ?? []
            if let owner = ownerColumn {
                if !columns.contains(where: { Identifier.folded($0.name) == Identifier.folded(owner) }) {
                    columns.append(Column(owner, .string))
                }
                if !indexes.contains(where: { $0.columns.first == owner }) {
                    indexes.append(TableIndex("\(name)_\(owner)", on: [owner]))
                }
            }
            return TableSchema(name, columns: columns, indexes: indexes, synced: synced ?? true)
        }

        /// The access rule, when the declaration gives one.
        var accessRule: TableAccess? {
            if let owner = ownerColumn { return TableAccess(access ?? .authenticated, ownerColumn: owner) }
            return access.map { TableAccess($0) }
        }
    }

    var tables: [TableDeclaration]

    private enum CodingKeys: String, CodingKey { case tables }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.tables) {
            tables = try container.decode([TableDeclaration].self, forKey: .tables)
        } else {
            tables = [try TableDeclaration(from: decoder)]
        }
    }

    /// Reads and validates a schema file; errors name the file and the field at fault.
    static func load(_ path: String) throws -> StoreSchema {
        try loadServed(path).schema
    }

    /// Reads and validates a schema file with the tables' access rules (for `serve`).
    static func loadServed(_ path: String) throws -> (schema: StoreSchema, access: [String: TableAccess]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OfflineSyncError(.configuration, "cannot read the schema file \(path); check the path")
        }
        return try parseServed(data, path: path)
    }

    /// Decodes and validates the contents of the schema file at `path` (named in errors).
    static func parse(_ data: Data, path: String) throws -> StoreSchema {
        try parseServed(data, path: path).schema
    }

    /// Decodes and validates the schema file and its access rules (named `path` in errors).
    static func parseServed(_ data: Data, path: String) throws -> (schema: StoreSchema, access: [String: TableAccess]) {
        let file: SchemaFile
        do {
            file = try JSONDecoder().decode(SchemaFile.self, from: data)
        } catch let error as DecodingError {
            throw OfflineSyncError(
                .invalidSchema,
                "the schema file \(path) is not valid: \(describe(error)); see 'offline-sync import --help' for the format"
            )
        }
        let schema = StoreSchema(file.tables.map(\.table))
        var access: [String: TableAccess] = [:]
        do {
            try schema.validate()
            for table in file.tables {
                if let owner = table.ownerColumn {
                    try Identifier.validate(owner, kind: "userIdColumn of table '\(table.name)': column")
                    if let declared = table.columns.first(where: {
                        Identifier.folded($0.name) == Identifier.folded(owner)
                    }),
                        declared.type != .string
                    {
                        throw OfflineSyncError(
                            .invalidSchema,
                            "table '\(table.name)' keeps per-user data in column '\(declared.name)', which must be a string, not \(declared.type.rawValue)"
                        )
                    }
                } else if table.userIdColumn != nil {
                    throw OfflineSyncError(
                        .invalidSchema, "table '\(table.name)' names a userIdColumn without \"perUser\": true")
                }
                if let rule = table.accessRule { access[table.name] = rule }
            }
        } catch let error as OfflineSyncError {
            throw OfflineSyncError(error.code, "the schema file \(path): \(error.message)")
        }
        return (schema, access)
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "the top level" : keys
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context)) lacks \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "it is not JSON" }
            if context.codingPath.last?.stringValue == "access" {
                return
                    "\(path(context)): access must be one of \(TableAccess.Level.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))"
            }
            return
                "\(path(context)): \(context.debugDescription) (column types: \(ColumnType.allCases.map(\.rawValue).joined(separator: ", ")))"
        @unknown default:
            return "\(error)"
        }
    }
}
