import Testing

@testable import OfflineSync

@Suite struct TableSchemaStoredValuesTests {
    let todo = TableSchema(
        "todoitem",
        columns: [
            Column("text", .string), Column("priority", .integer),
            Column("score", .double), Column("due", .date),
            Column("done", .bool), Column("tags", .json),
        ])

    /// Items covering every rule of `normalize`: kept values, conversions, nulls, `id` among the
    /// values, undeclared columns, rejected values and rejected ids.
    var corpus: [Item] {
        let date = Timestamp(millisecondsSince1970: 1_700_000_000_123)
        return [
            Item(
                id: "kept",
                values: [
                    "text": "a", "priority": 3, "score": .double(-0.0), "due": .date(date),
                    "done": true, "tags": .json("[1]"), "updatedAt": .date(date), "version": "v1",
                ]),
            Item(id: "converted", values: ["priority": .double(4), "score": 2, "due": "2026-01-02T03:04:05.678Z"]),
            Item(id: "nulls", values: ["text": .null, "colour": .null, "priority": 1]),
            Item(id: "id-in-values", values: ["id": "other", "text": "b"]),
            Item(id: "unknown", values: ["colour": "red", "text": "c"]),
            Item(id: "fraction", values: ["priority": .double(1.5)]),
            Item(id: "nan", values: ["score": .double(.nan)]),
            Item(id: "bad-date", values: ["due": "tomorrow"]),
            Item(
                id: "far-date",
                values: ["due": .date(Timestamp(millisecondsSince1970: Timestamp.maximum.millisecondsSince1970 + 1))]),
            Item(id: "mismatch", values: ["done": "yes"]),
            Item(id: "", values: ["text": "d"]),
            Item(id: "nul\u{0}id", values: [:]),
            Item(id: String(repeating: "x", count: TableSchema.maximumIdLength + 1), values: [:]),
        ]
    }

    /// What `forEachStoredValue` hands over, as an item (keyed by the column at each position).
    func stored(_ item: Item, origin: WriteOrigin) throws -> (item: Item, positions: [String: Int]) {
        var values: [String: Value] = [:]
        var positions: [String: Int] = [:]
        try todo.forEachStoredValue(of: item, origin: origin) { position, value in
            let name = todo.columns[position].name
            #expect(values[name] == nil, "column '\(name)' handed over twice")
            values[name] = value
            positions[name] = position
        }
        return (Item(id: item.id, values: values), positions)
    }

    /// Equal in type and bits, not only under `Value`'s equality (`-0.0`, integer versus double).
    static func sameBits(_ stored: Value?, _ expected: Value) -> Bool {
        guard let stored, stored.type == expected.type else { return false }
        if case .double(let x) = stored, case .double(let y) = expected { return x.bitPattern == y.bitPattern }
        return stored == expected
    }

    @Test(arguments: [WriteOrigin.local, .server])
    func handsOverExactlyTheValuesNormalizeKeeps(origin: WriteOrigin) throws {
        for item in corpus {
            guard let normalized = try? todo.normalize(item, origin: origin) else { continue }
            let result = try stored(item, origin: origin)
            #expect(result.item == normalized)
            #expect(result.item.values.count == normalized.values.count)
            for (name, value) in normalized.values {
                #expect(Self.sameBits(result.item.values[name], value), "column '\(name)' of item '\(item.id)'")
            }
        }
    }

    @Test(arguments: [WriteOrigin.local, .server])
    func throwsTheErrorNormalizeThrows(origin: WriteOrigin) {
        var rejected = 0
        for item in corpus {
            let expected: OfflineSyncError
            do {
                _ = try todo.normalize(item, origin: origin)
                continue
            } catch let error as OfflineSyncError {
                expected = error
            } catch {
                Issue.record("normalize threw \(error)")
                continue
            }
            rejected += 1
            #expect(throws: expected) { try stored(item, origin: origin) }
        }
        #expect(rejected >= (origin == .local ? 9 : 8))
    }

