import Synchronization

/// The operation queue's rules, applied inside the caller's store transaction.
///
/// Each item has at most one queued operation, kept at the row id `=table|itemId` (the
/// *primary* slot), so finding it is a lookup by id on every backend. While the primary
/// operation is being pushed it is never changed; an edit made meanwhile goes to the
/// *follow-up* slot `+table|itemId`. When the push of the primary operation ends, the follow-up
/// takes its place (success) or is collapsed into it (failure), so outside a push no item has two
/// operations. Ids too long for a row id (`table|itemId` over 254 bytes) are keyed by a 128-bit
/// hash of the item id, and every lookup checks the stored table and item id.
final class OperationQueue: Sendable {
    /// Which of an item's two queue rows.
    enum Slot: String {
        case primary = "="
        case followUp = "+"
    }

    /// The row ids of the operations a push has begun and not yet settled (one chunk of up to
    /// 64). Edits read it inside their store transaction; push adds and removes ids inside its
    /// own, so both see one order.
    let inFlight = Locked<Set<String>>([])

    /// The row ids of in-flight operations that an edit queued a follow-up behind (see
    /// ``Slot/followUp``). Edits add to it inside their store transaction, so when push commits
    /// an outcome, an operation missing from it has no follow-up and is settled without a
    /// lookup; one in it takes the path that reads and folds the follow-up.
    let followedUp = Locked<Set<String>>([])

    /// The highest sequence number a push has begun sending (0 before the first push).
    ///
    /// Every operation at or below it counts as attempted (see ``OperationState/attempted``):
    /// push sends in sequence order and raises the mark, in the transaction that puts a chunk in
    /// flight, to the last sequence of the chunk, and sequence numbers only grow, so an operation
    /// queued later is always above it. Keeping one number instead of rewriting each operation's
    /// row spares a write per pushed operation; the mark can only err on the safe side (an
    /// operation of an aborted chunk counts as attempted, so a local delete of its insert is still
    /// sent). Kept in ``SystemTables/config`` under ``attemptedKey``.
    let attemptedThrough: Locked<Int64>

    /// Counts the write transactions that changed queue rows other than through push's own
    /// bulk path (edits, settling, completing with a follow-up, resolutions, purges), bumped
    /// inside each of them. Push reads a batch of operations and this count in one write
    /// transaction; a later transaction that finds the count unchanged knows, because the store
    /// runs write transactions one at a time, that the batch still matches the queue and need not
    /// read it again. A bump by a transaction that then rolls back only costs a re-read.
    let generation = Locked<UInt64>(0)

    /// Records, inside the caller's write transaction, that queue rows change (see ``generation``).
    func changing() {
        generation.withLock { $0 &+= 1 }
    }

    /// The store's schema, to read the items kept in the queue with their declared types.
    let schema: StoreSchema

    init(schema: StoreSchema, attemptedThrough: Int64) {
        self.schema = schema
        self.attemptedThrough = Locked(attemptedThrough)
    }

    /// The `__config` key of ``attemptedThrough``.
    static let attemptedKey = "operationsAttemptedThrough"

    /// The attempted mark stored in `store` (0 when no push ever ran).
    static func attemptedThrough(in store: any LocalStore) throws -> Int64 {
        guard try store.schema.table(named: SystemTables.config) != nil,
            let row = try store.lookup(table: SystemTables.config, id: attemptedKey)
        else { return 0 }
        return row[SystemTables.ConfigColumn.value].stringValue.flatMap { Int64($0) } ?? 0
    }

    /// Raises the attempted mark to `sequence` inside the caller's transaction (never lowers it).
    func markAttempted(through sequence: Int64, in transaction: any StoreTransaction) throws {
        guard sequence > attemptedThrough.withLock({ $0 }) else { return }
        try transaction.upsert(
            [
                Item(
                    id: OperationQueue.attemptedKey,
                    values: [SystemTables.ConfigColumn.value: .string(String(sequence))])
            ],
            into: SystemTables.config, origin: .local)
        attemptedThrough.withLock { $0 = max($0, sequence) }
    }

    /// The operation stored in `row`, its state taking the attempted mark into account.
    func decode(_ row: Item) throws -> QueuedOperation {
        try QueuedOperation(row: row, schema: schema, attemptedThrough: attemptedThrough.withLock { $0 })
    }

