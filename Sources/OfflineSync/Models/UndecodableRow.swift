/// A stored row that cannot be read as a ``SyncModel``: a non-optional property with no value
/// and no declared default (see ``ModelSchemaOption/default(_:_:)``), or a value of another type.
///
/// A ``ModelTable`` that skips such rows (``UndecodableRowPolicy/skip(reporting:)``) hands each
/// one to the app with its table and id, so the app can log it, repair it through the untyped
/// ``SyncTable``, or purge it.
public struct UndecodableRow: Sendable, Hashable, CustomStringConvertible {
    /// The table of the row.
    public let table: String
    /// The id of the row.
    public let id: String
    /// What could not be read, naming the column (e.g. "column 'priority': item '7' has no value
    /// but the property is not optional (Int)").
    public let reason: String

    /// Creates a report.
    public init(table: String, id: String, reason: String) {
        self.table = table
        self.id = id
        self.reason = reason
    }

    public var description: String { "item '\(id)' of table '\(table)' cannot be read: \(reason)" }
}

/// What typed reads (``ModelTable/read(_:)``, ``ModelTable/lookup(id:)``, ``ModelTable/first(_:)``,
/// observations and ``LiveQuery``) do with a row that cannot be read as the model.
///
/// ```swift
/// let todos = try context.table(TodoItem.self, undecodableRows: .skip { row in
///     print("skipped", row.id, row.reason)
/// })
/// ```
public struct UndecodableRowPolicy: Sendable {
    enum Kind: Sendable {
        case fail
        case skip(@Sendable (UndecodableRow) -> Void)
    }

    let kind: Kind

    /// Throw ``OfflineSyncError/Code-swift.struct/invalidValue`` naming the item and the column
    /// (the default): the read, or the observation, ends.
    public static let fail = UndecodableRowPolicy(kind: .fail)

    /// Leave the row out of the result and call `report` with it (on the task that reads, once
    /// per read that meets it). An observation goes on with the other rows.
    public static func skip(reporting report: @escaping @Sendable (UndecodableRow) -> Void) -> Self {
        Self(kind: .skip(report))
    }
}
