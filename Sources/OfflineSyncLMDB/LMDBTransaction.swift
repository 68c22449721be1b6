import CLMDB
import OfflineSync

/// The ``OfflineSync/StoreTransaction`` of an ``LMDBStore``: one LMDB write transaction.
///
/// Upserts write the record under its id and keep every declared index of the table in step
/// (old keys removed, new keys written) in the same transaction, so indexes never disagree
/// with the rows they point to. Once the closure it was handed to has returned, the
/// transaction refuses every call instead of touching freed LMDB memory.
final class LMDBTransaction: StoreTransaction {
    private let context: TransactionContext
    private let catalog: Catalog
    private var isFinished = false

    init(context: TransactionContext, catalog: Catalog) {
        self.context = context
        self.catalog = catalog
    }

    /// Ends the transaction's validity (called when the write closure returns or throws).
    func finish() {
        isFinished = true
    }

    func read(_ query: Query) throws -> QueryResult {
        try reader(query.table).run(query)
    }

    func lookup(table: String, id: String) throws -> Item? {
        try reader(table).lookup(id)
    }

    func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
        let layout = try layout(table)
        let schema = layout.schema, ordinals = layout.ordinals, rows = layout.items
        guard !layout.indexes.isEmpty else {
            // No index to maintain, so no normalised item is needed: the record is written
            // straight from the core's checked values, in one walk of each item.
            var writer = RecordWriter()
            for item in items {
                writer.begin()
                try schema.forEachStoredValue(of: item, origin: origin) { writer.append(ordinal: $0, $1) }
                try put(rows, id: item.id, writer)
            }
            return
        }
        var writer = RecordWriter()
        for item in items {
            let row = try schema.normalize(item, origin: origin)
            RecordCodec.encode(row, columns: ordinals, into: &writer)
            let previous = try TableReader(context: context, layout: layout).lookup(row.id)
            try reindex(layout, from: previous, to: row)
            try put(rows, id: row.id, writer)
        }
    }

    /// Stores `record` under `id` in the items sub-database `rows`.
    private func put(_ rows: MDB_dbi, id: String, _ record: borrowing RecordWriter) throws {
        var id = id
        try id.withUTF8 { key in
            try record.withBytes { try context.put(rows, UnsafeRawBufferPointer(key), $0) }
        }
    }

    func delete(ids: [String], from table: String) throws {
        let layout = try layout(table)
        let reader = TableReader(context: context, layout: layout)
        for id in ids {
            guard (1...QueryPlan.maximumIdBytes).contains(id.utf8.count) else { continue }
            if !layout.indexes.isEmpty {
                guard let previous = try reader.lookup(id) else { continue }
                try reindex(layout, from: previous, to: nil)
            }
            try Array(id.utf8).withUnsafeBytes { _ = try context.delete(layout.items, $0) }
        }
    }

    func delete(matching query: Query) throws -> Int {
        let ids = try read(Query(table: query.table, filter: query.filter, orderBy: query.orderBy,
                                 skip: query.skip, top: query.top, selection: [])).items.map(\.id)
        try delete(ids: ids, from: query.table)
        return ids.count
    }

    /// Replaces the index keys of `old` with those of `new` (either may be absent).
    private func reindex(_ layout: TableLayout, from old: Item?, to new: Item?) throws {
        for index in layout.indexes {
            let oldKey = old.map(index.key(for:))
            let newKey = new.map(index.key(for:))
            guard oldKey != newKey else { continue }
            if let oldKey {
                try oldKey.withUnsafeBytes { _ = try context.delete(index.dbi, $0) }
            }
            if let newKey, let new {
                try newKey.withUnsafeBytes { key in
                    try Array(new.id.utf8).withUnsafeBytes { try context.put(index.dbi, key, $0) }
                }
            }
        }
    }

    private func layout(_ name: String) throws -> TableLayout {
        guard !isFinished else {
            throw OfflineSyncError(.invalidOperation, "an LMDB store transaction was used after its write closure returned; use the transaction only inside the closure")
        }
        return try catalog.table(name)
    }

    private func reader(_ table: String) throws -> TableReader {
        TableReader(context: context, layout: try layout(table))
    }
}