    static func key(table: String, itemId: String, slot: Slot) -> String {
        let length = 2 + table.utf8.count + itemId.utf8.count
        guard length <= TableSchema.maximumIdLength else {
            return slot.rawValue + "#" + table + "|" + hash128(itemId)
        }
        // Written byte by byte into one allocation (appending the parts costs a capacity and
        // uniqueness check per part), since every queued edit and pushed operation computes it.
        var table = table
        var itemId = itemId
        return table.withUTF8 { table in
            itemId.withUTF8 { itemId in
                String(unsafeUninitializedCapacity: length) { bytes in
                    bytes[0] = slot == .primary ? UInt8(ascii: "=") : UInt8(ascii: "+")
                    var end = 1
                    if let base = table.baseAddress {
                        UnsafeMutableRawPointer(bytes.baseAddress! + end).copyMemory(from: base, byteCount: table.count)
                    }
                    end += table.count
                    bytes[end] = UInt8(ascii: "|")
                    end += 1
                    if let base = itemId.baseAddress {
                        UnsafeMutableRawPointer(bytes.baseAddress! + end).copyMemory(
                            from: base, byteCount: itemId.count)
                    }
                    return end + itemId.count
                }
            }
        }
    }

    /// Two FNV-1a 64-bit hashes with different offset bases, as 32 hex digits.
    static func hash128(_ text: String) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x6c62_272e_07bb_0142
        for byte in text.utf8 {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(first) + hex(second)
    }

    /// The operation in one slot of an item, checked to belong to that item.
    func operation(table: String, itemId: String, slot: Slot, in transaction: any StoreTransaction) throws
        -> QueuedOperation?
    {
        let key = OperationQueue.key(table: table, itemId: itemId, slot: slot)
        guard let row = try transaction.lookup(table: SystemTables.operations, id: key) else { return nil }
        return try checked(row, table: table, itemId: itemId)
    }

    /// The operations in one slot (the primary one unless told) of many items of one table, keyed
    /// by item id bytes, read by id in one call and checked like ``operation(table:itemId:slot:in:)``.
    func operations(
        table: String, itemIds: [String], slot: Slot = .primary, in transaction: any StoreTransaction
    ) throws -> [IdKey: QueuedOperation] {
        let keys = itemIds.map { OperationQueue.key(table: table, itemId: $0, slot: slot) }
        let rows = try transaction.rows(withIds: keys, in: SystemTables.operations)
        var operations: [IdKey: QueuedOperation] = [:]
        for (key, itemId) in zip(keys, itemIds) {
            guard let row = rows[IdKey(key)] else { continue }
            operations[IdKey(itemId)] = try checked(row, table: table, itemId: itemId)
        }
        return operations
    }

    /// The operation stored in `row`, which must belong to this item (a long id hashes to its key).
    private func checked(_ row: Item, table: String, itemId: String) throws -> QueuedOperation {
        let operation = try decode(row)
        guard operation.table == table, operation.itemId == itemId else {
            throw OfflineSyncError(
                .conflict,
                "item '\(itemId.prefix(40))…' of table '\(table)' hashes to the same queue key as item '\(operation.itemId.prefix(40))…' of '\(operation.table)'; use shorter ids (table name plus id up to 254 bytes never hash)"
            )
        }
        return operation
    }

    /// The `__config` key of the last sequence number handed out.
    static let sequenceKey = "operationSequence"

    /// Reserves `count` sequence numbers inside the caller's transaction and returns the first.
    ///
    /// The last number handed out is kept in ``SystemTables/config`` and advanced in the same
    /// transaction as the operations that use it, so numbers only grow, across tables and across
    /// reopening, and a rolled-back edit gives its numbers back. The first use derives it from
    /// the largest sequence stored in the queue.
    func reserveSequences(_ count: Int, in transaction: any StoreTransaction) throws -> Int64 {
        typealias C = SystemTables.ConfigColumn
        let last: Int64
        if let row = try transaction.lookup(table: SystemTables.config, id: OperationQueue.sequenceKey),
            let text = row[C.value].stringValue, let value = Int64(text)
        {
            last = value
        } else {
            let newest = try transaction.read(
                Query(
                    table: SystemTables.operations,
                    orderBy: [SortKey(SystemTables.OperationColumn.sequence, descending: true)],
                    top: 1, selection: [SystemTables.OperationColumn.sequence]))
            last = newest.items.first?[SystemTables.OperationColumn.sequence].intValue ?? 0
        }
        guard last <= Int64.max - Int64(count) else {
            throw OfflineSyncError(.storage, "the operation queue's sequence number is exhausted (\(last))")
        }
        let end = last + Int64(count)
        try transaction.upsert(
            [Item(id: OperationQueue.sequenceKey, values: [C.value: .string(String(end))])],
            into: SystemTables.config, origin: .local)
        return last + 1
    }

