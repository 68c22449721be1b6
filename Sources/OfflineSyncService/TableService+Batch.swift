public import OfflineSync

extension TableService {
    /// One write of a batch handed to ``apply(_:)``: what `POST`, `PATCH`, `DELETE` or an
    /// undelete (`POST /tables/{table}/{id}`) asks of the service.
    public struct Write: Sendable {
        /// What the write does.
        public enum Kind: Sendable, Hashable {
            /// ``TableService/insert(_:into:creatingTable:owner:)``.
            case insert(creatingTable: Bool)
            /// ``TableService/merge(_:in:ifMatch:owner:)``.
            case merge(ifMatch: String?)
            /// ``TableService/delete(id:from:ifMatch:owner:)`` (only the item's id matters).
            case delete(ifMatch: String?)
            /// ``TableService/undelete(id:in:ifMatch:owner:)`` (only the item's id matters).
            case undelete(ifMatch: String?)
        }

        /// What the write does.
        public var kind: Kind
        /// The table written.
        public var table: String
        /// The item written; for a delete or an undelete, only its id.
        public var item: Item
        /// The user the write acts for (see "Per-user data" in ``TableService``).
        public var owner: RowOwner?

        /// Creates a write.
        public init(_ kind: Kind, table: String, item: Item, owner: RowOwner? = nil) {
            self.kind = kind
            self.table = table
            self.item = item
            self.owner = owner
        }
    }

    /// Applies writes in order and answers each as the method of its kind would have alone: the
    /// stored item, or the error that method throws (a `RemoteError` for 404, 409, 412 and the
    /// other refusals). One write's failure fails only that write.
    ///
    /// The writes commit together in as few store transactions as the rules allow, which is what
    /// makes a batch cheaper than its writes one by one (one commit, one disk sync on a durable
    /// store): each run of writes that changes no schema (their tables exist and declare every
    /// column written) is applied in one transaction, each checked against what the writes before
    /// it in that transaction left (a second insert of one id is a 409). A write that creates a
    /// table or adds columns is applied alone, as the schema change closes and reopens the store.
    /// When the store fails inside a shared transaction (anything but the refusals the checks
    /// make before writing), that transaction is rolled back and its writes applied again one
    /// per transaction, so each gets the answer it would have had alone.
    public func apply(_ writes: [Write]) -> [Result<Item, any Error>] {
        var results: [Result<Item, any Error>] = []
        results.reserveCapacity(writes.count)
        do {
            try adoptSchemaChangedElsewhere()
        } catch {
            return writes.map { _ in .failure(error) }
        }
        var start = writes.startIndex
        while start < writes.endIndex {
            var end = start
            while end < writes.endIndex, (try? changesNoSchema(writes[end])) == true { end += 1 }
            if end == start {
                results.append(applyAlone(writes[start]))
                start += 1
                continue
            }
            let run = writes[start..<end].map(prepared)
            if let together = try? applyTogether(run) {
                results += together
            } else {
                results += run.map(applyAlone)
            }
            start = end
        }
        return results
    }

    /// The write with what ``insert(_:into:creatingTable:owner:)`` and the other methods do to
    /// an item before they take the writers' lock: an empty insert id gets a UUID, the owner
    /// column is the server's to set.
    private func prepared(_ write: Write) -> Write {
        var write = write
        guard case .insert = write.kind else {
            if let owner = write.owner, case .merge = write.kind { owner.removeOwnerColumn(from: &write.item) }
            return write
        }
        if write.item.id.isEmpty { write.item.id = UUIDText.random() }
        if let owner = write.owner {
            owner.removeOwnerColumn(from: &write.item)
            write.item.values[owner.column] = .string(owner.userId)
        }
        return write
    }

