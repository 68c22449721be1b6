/// One app table seen through a ``SyncContext`` (Azure's `MSSyncTable`): reads and writes go to
/// the local store, and every write queues the operation that will push it.
///
/// Each write reads the item's queued operation and writes the item and the operation in one
/// store transaction (an insert reads nothing first: it inserts both with
/// ``StoreTransaction/insertNew(_:into:origin:)``, since an existing item or any queued operation
/// refuses it). The queue keeps one operation per item, collapsing edits:
///
/// | queued \ new | insert | update | delete |
/// |---|---|---|---|
/// | insert | error | insert (new item) | both removed¹ |
/// | update | error | update | delete (item kept) |
/// | delete | error | error | error |
///
/// ¹ If a push already attempted the insert, the server may hold the item, so a delete is queued
/// instead (a 404 answer counts as done) — nothing is left behind on the server.
/// An operation being pushed is never changed: an edit made meanwhile is queued behind it.
public struct SyncTable: Sendable {
    /// The table name.
    public let name: String
    /// The context the table belongs to.
    public let context: SyncContext

    init(name: String, context: SyncContext) {
        self.name = name
        self.context = context
    }

    /// Inserts an item and queues its insert; an empty id is replaced by a new UUID. Returns the
    /// item as stored. An id that already exists throws ``OfflineSyncError/Code-swift.struct/conflict``.
    @discardableResult
    public func insert(_ item: Item) throws -> Item {
        try insert([item])[0]
    }

    /// Inserts items in one transaction (all or none) and queues their inserts.
    @discardableResult
    public func insert(_ items: [Item]) throws -> [Item] {
        // Copied only when an id is to be made up (a copy retains every row's storage again).
        guard items.contains(where: { $0.id.isEmpty }) else { return try edit(.insert, items) }
        return try edit(.insert, items.map { $0.id.isEmpty ? $0.identified(as: UUIDText.random()) : $0 })
    }

    /// Writes an item whether or not it exists: updates it (as ``update(_:)-(Item)`` does) when
    /// the table holds it, inserts it (as ``insert(_:)-(Item)`` does) otherwise, and queues the
    /// matching operation; an empty id is replaced by a new UUID. Returns the item as stored. An id
    /// whose delete is still queued throws ``OfflineSyncError/Code-swift.struct/invalidOperation``,
    /// as an insert would.
    @discardableResult
    public func upsert(_ item: Item) throws -> Item {
        try upsert([item])[0]
    }

    /// Upserts items in one transaction (all or none), each as ``upsert(_:)-(Item)`` does.
    @discardableResult
    public func upsert(_ items: [Item]) throws -> [Item] {
        try edit(.upsert, items.map { $0.id.isEmpty ? $0.identified(as: UUIDText.random()) : $0 })
    }

    /// Upserts items as ``upsert(_:)-([Item])`` does, keeping, for the ones that exist, every
    /// stored column outside `known` (see ``update(_:keepingColumnsOutside:)``).
    func upsert(_ items: [Item], keepingColumnsOutside known: Set<String>) throws -> [Item] {
        try edit(.upsert, items.map { $0.id.isEmpty ? $0.identified(as: UUIDText.random()) : $0 }, keepingColumnsOutside: known)
    }

    /// Replaces an existing item and queues its update. System properties the item lacks
    /// (`version` above all, the `If-Match` of the push) are kept from the stored copy.
    /// A missing id throws ``OfflineSyncError/Code-swift.struct/conflict``.
    public func update(_ item: Item) throws {
        try update([item])
    }

    /// Replaces existing items in one transaction (all or none) and queues their updates.
    public func update(_ items: [Item]) throws {
        _ = try edit(.update, items)
    }

    /// Replaces existing items as `update(_:)` does, and also keeps every stored column
    /// outside `known` (the columns a typed model does not hold, so an update through the model
    /// cannot erase them).
    func update(_ items: [Item], keepingColumnsOutside known: Set<String>) throws {
        _ = try edit(.update, items, keepingColumnsOutside: known)
    }

    /// Deletes an existing item and queues its delete (with the deleted item, whose `version` is
    /// the `If-Match`). A missing id throws ``OfflineSyncError/Code-swift.struct/conflict``.
    public func delete(id: String) throws {
        try delete(ids: [id])
    }

    /// Deletes existing items in one transaction (all or none) and queues their deletes.
    public func delete(ids: [String]) throws {
        _ = try edit(.delete, ids.map { Item(id: $0) })
    }

    /// The local item with this id, or `nil`.
    public func lookup(id: String) throws -> Item? {
        try context.store.lookup(table: name, id: id)
    }

    /// Reads local items (the query's table must be this table; `nil` reads every item).
    public func read(_ query: Query? = nil) throws -> QueryResult {
        let query = query ?? Query(table: name)
        guard query.table == name else {
            throw OfflineSyncError(.invalidQuery, "a query on '\(query.table)' was given to table '\(name)'")
        }
        return try context.store.read(query)
    }