    /// Queues one local edit, collapsing it into the item's pending operation by the rules of
    /// ``SyncTable``. `primary` is the item's operation in the primary slot, read by the caller
    /// (see ``operations(table:itemIds:slot:in:)``). `sequence` is the next free number; it is
    /// advanced when a row is created. The operation rows to write are appended to `rows`, which the caller upserts into
    /// ``SystemTables/operations`` in the same transaction, in one call for a whole batch (an
    /// edit of several items touches each item's rows once, so deferring them changes no read).
    func enqueue(
        _ kind: OperationKind, table: String, itemId: String, deletedItem: Item?,
        primary: QueuedOperation?, sequence: inout Int64, now: Timestamp, rows: inout [Item],
        in transaction: any StoreTransaction
    ) throws {
        changing()
        let followUp =
            primary == nil ? nil : try operation(table: table, itemId: itemId, slot: .followUp, in: transaction)
        guard let latest = followUp ?? primary else {
            rows.append(
                try create(
                    kind, table: table, itemId: itemId, item: deletedItem, slot: .primary, sequence: &sequence, now: now
                ))
            return
        }
        try OperationQueue.validate(existing: latest.kind, new: kind, table: table, itemId: itemId)
        if followUp == nil, inFlight.withLock({ $0.contains(latest.id) }) {
            followedUp.withLock { _ = $0.insert(latest.id) }
            rows.append(
                try create(
                    kind, table: table, itemId: itemId, item: deletedItem, slot: .followUp, sequence: &sequence,
                    now: now))
            return
        }
        if let collapsed = OperationQueue.collapse(latest, kind, item: deletedItem) {
            rows.append(try collapsed.row())
            if var error = try transaction.lookup(table: SystemTables.errors, id: latest.id) {
                error[SystemTables.ErrorColumn.version] = .int(collapsed.version)
                try transaction.upsert([error], into: SystemTables.errors, origin: .local)
            }
        } else {
            try transaction.delete(ids: [latest.id], from: SystemTables.operations)
            try transaction.delete(ids: [latest.id], from: SystemTables.errors)
        }
    }

    /// The row of a new operation in the item's primary slot, taking the next sequence number
    /// (for a caller that inserts it with ``StoreTransaction/insertNew(_:into:origin:)``; call
    /// ``changing()`` in the same transaction).
    func newOperationRow(
        _ kind: OperationKind, table: String, itemId: String, sequence: inout Int64, now: Timestamp
    ) throws -> Item {
        try create(kind, table: table, itemId: itemId, item: nil, slot: .primary, sequence: &sequence, now: now)
    }

    /// Rewrites `row`, an operation row made by ``newOperationRow(_:table:itemId:sequence:now:)``
    /// with the same `table` and `now` (its kind was `.insert`), into the row of the insert of
    /// `itemId` in its primary slot, reusing the storage of its values (when the store kept no
    /// copy) instead of allocating it again: a batch of inserts writes its queue rows through a
    /// few reused rows, changing only their id, sequence and item id.
    func refillInsertRow(_ row: inout Item, table: String, itemId: String, sequence: inout Int64) {
        // A new id (one allocation, copied in): appending to the old id in place costs more.
        QueuedOperation.refill(
            &row, id: OperationQueue.key(table: table, itemId: itemId, slot: .primary), sequence: sequence,
            itemId: itemId)
        sequence += 1
    }

    /// Throws the error an insert of `itemId` meets when its primary queue slot is taken: the
    /// queued operation's kind refuses it (see ``validate(existing:new:table:itemId:)``), or the
    /// slot belongs to another item whose long id hashes to the same key.
    func rejectInsert(table: String, itemId: String, in transaction: any StoreTransaction) throws {
        guard let primary = try operation(table: table, itemId: itemId, slot: .primary, in: transaction) else {
            return
        }
        let followUp = try operation(table: table, itemId: itemId, slot: .followUp, in: transaction)
        try OperationQueue.validate(existing: (followUp ?? primary).kind, new: .insert, table: table, itemId: itemId)
    }

    /// The row of a new operation in `slot`, taking the next sequence number.
    private func create(
        _ kind: OperationKind, table: String, itemId: String, item: Item?, slot: Slot,
        sequence: inout Int64, now: Timestamp
    ) throws -> Item {
        let row = try QueuedOperation.row(
            id: OperationQueue.key(table: table, itemId: itemId, slot: slot), sequence: sequence,
            kind: kind, state: .pending, table: table, itemId: itemId,
            item: kind == .delete ? item : nil, version: 1, createdAt: now)
        sequence += 1
        return row
    }