    /// One `StoredValueOrder` kept across items of many layouts (a batch's walk) hands over what
    /// the walk without it hands over, and throws what it throws, item after item: an order made
    /// for one layout is never applied to another.
    @Test(arguments: [WriteOrigin.local, .server])
    func aKeptOrderHandsOverWhatEachItemHolds(origin: WriteOrigin) throws {
        func walk(_ item: Item, order: inout TableSchema.StoredValueOrder?) -> Result<[String], OfflineSyncError> {
            var handed: [String] = []
            do {
                let body: (Int, Value) -> Void = { handed.append("\($0)=\($1)") }
                if order != nil {
                    try todo.forEachStoredValue(of: item, origin: origin, order: &order!, body)
                } else {
                    try todo.forEachStoredValue(of: item, origin: origin, body)
                }
                return .success(handed)
            } catch let error as OfflineSyncError {
                return .failure(error)
            } catch {
                Issue.record("forEachStoredValue threw \(error)")
                return .success([])
            }
        }
        // Alike layouts in a row (the cached case), then alternating ones, then the schema's own.
        let onSchema: [String: Value] = ["text": "s", "score": 2, "done": false]
        let laidOut = Item(id: "on-schema", layout: todo.rowLayout, values: todo.rowLayout.names.map { onSchema[$0] })
        // The same names in two orders, alternating (as merged dictionaries list their keys).
        let forward = Item(id: "fw", layout: RowLayout(uniqueNames: ["text", "priority", "colour"]), values: ["f", 1, nil])
        let backward = Item(id: "bw", layout: RowLayout(uniqueNames: ["colour", "priority", "text"]), values: [nil, 2, "b"])
        let batch =
            corpus + corpus.reversed() + [corpus[0], corpus[4], corpus[0], laidOut, corpus[2], laidOut]
            + [forward, backward, forward, backward, corpus[3], forward, corpus[4], backward, backward]
        var kept: TableSchema.StoredValueOrder? = TableSchema.StoredValueOrder()
        for item in batch {
            var none: TableSchema.StoredValueOrder?
            let expected = walk(item, order: &none)
            let actual = walk(item, order: &kept)
            switch (expected, actual) {
            case (.success(let x), .success(let y)): #expect(x == y, "item '\(item.id)'")
            case (.failure(let x), .failure(let y)): #expect(x == y, "item '\(item.id)'")
            default: Issue.record("item '\(item.id)': \(expected) without a kept order, \(actual) with one")
            }
        }
    }

    @Test func positionsAreTheDeclaredColumnOrder() throws {
        let positions = try stored(corpus[0], origin: .local).positions
        for (name, position) in positions {
            #expect(todo.columns[position].name == name)
            #expect(todo.position(ofColumn: name) == position)
        }
        #expect(todo.position(ofColumn: "Text") == nil)
        #expect(todo.position(ofColumn: "id") == nil)
    }
    /// An item's values reach `body` in column order however the item is laid out, so a backend
    /// encodes the same row the same way in every process (a dictionary's order follows the
    /// process's hash seed).
    @Test(arguments: [WriteOrigin.local, .server])
    func valuesArriveInColumnOrderWhateverTheItemsOrder(origin: WriteOrigin) throws {
        let names = ["text", "priority", "score", "due", "done", "tags", "updatedAt", "version", "id", "colour"]
        let values: [String: Value] = [
            "text": "a", "priority": 3, "score": 2, "due": "2026-01-02T03:04:05.678Z", "done": true,
            "tags": .json("[1]"), "updatedAt": .null, "version": "v1", "id": "x", "colour": "red",
        ]
        var expected: [(Int, Value)]?
        var orders = [names, Array(names.reversed())]
        for rotation in 1..<names.count { orders.append(Array(names[rotation...] + names[..<rotation])) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 { orders.append(names.shuffled(using: &generator)) }
        for order in orders {
            let kept = order.filter { origin == .server || $0 != "colour" }
            let item = Item(id: "1", layout: RowLayout(uniqueNames: kept), values: kept.map { values[$0] })
            var handed: [(Int, Value)] = []
            try todo.forEachStoredValue(of: item, origin: origin) { handed.append(($0, $1)) }
            #expect(handed.map(\.0) == handed.map(\.0).sorted(), "order \(order)")
            if let expected {
                #expect(handed.map(\.0) == expected.map(\.0), "order \(order)")
                #expect(handed.map(\.1) == expected.map(\.1), "order \(order)")
            } else {
                expected = handed
                #expect(handed.count == 7)
            }
        }
    }
}
