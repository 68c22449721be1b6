extension StoreTransaction {
    /// A lookup per row, then one upsert of the rows that were not there (see the requirement).
    public func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
        // No rows: the upsert of none still refuses an undeclared table, as every backend's
        // insertNew does.
        guard !items.isEmpty else {
            try upsert([], into: table, origin: origin)
            return []
        }
        var present: [String] = []
        var absent: [Item] = []
        var seen: Set<IdKey> = []
        seen.reserveCapacity(items.count)
        for item in items {
            let isNew = seen.insert(IdKey(item.id)).inserted
            if try !isNew || lookup(table: table, id: item.id) != nil {
                present.append(item.id)
            } else {
                absent.append(item)
            }
        }
        if !absent.isEmpty { try upsert(absent, into: table, origin: origin) }
        return present
    }

    /// The rows of `table` with these ids, keyed by id bytes (missing ids left out), read with one
    /// lookup by id each: a point read on every backend, which costs less than a query of
    /// `id in (…)` that a backend plans, evaluates and orders.
    func rows(withIds ids: some Collection<String>, in table: String) throws -> [IdKey: Item] {
        var rows: [IdKey: Item] = [:]
        rows.reserveCapacity(ids.count)
        for id in ids {
            if let row = try lookup(table: table, id: id) { rows[IdKey(id)] = row }
        }
        return rows
    }
}