    /// Throws for the combinations that have no meaning: anything after a delete, an insert after
    /// an insert or an update.
    static func validate(existing: OperationKind, new: OperationKind, table: String, itemId: String) throws {
        switch (existing, new) {
        case (.delete, _):
            throw OfflineSyncError(
                .invalidOperation,
                "item '\(itemId)' of table '\(table)' has a pending delete; push it before writing the id again")
        case (.insert, .insert), (.update, .insert):
            throw OfflineSyncError(
                .invalidOperation,
                "item '\(itemId)' of table '\(table)' already has a pending \(existing.rawValue); it cannot be inserted again"
            )
        default:
            return
        }
    }

    /// The operation that replaces `existing` once `new` is collapsed into it, or `nil` when both
    /// cancel out (an insert never sent, then deleted). An insert that a push already attempted is
    /// not cancelled by a delete: the server may hold the item, so a delete is queued instead
    /// (a 404 answer to it counts as done).
    static func collapse(_ existing: QueuedOperation, _ new: OperationKind, item: Item?) -> QueuedOperation? {
        var result = existing
        result.version += 1
        switch (existing.kind, new) {
        case (.insert, .delete):
            guard existing.state == .attempted else { return nil }
            result.kind = .delete
            result.item = item
        case (.update, .delete):
            result.kind = .delete
            result.item = item
        default:
            break
        }
        return result
    }

    /// Ends the in-flight state of `operation` after a failure or an abort: a follow-up queued
    /// meanwhile is collapsed into it, so the item keeps one operation. Returns the operation as
    /// it now stands (`nil` if it was removed).
    @discardableResult
    func settle(_ operation: QueuedOperation, in transaction: any StoreTransaction) throws -> QueuedOperation? {
        changing()
        guard
            var current = try self.operation(
                table: operation.table, itemId: operation.itemId, slot: .primary, in: transaction)
        else { return nil }
        if let followUp = try self.operation(
            table: operation.table, itemId: operation.itemId, slot: .followUp, in: transaction)
        {
            try transaction.delete(ids: [followUp.id], from: SystemTables.operations)
            if let merged = OperationQueue.collapse(current, followUp.kind, item: followUp.item) {
                current = merged
                try transaction.upsert([current.row()], into: SystemTables.operations, origin: .local)
            } else {
                try transaction.delete(ids: [current.id], from: SystemTables.operations)
                try transaction.delete(ids: [current.id], from: SystemTables.errors)
                return nil
            }
        }
        return current
    }

    /// Removes a completed operation (and its error); a follow-up queued meanwhile takes its slot.
    /// Returns the follow-up, if there was one.
    @discardableResult
    func complete(_ operation: QueuedOperation, in transaction: any StoreTransaction) throws -> QueuedOperation? {
        changing()
        try transaction.delete(ids: [operation.id], from: SystemTables.operations)
        try transaction.delete(ids: [operation.id], from: SystemTables.errors)
        guard
            var followUp = try self.operation(
                table: operation.table, itemId: operation.itemId, slot: .followUp, in: transaction)
        else { return nil }
        try transaction.delete(ids: [followUp.id], from: SystemTables.operations)
        followUp.id = OperationQueue.key(table: operation.table, itemId: operation.itemId, slot: .primary)
        try transaction.upsert([followUp.row()], into: SystemTables.operations, origin: .local)
        return followUp
    }

    /// Folds every follow-up operation into the operation ahead of it. A follow-up outlives a push
    /// only when the process stopped (or the store failed) while its item was in flight; after
    /// this, no item has two operations.
    func recoverInterruptedPush(in store: any LocalStore) throws {
        let prefix = FilterExpression.function(.startsWith, [.column("id"), .literal(.string(Slot.followUp.rawValue))])
        let followUps = try store.read(Query(table: SystemTables.operations, filter: prefix)).items
            .map(decode)
        guard !followUps.isEmpty else { return }
        try store.write { transaction in
            for followUp in followUps {
                if let primary = try operation(
                    table: followUp.table, itemId: followUp.itemId, slot: .primary, in: transaction)
                {
                    try settle(primary, in: transaction)
                } else {
                    try complete(
                        QueuedOperation(
                            id: OperationQueue.key(table: followUp.table, itemId: followUp.itemId, slot: .primary),
                            sequence: followUp.sequence, kind: followUp.kind, state: followUp.state,
                            table: followUp.table, itemId: followUp.itemId, item: nil, version: 0,
                            createdAt: followUp.createdAt), in: transaction)
                }
            }
        }
    }
}
