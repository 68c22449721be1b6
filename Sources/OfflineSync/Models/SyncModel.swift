/// A `Codable` type whose values are the rows of one synced table.
///
/// ```swift
/// struct TodoItem: SyncModel {
///     var id: String
///     var text: String
///     var complete: Bool
///     var due: Date?
///     var updatedAt: Date?      // a system property: read from the store, never written
/// }
///
/// let schema = try TableSchema(TodoItem.self)          // columns derived from the Codable shape
/// let context = try SyncContext(store: store, remote: remote, tables: [schema])
/// let todos = try context.table(TodoItem.self)
/// try todos.insert(TodoItem(id: "", text: "buy milk", complete: false))
/// let open = try todos.read(.filter(\.complete == false).order(by: \.text))
/// ```
///
/// The model's `id` is the row's id; every other coding key is a column. Columns, their types and
/// which column a key path reads are learnt once per type by decoding probe values (see
/// <doc:TypedModels>), so the shape is declared once, by the type itself. Customise the table
/// name, column types and indexes with the requirements below; all have defaults.
public protocol SyncModel: Codable, Sendable, Identifiable where ID == String {
    /// The table name; by default the type's name.
    static var tableName: String { get }
    /// Column types that differ from the derived ones, secondary indexes, and the values that rows
    /// stored without a property read as (none by default).
    static var schemaOptions: [ModelSchemaOption<Self>] { get }
}

extension SyncModel {
    /// The type's name.
    public static var tableName: String { String(describing: Self.self) }
    /// No options.
    public static var schemaOptions: [ModelSchemaOption<Self>] { [] }
}

/// A change to the schema derived from a ``SyncModel``: a column type, a secondary index, or the
/// value a property reads as in rows stored without it.
public struct ModelSchemaOption<Model: SyncModel>: Sendable {
    enum Kind: Sendable {
        case columnType(ModelKeyPath, ColumnType)
        case index(String, [ModelKeyPath])
        case defaultValue(ModelKeyPath, ModelPredicate<Model>.Operand)
    }

    let kind: Kind

    /// Stores the property at `keyPath` as `type` instead of the derived type: a `String` holding ISO
    /// 8601 text or an integer of milliseconds since 1970 as `.date`, a `String` holding a JSON array
    /// or object as `.json`, an integer as `.double`.
    public static func column<Value>(_ keyPath: KeyPath<Model, Value>, as type: ColumnType) -> Self {
        Self(kind: .columnType(ModelKeyPath(keyPath), type))
    }

    /// Declares a secondary index on the columns of `keyPaths`, most significant first.
    public static func index(_ name: String, on keyPaths: PartialKeyPath<Model>...) -> Self {
        Self(kind: .index(name, keyPaths.map(ModelKeyPath.init)))
    }

    /// Declares the value the property at `keyPath` reads as in a row that holds none: a row
    /// stored before the property was added to the model (by an older app version, or by another
    /// client of the server), or one a server sent without it.
    ///
    /// ```swift
    /// struct TodoItem: SyncModel {
    ///     static let schemaOptions: [ModelSchemaOption<TodoItem>] = [
    ///         .default(\.priority, 0),   // rows stored before `priority` existed read as 0
    ///     ]
    ///     var id: String
    ///     var text: String
    ///     var priority: Int              // added in version 2 of the app
    /// }
    /// ```
    ///
    /// Without it, such a row cannot be read as the model (a non-optional property with no
    /// value). The default is applied when a row is read, typed reads, observations and pulls
    /// alike; it is never written back by itself (the next update of the model writes the value
    /// the model then holds). The value is stored as the property stores its values (an enum as
    /// its raw value, a date as a date); one that cannot be stored is refused with
    /// ``OfflineSyncError/Code-swift.struct/invalidSchema`` naming the property when the model
    /// is first used.
    public static func `default`<Value: Encodable>(_ keyPath: KeyPath<Model, Value>, _ value: Value) -> Self {
        Self(kind: .defaultValue(ModelKeyPath(keyPath), ModelPredicate<Model>.Operand(value)))
    }
}

/// A key path of a model, usable across tasks.
///
/// `@unchecked Sendable`: a key path is an immutable object; the only state it could share is the
/// arguments of subscript components, and a key path with subscripts never names a column (it is
/// rejected when the query or schema is built).
struct ModelKeyPath: @unchecked Sendable, Hashable {
    let keyPath: AnyKeyPath

    init(_ keyPath: AnyKeyPath) {
        self.keyPath = keyPath
    }
}

extension TableSchema {
    /// The schema of a model's table, derived from its `Codable` shape (see ``SyncModel``): one
    /// column per coding key other than `id` and the system properties, typed by the Swift type
    /// the model decodes for it, changed by the model's ``SyncModel/schemaOptions``.
    ///
    /// - Parameters:
    ///   - model: the model type.
    ///   - name: the table name; ``SyncModel/tableName`` by default.
    /// - Throws: ``OfflineSyncError/Code-swift.struct/invalidSchema`` naming the property when a
    ///   column cannot be derived (see <doc:TypedModels>).
    public init<Model: SyncModel>(_ model: Model.Type, name: String? = nil) throws {
        let layout = try ModelLayout<Model>.shared()
        self = try layout.schema(name: name ?? Model.tableName)
    }
}
