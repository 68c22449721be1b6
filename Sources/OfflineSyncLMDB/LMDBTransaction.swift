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
        let schema = layout.schema
        let rows = layout.items
        var writer = RecordWriter()
        var order = TableSchema.StoredValueOrder()
        guard !layout.indexes.isEmpty else {
            // No index to maintain, so nothing of the old row is needed: the record is written
            // straight from the core's checked values, in one walk of each item.
            for item in items {
                writer.begin()
                try schema.forEachStoredValue(of: item, origin: origin, order: &order) { writer.append(ordinal: $0, $1) }
                try put(rows, id: item.id, writer)
            }
            return
        }
        // The same walk also keeps the values the indexes read (by slot); of the old row only
        // those values are decoded, so no whole item is built on either side.
        let slots = layout.indexSlots
        var keys = IndexKeys(layout)
        for item in items {
            writer.begin()
            keys.clearNew()
            try schema.forEachStoredValue(of: item, origin: origin, order: &order) { ordinal, value in
                writer.append(ordinal: ordinal, value)
                let slot = slots[ordinal]
                if slot >= 0 { keys.new[slot] = value }
            }
            let hadRow = try readIndexedValues(of: item.id, layout, into: &keys.old)
            try reindex(layout, id: item.id, &keys, removingOld: hadRow, addingNew: true)
            try put(rows, id: item.id, writer)
        }
    }

    /// Each row is encoded (which validates it), then stored with `MDB_NOOVERWRITE` and, when
    /// that finds its id free, given its index keys: one descent of the B-tree per row and no
    /// decoding, where a lookup and an upsert would decode the stored row and read it again for
    /// its old index keys.
    func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
        let layout = try layout(table)
        let schema = layout.schema
        let slots = layout.indexSlots
        let indexed = !layout.indexes.isEmpty
        var writer = RecordWriter()
        var keys = IndexKeys(layout)
        var present: [String] = []
        var order = TableSchema.StoredValueOrder()
        // Through the buffer, which lends each item where iterating would copy it out (a
        // retain and a release of each of its parts).
        try items.withUnsafeBufferPointer { items in
            for index in items.indices {
                writer.begin()
                keys.clearNew()
                try schema.forEachStoredValue(of: items[index], origin: origin, order: &order) { ordinal, value in
                    writer.append(ordinal: ordinal, value)
                    if indexed, slots[ordinal] >= 0 { keys.new[slots[ordinal]] = value }
                }
                var key = items[index].id
                let stored = try key.withUTF8 { key in
                    try writer.withBytes { try context.putIfAbsent(layout.items, UnsafeRawBufferPointer(key), $0) }
                }
                guard stored else {
                    present.append(key)
                    continue
                }
                if indexed { try reindex(layout, id: key, &keys, removingOld: false, addingNew: true) }
            }
        }
        return present
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
        var keys = IndexKeys(layout)
        for id in ids {
            guard (1...QueryPlan.maximumIdBytes).contains(id.utf8.count) else { continue }
            if !layout.indexes.isEmpty {
                guard try readIndexedValues(of: id, layout, into: &keys.old) else { continue }
                try reindex(layout, id: id, &keys, removingOld: true, addingNew: false)
            }
            var key = id
            try key.withUTF8 { _ = try context.delete(layout.items, UnsafeRawBufferPointer($0)) }
        }
    }

    func delete(matching query: Query) throws -> Int {
        if query.filter == nil, query.skip == 0, query.top == nil {
            // Every row: empty the table's sub-databases with `mdb_drop`, which frees their pages
            // without visiting a single row.
            let layout = try layout(query.table)
            try query.validate(against: layout.schema)
            let count = try context.entryCount(layout.items)
            try context.empty(layout.items)
            for index in layout.indexes { try context.empty(index.dbi) }
            return count
        }
        let ids = try read(
            Query(
                table: query.table, filter: query.filter, orderBy: query.orderBy,
                skip: query.skip, top: query.top, selection: [])
        ).items.map(\.id)
        try delete(ids: ids, from: query.table)
        return ids.count
    }

    /// The indexed values (by slot) of a row's old and new version, and the key buffers built
    /// from them, kept from one row to the next so that maintaining indexes allocates only
    /// for values that do (strings).
    private struct IndexKeys {
        var old: [Value]
        var new: [Value]
        var oldKey: [UInt8] = []
        var newKey: [UInt8] = []

        init(_ layout: TableLayout) {
            old = .nulls(count: layout.indexedColumnCount)
            new = old
        }

        mutating func clearNew() {
            for slot in new.indices { new[slot] = .null }
        }
    }

    /// Reads into `values` the indexed values of the stored row `id` (a valid id); `false`
    /// when there is no such row.
    private func readIndexedValues(of id: String, _ layout: TableLayout, into values: inout [Value]) throws -> Bool {
        var key = id
        let outcome: Bool? = try key.withUTF8 { key in
            guard let record = try context.get(layout.items, UnsafeRawBufferPointer(key)) else { return false }
            for slot in values.indices { values[slot] = .null }
            return RecordCodec.decode(record, slots: layout.indexSlots, into: &values) ? true : nil
        }
        guard let outcome else {
            throw LMDBError.corrupt(
                "the record of id '\(String.quotedForError(id.utf8))' is malformed", table: layout.schema.name,
                path: context.path)
        }
        return outcome
    }

    /// Replaces, in every index, the key of row `id` built from `keys.old` (when `removingOld`)
    /// with the one built from `keys.new` (when `addingNew`); an unchanged key is left alone.
    private func reindex(
        _ layout: TableLayout, id: String, _ keys: inout IndexKeys,
        removingOld: Bool, addingNew: Bool
    ) throws {
        var idBytes = id
        // Through the buffer, which lends each index where iterating would copy it out (a
        // retain and a release of each of its arrays, per row).
        try idBytes.withUTF8 { idBytes in
            try layout.indexes.withUnsafeBufferPointer { indexes in
                for position in indexes.indices {
                    try reindex(
                        indexes[position], id: id, idBytes, &keys, removingOld: removingOld, addingNew: addingNew)
                }
            }
        }
    }

    /// ``reindex(_:id:_:removingOld:addingNew:)`` in one index.
    @inline(__always)
    private func reindex(
        _ index: borrowing IndexLayout, id: String, _ idBytes: UnsafeBufferPointer<UInt8>,
        _ keys: inout IndexKeys, removingOld: Bool, addingNew: Bool
    ) throws {
        if addingNew { index.write(&keys.newKey, id: id, values: keys.new) }
        if removingOld {
            index.write(&keys.oldKey, id: id, values: keys.old)
            if addingNew, keys.oldKey == keys.newKey { return }
            try keys.oldKey.withUnsafeBytes { _ = try context.delete(index.dbi, $0) }
        }
        if addingNew {
            try keys.newKey.withUnsafeBytes { try context.put(index.dbi, $0, UnsafeRawBufferPointer(idBytes)) }
        }
    }

    private func layout(_ name: String) throws -> TableLayout {
        guard !isFinished else {
            throw OfflineSyncError(
                .invalidOperation,
                "an LMDB store transaction was used after its write closure returned; use the transaction only inside the closure"
            )
        }
        return try catalog.table(name)
    }

    private func reader(_ table: String) throws -> TableReader {
        TableReader(context: context, layout: try layout(table))
    }
}