    /// `true` when `write` can share a transaction: its table is a served table that declares
    /// every non-null column the write sets (a merge keeps the stored columns, which the table
    /// declares). Reads the schema as this process knows it; a write found eligible against a
    /// schema another process widened meanwhile is still checked by the store.
    private func changesNoSchema(_ write: Write) throws -> Bool {
        let item = prepared(write).item
        return try shared {
            guard let table = try mapped({ try store.schema }).table(named: write.table), !table.isSystem else {
                return false
            }
            switch write.kind {
            case .delete, .undelete: return true
            case .insert, .merge:
                var declared = true
                item.forEachValue { name, value in
                    if declared, name != "id", !value.isNull, table.column(named: name) == nil { declared = false }
                }
                return declared
            }
        }
    }

    /// The write through the method of its kind, in a transaction of its own.
    private func applyAlone(_ write: Write) -> Result<Item, any Error> {
        Result {
            switch write.kind {
            case .insert(let creatingTable):
                return try insert(write.item, into: write.table, creatingTable: creatingTable, owner: write.owner)
            case .merge(let version):
                return try merge(write.item, in: write.table, ifMatch: version, owner: write.owner)
            case .delete(let version):
                return try delete(id: write.item.id, from: write.table, ifMatch: version, owner: write.owner)
            case .undelete(let version):
                return try undelete(id: write.item.id, in: write.table, ifMatch: version, owner: write.owner)
            }
        }
    }

    /// The writes in one store transaction, each answered as alone. Throws, having changed
    /// nothing, when the store fails (the caller applies the writes one by one instead): the
    /// checks a write makes before it writes throw `RemoteError` and fail only that write; any
    /// other error may come from a half-done write, so it rolls the whole transaction back.
    private func applyTogether(_ writes: [Write]) throws -> [Result<Item, any Error>] {
        try serialized(probing: { stamp in
            try write { transaction in
                // The newest stamp of a table is probed at its first write in the transaction.
                var probed: Set<String> = []
                return try writes.map { write -> Result<Item, any Error> in
                    do {
                        return .success(
                            try applyInTransaction(write, transaction) { transaction, table in
                                try stamp(transaction, table, probed.insert(table).inserted)
                            })
                    } catch let error as RemoteError {
                        return .failure(error)
                    }
                }
            }
        })
    }

    /// One write inside a shared transaction, with the checks of the method of its kind.
    private func applyInTransaction(
        _ write: Write, _ transaction: any StoreTransaction,
        _ stamp: (any StoreTransaction, String) throws -> Timestamp
    ) throws -> Item {
        let table = write.table
        switch write.kind {
        case .insert:
            if let existing = try transaction.lookup(table: table, id: write.item.id) {
                throw Self.duplicate(existing, table: table, owner: write.owner)
            }
            let now = try stamp(transaction, table)
            return try store(write.item, createdAt: now, updatedAt: now, deleted: false, in: table, transaction)
        case .merge(let version):
            let existing = try live(write.item.id, in: table, owner: write.owner, transaction)
            try check(version, against: existing, table: table)
            var replacement = Self.merged(write.item, into: existing)
            if let owner = write.owner { replacement.values[owner.column] = existing.values[owner.column] }
            let now = try stamp(transaction, table)
            return try store(
                replacement, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: false, in: table,
                transaction)
        case .delete(let version):
            let existing = try live(write.item.id, in: table, owner: write.owner, transaction)
            try check(version, against: existing, table: table)
            let now = try stamp(transaction, table)
            return try store(
                existing, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: true, in: table, transaction)
        case .undelete(let version):
            guard let existing = try transaction.lookup(table: table, id: write.item.id),
                write.owner?.owns(existing) ?? true
            else {
                throw RemoteError(
                    .notFound, status: 404, message: "table '\(table)' has no item with id '\(write.item.id)'")
            }
            try check(version, against: existing, table: table)
            guard existing.isDeleted else { return existing }
            let now = try stamp(transaction, table)
            return try store(
                existing, createdAt: existing.createdAt ?? now, updatedAt: now, deleted: false, in: table,
                transaction)
        }
    }
}
