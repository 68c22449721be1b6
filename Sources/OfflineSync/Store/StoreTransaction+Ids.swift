extension StoreTransaction {
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