    /// The number of queued operations of this table.
    public func pendingOperationCount() throws -> Int {
        try context.pendingOperationCount(table: name)
    }

    /// Applies a local edit of `items` in one transaction of its own (see
    /// ``edit(_:_:keepingColumnsOutside:in:)``); an insert takes the path that reads nothing first.
    func edit(_ edit: LocalEdit, _ items: [Item], keepingColumnsOutside known: Set<String>? = nil)
        throws -> [Item]
    {
        guard !items.isEmpty else { return [] }
        if edit == .insert { return try insertNew(items) }
        return try context.write(.localEdit) { transaction in
            try self.edit(edit, items, keepingColumnsOutside: known, in: transaction)
        }
    }

    /// Applies a local edit of `items` inside the caller's write transaction (of
    /// ``SyncContext/write(_:_:)``): writes each item and queues its operation, collapsed into the
    /// item's pending one by the rules in the type's table. An upsert is an update of an item that
    /// exists and an insert of one that does not. Returns the items as written (a delete: as they
    /// were stored).
    ///
    /// - Parameter known: for updates, keep every stored column outside this set (the columns a
    ///   typed model does not hold, so an update through the model cannot erase them).
    func edit(
        _ edit: LocalEdit, _ items: [Item], keepingColumnsOutside known: Set<String>?,
        in transaction: any StoreTransaction
    ) throws -> [Item] {
        guard !items.isEmpty else { return [] }
        let queue = context.queue
        let table = name
        var sequence = try queue.reserveSequences(items.count, in: transaction)
        let now = Timestamp.now()
        let ids = items.map(\.id)
        let storedItems = try transaction.rows(withIds: ids, in: table)
        let primaries = try queue.operations(table: table, itemIds: ids, in: transaction)
        var seen = Set<String>()
        var written: [Item] = []
        written.reserveCapacity(items.count)
        var operations: [Item] = []
        operations.reserveCapacity(items.count)
        for item in items {
            guard seen.insert(item.id).inserted else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "item '\(item.id)' appears twice in one \(edit.rawValue) of table '\(table)'; write it once")
            }
            let stored = storedItems[IdKey(item.id)]
            let kind: OperationKind
            switch edit {
            case .insert: kind = .insert
            case .update: kind = .update
            case .delete: kind = .delete
            case .upsert: kind = stored == nil ? .insert : .update
            }
            switch kind {
            case .insert:
                if stored != nil {
                    throw OfflineSyncError(
                        .conflict,
                        "table '\(table)' already has an item with id '\(item.id)'; use update or upsert to change it")
                }
                written.append(item)
            case .update:
                guard let stored else {
                    throw OfflineSyncError(
                        .conflict,
                        "table '\(table)' has no item with id '\(item.id)' to update; insert or upsert it first")
                }
                var merged = item
                for property in [SystemProperty.version, .createdAt, .updatedAt]
                where !merged.hasValue(forColumn: property.rawValue)
                    && stored.hasValue(forColumn: property.rawValue)
                {
                    merged[property.rawValue] = stored[property.rawValue]
                }
                if let known {
                    for (column, value) in stored.values
                    where !known.contains(column) && merged.values[column] == nil {
                        merged.values[column] = value
                    }
                }
                written.append(merged)
            case .delete:
                guard let stored else {
                    throw OfflineSyncError(.conflict, "table '\(table)' has no item with id '\(item.id)' to delete")
                }
                written.append(stored)
            }
            try queue.enqueue(
                kind, table: table, itemId: item.id, deletedItem: kind == .delete ? stored : nil,
                primary: primaries[IdKey(item.id)], sequence: &sequence, now: now, rows: &operations,
                in: transaction)
        }
        if !operations.isEmpty { try transaction.upsert(operations, into: SystemTables.operations, origin: .local) }
        if edit == .delete {
            try transaction.delete(ids: written.map(\.id), from: table)
        } else {
            try transaction.upsert(written, into: table, origin: .local)
        }
        return written
    }
}

/// A local edit of a table's items: what ``SyncTable``'s and ``ModelTable``'s write methods and
/// ``WriteTransaction`` do, each queuing the matching operation.
enum LocalEdit: String {
    case insert, update, upsert, delete
}

extension SyncTable {
    /// How many queue rows an insert hands the store at a time.
    static let operationChunk = 256

