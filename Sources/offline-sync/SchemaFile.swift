import Foundation
import OfflineSync

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
struct SchemaFile: Decodable {
    struct TableDeclaration: Decodable {
        var name: String
        var columns: [Column]
        var indexes: [TableIndex]?
        var synced: Bool?

        var table: TableSchema {
            TableSchema(name, columns: columns, indexes: indexes ?? [], synced: synced ?? true)
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
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OfflineSyncError(.configuration, "cannot read the schema file \(path); check the path")
        }
        return try parse(data, path: path)
    }

    /// Decodes and validates the contents of the schema file at `path` (named in errors).
    static func parse(_ data: Data, path: String) throws -> StoreSchema {
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
        do {
            try schema.validate()
        } catch let error as OfflineSyncError {
            throw OfflineSyncError(error.code, "the schema file \(path): \(error.message)")
        }
        return schema
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
            return
                "\(path(context)): \(context.debugDescription) (column types: \(ColumnType.allCases.map(\.rawValue).joined(separator: ", ")))"
        @unknown default:
            return "\(error)"
        }
    }
}
