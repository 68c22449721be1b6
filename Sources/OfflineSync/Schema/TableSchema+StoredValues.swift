extension TableSchema {
    /// Checks `item` by the rules of ``normalize(_:origin:)`` and hands each value it would store,
    /// already converted, to `body` together with the position of its column in ``columns``.
    ///
    /// This is ``normalize(_:origin:)`` for a backend that encodes a row straight from the item:
    /// one walk of the item's values, no normalised copy, and the column found once (a backend
    /// keys its encoding by column position instead of hashing the name again). The rules are
    /// the same ones (the same id check and the same value conversion); the values reach `body`
    /// in column order (ascending positions) whatever the item's own order, and `null` values,
    /// `id` and (for ``WriteOrigin/server`` writes) undeclared columns are skipped exactly as
    /// `normalize` drops them.
    ///
    /// Column order makes an encoded row the same bytes however the item was built: an item made
    /// from a dictionary lists its values in the order of the process's hash seed, and a record
    /// written in that order made a filter that reads a few fields walk a different length of
    /// every record in each process (LMDB's unindexed query took 0.65 to 0.95 ms between runs).
    ///
    /// When the item breaks a rule this throws the error `normalize` throws, possibly after
    /// `body` has seen some of the item's values: discard whatever `body` built.
    ///
    /// Its common case (an item laid out on this schema) is always inlined, so that a backend's
    /// `body` is compiled into the walk: no call through a closure context per value, and no
    /// reference count taken for a value `body` only reads.
    @inlinable @inline(__always)
    public func forEachStoredValue(
        of item: Item, origin: WriteOrigin,
        _ body: (_ position: Int, _ value: Value) throws -> Void
    ) throws {
        try TableSchema.validateId(item.id, table: name)
        guard isLaidOutOnSchema(item) else {
            return try forEachStoredValueByName(of: item, origin: origin, body)
        }
        try forEachSlotValue(of: item, body)
    }

    /// ``forEachStoredValue(of:origin:_:)`` for a caller that walks many items: the column order
    /// worked out for an item laid out otherwise than on this schema (an item made from a
    /// dictionary) is kept in `order` and used again for the next item laid out alike (the
    /// same names in the same order), instead of finding each value's column by name again.
    /// Start with an empty ``StoredValueOrder`` and pass the same one for every item.
    @inlinable @inline(__always)
    public func forEachStoredValue(
        of item: Item, origin: WriteOrigin, order: inout StoredValueOrder,
        _ body: (_ position: Int, _ value: Value) throws -> Void
    ) throws {
        try TableSchema.validateId(item.id, table: name)
        if isLaidOutOnSchema(item) { return try forEachSlotValue(of: item, body) }
        order.prepare(for: item.layout, on: self)
        let names = item.layout.names
        try item.slots.withUnsafeBufferPointer { slots in
            for slot in order.current.undeclared {
                guard let value = slots[slot], !value.isNull else { continue }
                guard names[slot] == "id" || origin == .server else { throw unknownColumn(names[slot], item: item.id) }
            }
            for (position, slot, type) in order.current.columns {
                guard let value = slots[slot], !value.isNull else { continue }
                try handOver(value, position: position, type: type, column: names[slot], id: item.id, to: body)
            }
        }
    }

    /// `true` when `item` is laid out on ``rowLayout`` (by identity, or by the same names).
    @inlinable @inline(__always)
    func isLaidOutOnSchema(_ item: Item) -> Bool {
        item.layout === rowLayout || item.layout.names == rowLayout.names
    }

    /// Hands over the values of `item`, laid out on this schema: positions are columns, no name
    /// is looked up.
    @inlinable @inline(__always)
    func forEachSlotValue(of item: Item, _ body: (_ position: Int, _ value: Value) throws -> Void) throws {
        try item.slots.withUnsafeBufferPointer { slots in
            try columns.withUnsafeBufferPointer { columns in
                for position in slots.indices {
                    guard let value = slots[position], !value.isNull else { continue }
                    try handOver(
                        value, position: position, type: columns[position].type, column: columns[position].name,
                        id: item.id, to: body)
                }
            }
        }
    }

    /// Where the values of items of a layout go in a table's columns (see
    /// ``TableSchema/forEachStoredValue(of:origin:order:_:)``), for the last two layouts seen:
    /// items built from dictionaries of the same keys can list them in two orders (a merged
    /// dictionary's order alternates), and each order is then worked out once, not per item.
    public struct StoredValueOrder {
        /// The order of one layout.
        @usableFromInline
        struct Entry {
            /// The layout the order was worked out for.
            @usableFromInline var layout: RowLayout?
            /// The declared columns the layout holds, by ascending position, with the slot of each.
            @usableFromInline var columns: [(position: Int, slot: Int, type: ColumnType)] = []
            /// The slots whose names are not declared columns.
            @usableFromInline var undeclared: [Int] = []

            @usableFromInline init() {}

            /// `true` when the order was worked out for `layout`, or for the same names.
            @inlinable @inline(__always)
            func fits(_ layout: RowLayout) -> Bool {
                guard let known = self.layout else { return false }
                return known === layout || known.names == layout.names
            }

            /// Works the order of `layout`'s names on `schema` out again, keeping the storage.
            @usableFromInline
            mutating func rebuild(for layout: RowLayout, on schema: TableSchema) {
                self.layout = layout
                columns.removeAll(keepingCapacity: true)
                undeclared.removeAll(keepingCapacity: true)
                for (slot, name) in layout.names.enumerated() {
                    guard let (position, type) = schema.declaredColumn(name) else {
                        undeclared.append(slot)
                        continue
                    }
                    var index = columns.count
                    columns.append((position, slot, type))
                    while index > 0, columns[index - 1].position > position {
                        columns.swapAt(index - 1, index)
                        index -= 1
                    }
                }
            }
        }

        /// The order of the last layout seen.
        @usableFromInline var current = Entry()
        /// The order of the layout seen before it.
        @usableFromInline var previous = Entry()

        /// An order that fits no layout yet.
        public init() {}

        /// Makes ``current`` the order of `layout`: kept, swapped with ``previous``, or worked
        /// out in place of ``previous``.
        @inlinable @inline(__always)
        mutating func prepare(for layout: RowLayout, on schema: TableSchema) {
            if current.fits(layout) { return }
            if !previous.fits(layout) { previous.rebuild(for: layout, on: schema) }
            swap(&current, &previous)
        }
    }

    /// ``forEachStoredValue(of:origin:_:)`` of an item laid out otherwise than on this schema.
    @inlinable
    func forEachStoredValueByName(
        of item: Item, origin: WriteOrigin,
        _ body: (_ position: Int, _ value: Value) throws -> Void
    ) throws {
        // Each value's column is found by name first (its slot kept in an insertion-sorted list
        // on the stack, the value not copied), then the values are handed on by ascending
        // column position.
        let names = item.layout.names
        try withUnsafeTemporaryAllocation(
            of: (position: Int, slot: Int, type: ColumnType).self, capacity: item.slots.count
        ) { order in
            var found = 0
            for slot in item.slots.indices {
                switch item.slots[slot] {
                case nil, .null?: continue
                default: break
                }
                let key = names[slot]
                guard let (position, type) = declaredColumn(key) else {
                    guard key == "id" || origin == .server else { throw unknownColumn(key, item: item.id) }
                    continue
                }
                var index = found
                while index > 0, order[index - 1].position > position {
                    order[index] = order[index - 1]
                    index -= 1
                }
                order[index] = (position, slot, type)
                found += 1
            }
            for index in 0..<found {
                let (position, slot, type) = order[index]
                guard let value = item.slots[slot] else { continue }
                try handOver(value, position: position, type: type, column: names[slot], id: item.id, to: body)
            }
        }
    }

    /// Hands `value` of the column at `position` to `body` as the column stores it: as it is, or
    /// converted to `type` (the column's name, for the error of a value that does not convert,
    /// is read only then).
    @inlinable @inline(__always)
    func handOver(
        _ value: Value, position: Int, type: ColumnType, column: @autoclosure () -> String, id: String,
        to body: (_ position: Int, _ value: Value) throws -> Void
    ) throws {
        if TableSchema.isStoredAsIs(value, in: type) {
            try body(position, value)
        } else {
            try body(position, try TableSchema.converted(value, to: type, table: name, column: column(), id: id) ?? value)
        }
    }

    /// The position in ``columns`` of the column with this exact name, if declared.
    public func position(ofColumn name: String) -> Int? {
        declaredColumn(name)?.position
    }

    /// The position and type of the declared column with this exact name (lengths compared
    /// before text: cheaper than hashing for the handful of columns a table has).
    @inlinable @inline(__always)
    func declaredColumn(_ name: String) -> (position: Int, type: ColumnType)? {
        let length = name.utf8.count
        return columns.withUnsafeBufferPointer { columns in
            for position in columns.indices
            where columns[position].name.utf8.count == length && columns[position].name == name {
                return (position, columns[position].type)
            }
            return nil
        }
    }
}