    /// Inserts new items and queues their inserts without reading anything first.
    ///
    /// An insert is refused when the item exists and when the item has any queued operation (by
    /// the rules in the type's table, every queued kind rejects an insert), so nothing needs to be
    /// read to decide: the items and their operation rows (each in the item's primary queue slot)
    /// are inserted with ``StoreTransaction/insertNew(_:into:origin:)``, which reports the ids
    /// already there, and only then is the refusal explained (the operation found is read to name
    /// it). On the SQL backends this is one `INSERT` per item and per operation, where the general
    /// edit path reads the item and its queue slot first.
    fileprivate func insertNew(_ items: [Item]) throws -> [Item] {
        let queue = context.queue
        let table = name
        return try context.write(.localEdit) { transaction in
            var sequence = try queue.reserveSequences(items.count, in: transaction)
            let now = Timestamp.now()
            // An id given twice is reported by the store like one already there (the second
            // copy finds the first); told apart only then, instead of hashing every id up front.
            if let existing = try transaction.insertNew(items, into: table, origin: .local).first {
                throw refusal(of: existing, occurrences: items.lazy.filter({ $0.id == existing }).count)
            }
            queue.changing()
            var rows: [Item] = []
            var start = items.startIndex
            while start < items.endIndex {
                let end = min(start + SyncTable.operationChunk, items.endIndex)
                try queueInserts(
                    of: items[start..<end], through: &rows, sequence: &sequence, now: now, in: transaction)
                start = end
            }
            return items
        }
    }

    /// Inserts `count` new items and queues their inserts, as ``insertNew(_:)`` does, with the
    /// items made a chunk at a time by `fill`: it is given the positions of the next chunk and
    /// the rows of the previous one, to rewrite into the chunk's items in place (reusing their
    /// storage, where a whole batch of rows would be allocated and freed). Every id must be given
    /// (not empty).
    func insertNew(count: Int, fill: (_ positions: Range<Int>, _ rows: inout [Item]) throws -> Void) throws {
        let queue = context.queue
        let table = name
        try context.write(.localEdit) { transaction in
            var sequence = try queue.reserveSequences(count, in: transaction)
            let now = Timestamp.now()
            queue.changing()
            var items: [Item] = []
            var operations: [Item] = []
            var start = 0
            while start < count {
                let end = min(start + SyncTable.operationChunk, count)
                try fill(start..<end, &items)
                if let existing = try transaction.insertNew(items, into: table, origin: .local).first {
                    // An id given twice is told from one already stored only now, by making the
                    // earlier chunks' items again (`fill` makes the same items for the same
                    // positions), instead of keeping every id inserted so far.
                    var occurrences = items.lazy.filter({ $0.id == existing }).count
                    var earlier: [Item] = []
                    var position = 0
                    while position < start {
                        let chunkEnd = min(position + SyncTable.operationChunk, start)
                        try fill(position..<chunkEnd, &earlier)
                        occurrences += earlier.lazy.filter({ $0.id == existing }).count
                        position = chunkEnd
                    }
                    throw refusal(of: existing, occurrences: occurrences)
                }
                try queueInserts(of: items, through: &operations, sequence: &sequence, now: now, in: transaction)
                start = end
            }
        }
    }

    /// The error of an insert whose item `existing` was found in the table: given `occurrences`
    /// times in the insert, or already stored.
    private func refusal(of existing: String, occurrences: Int) -> OfflineSyncError {
        if occurrences > 1 {
            return OfflineSyncError(
                .invalidOperation, "item '\(existing)' appears twice in one insert of table '\(name)'; write it once")
        }
        return OfflineSyncError(
            .conflict, "table '\(name)' already has an item with id '\(existing)'; use update to change it")
    }

    /// Queues the inserts of `items` (at most ``operationChunk``, just inserted) in their items'
    /// primary slots, through `rows`: the queue rows of the previous chunk, rewritten in place
    /// (see OperationQueue.refillInsertRow) rather than one new row per item; every call passes the same
    /// `now` and the rows it was given back, so a reused row differs only in id, sequence and item id.
    private func queueInserts(
        of items: some RandomAccessCollection<Item>, through rows: inout [Item], sequence: inout Int64,
        now: Timestamp, in transaction: any StoreTransaction
    ) throws {
        let queue = context.queue
        let table = name
        if rows.count > items.count { rows.removeLast(rows.count - items.count) }
        var offset = 0
        // By index, reading only the id (iterating would copy each item out, a retain per part).
        for index in items.indices {
            let itemId = items[index].id
            if offset < rows.count {
                queue.refillInsertRow(&rows[offset], table: table, itemId: itemId, sequence: &sequence)
            } else {
                rows.append(
                    try queue.newOperationRow(.insert, table: table, itemId: itemId, sequence: &sequence, now: now))
            }
            offset += 1
        }
        let queued = try transaction.insertNew(rows, into: SystemTables.operations, origin: .local)
        if let key = queued.first {
            if let offset = rows.firstIndex(where: { $0.id == key }) {
                try queue.rejectInsert(
                    table: table, itemId: items[items.index(items.startIndex, offsetBy: offset)].id, in: transaction)
            }
            throw OfflineSyncError(
                .conflict,
                "an item of table '\(table)' already has a queued operation; push it before inserting the id again"
            )
        }
    }
}

/// Random (version 4) UUIDs as text, without Foundation.
package enum UUIDText {
    package static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { byte -> String in
            let text = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + text : text
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(
            separator: "-")
    }
}
