extension StoreTransaction {
    /// The rows of `table` with these ids, keyed by id bytes (missing ids left out), read with one
    /// `id in (…)` query per 500 ids (a bound that keeps every SQL backend under its parameter
    /// limit) instead of one lookup per id.
    func rows(withIds ids: some Collection<String>, in table: String) throws -> [IdKey: Item] {
        var rows: [IdKey: Item] = [:]
        rows.reserveCapacity(ids.count)
        var start = ids.startIndex
        while start != ids.endIndex {
            let end = ids.index(start, offsetBy: 500, limitedBy: ids.endIndex) ?? ids.endIndex
            let found = try read(Query(table: table, filter: .isIn(.column("id"), ids[start..<end].map { .string($0) }))).items
            for row in found { rows[IdKey(row.id)] = row }
            start = end
        }
        return rows
    }
}
