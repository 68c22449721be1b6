/// The kind of write a committed transaction was.
public enum ChangeOrigin: String, Sendable, Hashable, CaseIterable {
    /// An app's insert, update or delete through ``SyncTable``.
    case localEdit
    /// A page of an incremental or full pull.
    case pull
    /// The committed outcome of pushed operations: the server's copies, and what a
    /// ``PushHandler`` decided for a failed operation.
    case pushOutcome
    /// ``SyncContext/resolve(_:_:)`` settling a recorded operation error.
    case resolution
    /// ``SyncContext/purge(table:query:queryId:force:)``.
    case purge
}

/// Which app-table rows one committed transaction of a ``SyncContext`` changed (inserted,
/// replaced or deleted), and what kind of write it was: an element of ``SyncContext/changes(bufferLimit:)``.
///
/// Only app tables appear: writes to the system tables (the operation queue, errors, delta
/// tokens) are never reported, and a transaction that changed no app row (a push marking
/// operations attempted, say) produces no change set.
///
/// When a consumer of the feed falls more than its buffer limit behind, the oldest change sets
/// it has not read are merged into one (``transactionCount`` above 1, several ``origins``), and
/// a merged set that would name more than ``mergedIdLimit`` ids of one table names none of that
/// table (``ids(in:)`` answers `nil`: re-read the table). The same holds for a feed created while
/// a transaction was running: that transaction's set names its tables without ids. Nothing is
/// dropped: every table changed is in ``tables``. Deleting an id that was not stored still
/// reports it.
public struct ChangeSet: Sendable, Hashable {
    /// The position of the (last) transaction in the context's commit order, from 1; consecutive
    /// change sets have consecutive sequences (a merged set covers `sequence - transactionCount + 1
    /// ... sequence`).
    public internal(set) var sequence: UInt64
    /// How many committed transactions this set covers: 1 unless the feed merged sets.
    public internal(set) var transactionCount: Int
    /// The kinds of write covered (one, unless merged).
    public internal(set) var origins: Set<ChangeOrigin>
    /// The app tables changed.
    public internal(set) var tables: Set<String>
    /// The changed ids per table; a table of ``tables`` missing here had too many to keep.
    var changedIds: [String: Set<String>]

    /// The largest number of ids of one table a merged change set keeps.
    public static let mergedIdLimit = 10_000

    init(sequence: UInt64, origin: ChangeOrigin, tables: Set<String>, changedIds: [String: Set<String>]) {
        self.sequence = sequence
        self.transactionCount = 1
        self.origins = [origin]
        self.tables = tables
        self.changedIds = changedIds
    }

    /// The kind of write, when the set covers one transaction (or several of one kind).
    public var origin: ChangeOrigin? { origins.count == 1 ? origins.first : nil }

    /// The ids of `table` that were inserted, replaced or deleted: empty when the table was not
    /// changed, `nil` when it was but a merged set no longer names the ids (re-read the table).
    public func ids(in table: String) -> Set<String>? {
        guard tables.contains(table) else { return [] }
        return changedIds[table]
    }

    /// Folds a later change set into this one.
    mutating func merge(_ later: ChangeSet) {
        sequence = later.sequence
        transactionCount += later.transactionCount
        origins.formUnion(later.origins)
        for table in later.tables {
            let known = tables.contains(table) ? changedIds[table] : []
            tables.insert(table)
            guard let known, let added = later.changedIds[table], known.count + added.count <= Self.mergedIdLimit
            else {
                changedIds[table] = nil
                continue
            }
            changedIds[table] = known.union(added)
        }
    }
}

extension ChangeSet: CustomStringConvertible {
    /// For example `#12 pull todo: 50 ids`.
    public var description: String {
        let kinds = origins.map(\.rawValue).sorted().joined(separator: "+")
        let changes = tables.sorted().map { table in
            changedIds[table].map { "\(table): \($0.count) id\($0.count == 1 ? "" : "s")" } ?? "\(table): many ids"
        }
        let covered = transactionCount == 1 ? "" : " (\(transactionCount) transactions)"
        return "#\(sequence)\(covered) \(kinds) \(changes.joined(separator: ", "))"
    }
}
