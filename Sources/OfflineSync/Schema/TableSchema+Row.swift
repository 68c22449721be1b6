extension TableSchema {
    /// The position of the declared column with this exact name in ``columns``, if any: looked up
    /// in ``rowLayout`` (which lists the columns in the same order), so a wide table answers in
    /// constant time.
    public func columnIndex(named name: String) -> Int? {
        rowLayout.position(of: name)
    }

    /// The item's values normalised by the rules of ``normalize(_:origin:)`` and laid out in
    /// ``columns`` order (`.null` where the item has no value), for stores that write a row by
    /// column position. It accepts and rejects exactly what ``normalize(_:origin:)`` does, and
    /// reads each value once without building a new item.
    public func normalizedRow(_ item: Item, origin: WriteOrigin) throws -> [Value] {
        var row: [Value] = []
        try normalizedRow(item, origin: origin, into: &row)
        return row
    }

    /// ``normalizedRow(_:origin:)`` written into `row`, whose storage is reused (a store writing
    /// many rows keeps one array instead of allocating one per row). On a throw, `row` holds no
    /// meaningful values.
    public func normalizedRow(_ item: Item, origin: WriteOrigin, into row: inout [Value]) throws {
        if row.count == columns.count {
            for position in row.indices { row[position] = .null }
        } else {
            row = .nulls(count: columns.count)
        }
        try forEachStoredValue(of: item, origin: origin) { row[$0] = $1 }
    }

    /// ``normalizedRow(_:origin:into:)`` for a store writing many rows, keeping in `order` the
    /// column order of the items' layout from one item to the next (see
    /// ``forEachStoredValue(of:origin:order:_:)``).
    public func normalizedRow(
        _ item: Item, origin: WriteOrigin, into row: inout [Value], order: inout StoredValueOrder
    ) throws {
        if row.count == columns.count {
            for position in row.indices { row[position] = .null }
        } else {
            row = .nulls(count: columns.count)
        }
        try forEachStoredValue(of: item, origin: origin, order: &order) { row[$0] = $1 }
    }
}
