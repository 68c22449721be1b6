import OfflineSync

extension StoreTierGroups {
    /// Rules 2 and 3 through every method that stores or answers a value: every value kind in an
    /// unindexed table (`values`) and in a synced table that indexes every column (`indexed`),
    /// read back by `lookup` and `read` outside and inside a transaction, written with both
    /// origins, found again by filters on the indexed columns, and kept across a reopen.
    static let values = ConformanceGroup(
        "values", tier: .store,
        cases: [
            ConformanceCase("every value kind round-trips in indexed and unindexed columns") { context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    let rows = ValueFixtures.rows(for: table)
                    context.attempt("upsert(\(table.name)) of \(rows.count) rows of hard values") {
                        try store.upsert(rows, into: table.name)
                    }
                    for row in rows { context.expectLookup(store, table.name, row.id, row, "upsert then lookup") }
                    context.expectRows(store, table.name, rows, "upsert then read")
                }
            },
            ConformanceCase("filters on indexed columns find every hard value") { context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    let rows = ValueFixtures.rows(for: table)
                    try store.upsert(rows, into: table.name)
                    for query in ValueFixtures.probes(for: table, rows: rows) {
                        context.expectReference(store, query, rows: rows, schema: table)
                    }
                }
            },
            ConformanceCase("server writes store the same values as local writes") { context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    let written = ValueFixtures.rows(for: table) + ValueFixtures.convertible(for: table)
                    let stored = ValueFixtures.rows(for: table) + ValueFixtures.converted(for: table)
                    context.attempt("upsert(\(table.name), origin: .server) of \(written.count) rows of hard values") {
                        try store.upsert(written, into: table.name, origin: .server)
                    }
                    for row in stored {
                        context.expectLookup(store, table.name, row.id, row, "server upsert then lookup")
                    }
                    context.expectRows(store, table.name, stored, "server upsert then read")
                }
            },
            ConformanceCase("a transaction reads back the values it wrote, normalized") { context in
                let store = try context.openStore(ValueFixtures.schema)
                context.attempt("write(_:) that upserts hard values and reads them back") {
                    try store.write { transaction in
                        for table in ValueFixtures.tables {
                            let rows = ValueFixtures.rows(for: table)
                            let written = rows + ValueFixtures.convertible(for: table)
                            try transaction.upsert(written, into: table.name, origin: .local)
                            let expected = rows + ValueFixtures.converted(for: table)
                            for row in expected {
                                let found = try transaction.lookup(table: table.name, id: row.id)
                                if let difference = RowDifference.first(
                                    expected: [row], actual: found.map { [$0] } ?? [])
                                {
                                    context.fail("transaction.lookup(\(table.name), id '\(row.id)') \(difference)")
                                }
                            }
                            let sorted = expected.sorted { ValueSemantics.compareBytes($0.id, $1.id) < 0 }
                            let read = try transaction.read(Query(table: table.name)).items
                            if let difference = RowDifference.first(expected: sorted, actual: read) {
                                context.fail(
                                    "transaction.read(\(table.name)) after upserting hard values: \(difference)")
                            }
                            for query in ValueFixtures.probes(for: table, rows: expected) {
                                if let difference = Reference.difference(
                                    query, rows: expected, schema: table, answer: { try transaction.read(query) })
                                {
                                    context.fail("transaction.read(\(table.name)) \(query): \(difference)")
                                }
                            }
                        }
                    }
                }
            },
            ConformanceCase("values survive closing and reopening", requires: .persistent) { context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    try store.upsert(ValueFixtures.rows(for: table), into: table.name)
                }
                try store.close()
                try store.open(schema: ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    let rows = ValueFixtures.rows(for: table)
                    for row in rows { context.expectLookup(store, table.name, row.id, row, "reopen then lookup") }
                    context.expectRows(store, table.name, rows, "reopen then read")
                    for query in ValueFixtures.probes(for: table, rows: rows) {
                        context.expectReference(store, query, rows: rows, schema: table)
                    }
                }
            },
            ConformanceCase("an explicit null over an existing value clears it, from either origin") { context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    for origin in [WriteOrigin.local, .server] {
                        let full = ValueFixtures.fullRow(id: "full-\(origin)", for: table)
                        try store.upsert([full], into: table.name, origin: origin)
                        for column in table.columns {
                            var cleared = full
                            cleared.values[column.name] = .null
                            context.attempt(
                                "upsert(\(table.name), id '\(full.id)', origin: .\(origin)) \(column.name) = null"
                            ) {
                                try store.upsert([cleared], into: table.name, origin: origin)
                            }
                            let operation =
                                "upsert(\(table.name), origin: .\(origin)) with an explicit null in '\(column.name)' over \(RowDifference.show(full[column.name]))"
                            context.expectLookup(store, table.name, full.id, cleared, operation)
                            let isNull = Query(
                                table: table.name,
                                filter: .and(
                                    .comparison(.column("id"), .eq, .literal(.string(full.id))),
                                    .comparison(.column(column.name), .eq, .literal(.null))))
                            let found = context.attempt("read(\(table.name)) \(isNull)") {
                                try store.read(isNull).items.map(\.id)
                            }
                            context.expectEqual(found, [full.id], "\(operation): read(\(table.name)) \(isNull)")
                            let oldValue = Query(
                                table: table.name,
                                filter: .comparison(.column(column.name), .eq, .literal(full[column.name])))
                            let stale = context.attempt("read(\(table.name)) \(oldValue)") {
                                try store.read(oldValue).items.map(\.id)
                            }
                            context.expect(
                                stale?.contains(full.id) != true,
                                "\(operation): read(\(table.name)) \(oldValue) still finds id '\(full.id)'")
                            try store.upsert([full], into: table.name, origin: origin)
                        }
                    }
                }
            },
            ConformanceCase("an upsert replaces the whole row, from either origin and inside a transaction") {
                context in
                let store = try context.openStore(ValueFixtures.schema)
                for table in ValueFixtures.tables {
                    for origin in [WriteOrigin.local, .server] {
                        let full = ValueFixtures.fullRow(id: "replace-\(origin)", for: table)
                        let bare = Item(id: full.id, values: [table.columns[0].name: full[table.columns[0].name]])
                        try store.upsert([full], into: table.name, origin: origin)
                        context.attempt("upsert(\(table.name), id '\(full.id)', origin: .\(origin)) with one column") {
                            try store.upsert([bare], into: table.name, origin: origin)
                        }
                        let operation =
                            "upsert(\(table.name), origin: .\(origin)) of a row with one column over a full row"
                        context.expectLookup(store, table.name, full.id, bare, operation)
                        context.attempt("write(_:) that replaces id '\(full.id)' and looks it up") {
                            try store.write { transaction in
                                try transaction.upsert([full], into: table.name, origin: origin)
                                try transaction.upsert([bare], into: table.name, origin: origin)
                                let found = try transaction.lookup(table: table.name, id: full.id)
                                context.expectEqual(found, bare, "transaction.lookup after \(operation)")
                            }
                        }
                        for column in table.columns.dropFirst() {
                            let query = Query(
                                table: table.name,
                                filter: .comparison(.column(column.name), .eq, .literal(full[column.name])))
                            let ids = context.attempt("read(\(table.name)) \(query)") {
                                try store.read(query).items.map(\.id)
                            }
                            context.expect(
                                ids?.contains(full.id) != true,
                                "\(operation): read(\(table.name)) \(query) still finds id '\(full.id)' by its old value"
                            )
                        }
                    }
                }
            },
            ConformanceCase("strings past 255 bytes in indexed columns order and compare by every byte") { context in
                let store = try context.openStore(ValueFixtures.schema)
                let table = ValueFixtures.indexed
                let rows = ValueFixtures.longStrings.enumerated().map { offset, text in
                    Item(id: "long-\(offset)", values: ["s": .string(text), "j": .json("[\"\(text)\"]")])
                }
                try store.upsert(rows, into: table.name)
                var queries: [Query] = [
                    Query(table: table.name, orderBy: [SortKey("s")]),
                    Query(table: table.name, orderBy: [SortKey("s", descending: true)], top: 3),
                    Query(table: table.name, orderBy: [SortKey("j")]),
                ]
                for text in ValueFixtures.longStrings {
                    for op in ComparisonOperator.allCases {
                        queries.append(
                            Query(
                                table: table.name, filter: .comparison(.column("s"), op, .literal(.string(text))),
                                orderBy: [SortKey("s")]))
                    }
                    queries.append(
                        Query(
                            table: table.name, filter: .function(.startsWith, [.column("s"), .literal(.string(text))])))
                }
                for query in queries {
                    context.expectReference(store, query, rows: rows, schema: table)
                }
            },
            /// A record format of a fixed width (a null bitmap in one `UInt64`, a column number in
            /// one byte) loses or mixes up the columns past it: rows of 100 columns of every kind
            /// (104 with the system columns), some null in the first half only, read back whole and
            /// answer filters and orderings on their last columns as the reference does.
            ConformanceCase("rows of 100 columns round-trip") { context in
                let table = ValueFixtures.wide
                let store = try context.openStore(StoreSchema([table]))
                let rows = ValueFixtures.wideRows()
                context.attempt("upsert(\(table.name)) of \(rows.count) rows of \(table.columns.count) columns") {
                    try store.upsert(rows, into: table.name)
                }
                for row in rows { context.expectLookup(store, table.name, row.id, row, "upsert then lookup") }
                context.expectRows(store, table.name, rows, "upsert then read")
                for column in table.columns.suffix(8) {
                    context.expectReference(
                        store, Query(table: table.name, orderBy: [SortKey(column.name, descending: true)]), rows: rows,
                        schema: table)
                    context.expectReference(
                        store,
                        Query(
                            table: table.name,
                            filter: .comparison(.column(column.name), .eq, .literal(rows[2][column.name]))),
                        rows: rows, schema: table)
                }
            },
            /// An index that keeps the entry of a deleted row, or of a write its transaction rolled
            /// back, answers a filter on the old values with the row (an index-only answer) or with
            /// the row now under that id. Every value of every row ever written is looked for again.
            ConformanceCase("rows deleted or rolled back are no longer found through an index") { context in
                let store = try context.openStore(ValueFixtures.schema)
                let table = ValueFixtures.indexed
                let rows = ValueFixtures.rows(for: table)
                try store.upsert(rows, into: table.name)
                let byIds = rows.indices.filter { $0 % 3 == 0 }.map { rows[$0].id }
                context.attempt("delete(ids:) of \(byIds.count) rows from \(table.name)") {
                    try store.delete(ids: byIds, from: table.name)
                }
                let byQuery = Query(table: table.name, filter: .comparison(.column("d"), .lt, .literal(.double(0))))
                _ = context.attempt("delete(matching: \(byQuery))") { try store.delete(matching: byQuery) }
                var pending = ValueFixtures.fullRow(id: "rolled-back", for: table)
                pending["s"] = "written, then rolled back"
                pending["i"] = 424_242
                pending["j"] = .json("[\"rolled back\"]")
                var replacement = pending
                replacement.id = rows[1].id
                let rollback = context.expectThrows(
                    "write(_:) that upserts new id 'rolled-back' and replaces id '\(rows[1].id)', then throws"
                ) {
                    try store.write { transaction in
                        try transaction.upsert([pending, replacement], into: table.name, origin: .local)
                        throw RollBack()
                    }
                }
                context.expect(rollback is RollBack, "write(_:) that throws must rethrow the body's error")
                var reinserted = pending
                reinserted.id = rows[0].id
                reinserted["s"] = "deleted, then written again"
                context.attempt("upsert(\(table.name), id '\(reinserted.id)') of a deleted id with other values") {
                    try store.upsert([reinserted], into: table.name)
                }
                var remaining = rows.filter { !byIds.contains($0.id) }.compactMap {
                    try? table.normalize($0, origin: .local)
                }
                let deletedByQuery = Set(
                    try QueryEvaluator(query: byQuery, schema: table).run(over: remaining).items.map(\.id))
                remaining.removeAll { deletedByQuery.contains($0.id) }
                remaining.append(try table.normalize(reinserted, origin: .local))
                let operation =
                    "after delete(ids:), delete(matching: \(byQuery)), a rolled-back upsert and a deleted id written again"
                for query in ValueFixtures.probes(for: table, rows: rows + [pending, reinserted]) {
                    if let difference = Reference.difference(
                        query, rows: remaining, schema: table, answer: { try store.read(query) })
                    {
                        context.fail("\(operation): read(\(table.name)) \(query): \(difference)")
                    }
                }
            },
        ])
}

/// The tables and hard values of the `values` group.
enum ValueFixtures {
    /// Every column of every kind, no index.
    static let unindexed = Fixtures.values

    /// Every column of every kind, each indexed on its own and `s` also with `i`, with the
    /// system columns of a synced table.
    static let indexed = TableSchema(
        "indexed",
        columns: [
            Column("b", .bool), Column("i", .integer), Column("d", .double),
            Column("s", .string), Column("t", .date), Column("j", .json),
        ],
        indexes: [
            TableIndex("indexed_b", on: ["b"]), TableIndex("indexed_i", on: ["i"]), TableIndex("indexed_d", on: ["d"]),
            TableIndex("indexed_s", on: ["s"]), TableIndex("indexed_t", on: ["t"]), TableIndex("indexed_j", on: ["j"]),
            TableIndex("indexed_s_i", on: ["s", "i"]), TableIndex("indexed_updated", on: ["updatedAt"]),
        ])

    static let tables = [unindexed, indexed]
    static let schema = StoreSchema(tables)

    /// A synced table of 100 columns cycling through every kind, its last one indexed.
    static let wide: TableSchema = {
        let kinds: [ColumnType] = [.bool, .integer, .double, .string, .date, .json]
        return TableSchema(
            "wide", columns: (0..<100).map { Column("c\($0)", kinds[$0 % kinds.count]) },
            indexes: [TableIndex("wide_c99", on: ["c99"])])
    }()

    /// Five rows of ``wide`` with a value in every column (also the system columns), the fourth
    /// with nulls in its first 50 columns.
    static func wideRows() -> [Item] {
        (0..<5).map { row in
            var item = Item(id: "w\(row)")
            for (position, column) in wide.columns.enumerated() {
                if row == 3 && position < 50 { continue }
                let number = Int64(row * 1_000 + position)
                switch column.type {
                case .bool: item[column.name] = .bool((row + position) % 2 == 0)
                case .integer: item[column.name] = .int(number * 7_919 - 20_000)
                case .double: item[column.name] = .double(Double(number) / 8 - 300)
                case .string: item[column.name] = .string("r\(row) c\(position)")
                case .date:
                    item[column.name] = .date(Timestamp(millisecondsSince1970: number * 86_399_999 - 500_000_000))
                case .json: item[column.name] = .json("[\(row),\(position)]")
                }
            }
            return item
        }
    }

    /// Strings a backend could trim, fold, normalise, re-encode or cut.
    static let strings: [String] =
        [
            "\u{FEFF}", "\u{FEFF}bom first", "bom \u{FEFF} inside", "😀", "𝄞 clef", "\u{10FFFF}", "a\u{1F600}b",
            " leading space", "trailing space ", "\ttab", "line\r\n", "Zed", "zed", "ZED", "caf\u{E9}", "cafe\u{301}",
            "\u{FB01}", "Å", "A\u{30A}", "nul\u{0}inside", "", "%_", "O'Brien",
        ] + longStrings + lineEnds

    /// Lone carriage returns, which a backend converting line ends would turn into line feeds.
    static let lineEnds: [String] = ["lone\rreturn", "\r", "\r\r\n"]

    /// Strings longer than 255 (and 511) UTF-8 bytes that share long prefixes and differ at the end.
    static let longStrings: [String] = {
        let ascii = String(repeating: "k", count: 300)
        let wide = String(repeating: "\u{E9}", count: 200)
        let astral = String(repeating: "😀", count: 130)
        return [
            ascii + "a", ascii + "b", ascii, ascii + "a" + ascii, wide + "z", wide + "y", astral + "1", astral + "0",
        ]
    }()

    /// JSON texts that are valid but not canonical: spacing, key order, escapes, number spelling.
    /// Each is one array or object, the only JSON a `json` column holds.
    static let json: [String] = [
        "{ \"b\" : 1 , \"a\" : 2 }", "{\"z\":1,\"a\":2}", "[1.0, 2e0, -0, 1E+2]", "[\"\\u00e9\", \"\u{E9}\"]",
        "\n[\n  true\n]\n", "{\"a\":{\"a\":[]},\"a\":null}", "[\"\\ud83d\\ude00\"]", "[\"\u{FEFF}\"]", "[123.4500]",
        // The first text without its spacing: equal as JSON, different as text.
        "{\"b\":1,\"a\":2}",
        // An escaped solidus, which a JSON parser reads as a plain "/".
        "{\"url\":\"https:\\/\\/example.com\\/a\"}",
    ]

    static let integers: [Int64] = [
        .min, .max, .min + 1, .max - 1, 0, -1, 9_007_199_254_740_993, -9_007_199_254_740_993,
    ]
    static let doubles: [Double] = [
        -0.0, 0.0, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, .greatestFiniteMagnitude, 0.1, 1.0 / 3.0,
        9_007_199_254_740_994, -2.5e-300,
    ]
    static let dates: [Timestamp] = [
        .minimum, .maximum, Timestamp(millisecondsSince1970: -1), Timestamp(millisecondsSince1970: 1),
        Timestamp(millisecondsSince1970: 999), Timestamp(millisecondsSince1970: -86_400_001),
        Timestamp(millisecondsSince1970: 1_700_000_000_123),
    ]

    /// One row per string (the longest list), every other column cycling through its own samples,
    /// and for the synced table system columns too; one row of nulls only.
    static func rows(for table: TableSchema) -> [Item] {
        var rows = strings.indices.map { index -> Item in
            var item = Item(id: "v\(index)")
            item["s"] = .string(strings[index])
            item["b"] = .bool(index % 2 == 0)
            item["i"] = .int(integers[index % integers.count])
            item["d"] = .double(doubles[index % doubles.count])
            item["t"] = .date(dates[index % dates.count])
            item["j"] = .json(json[index % json.count])
            if table.synced {
                item["createdAt"] = .date(dates[(index + 3) % dates.count])
                item["updatedAt"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(index % 5)))
                item["version"] = .string(strings[(index + 1) % strings.count])
                item["deleted"] = .bool(index % 3 == 0)
            }
            return item
        }
        rows.append(Item(id: "\u{FEFF}nulls"))
        rows.append(Item(id: "😀\u{10FFFF}"))
        return rows
    }

    /// A row holding a value in every column of `table`.
    static func fullRow(id: String, for table: TableSchema) -> Item {
        var item = rows(for: table)[1]
        item.id = id
        if table.synced {
            item["version"] = "v1"
        }
        return item
    }

    /// Rows whose values the core converts (int into double, integral double into integer, ISO
    /// text into date, also with an offset from UTC, which names the instant that far before or
    /// after UTC), as written.
    static func convertible(for table: TableSchema) -> [Item] {
        [
            Item(
                id: "convert-1", values: ["d": .int(.max), "i": .double(-4), "t": .string("1969-12-31T23:59:59.999Z")]),
            Item(id: "convert-2", values: ["d": .int(-3), "i": .double(9_007_199_254_740_992)]),
            Item(id: "convert-3", values: ["t": .string("2024-02-29T23:30:00.250+02:00")]),
            Item(id: "convert-4", values: ["t": .string("1969-12-31T19:00:00.001-05:00")]),
            Item(id: "convert-5", values: ["t": .string("2000-01-01T05:29:59.999+05:30")]),
        ]
    }

    /// The rows of ``convertible(for:)`` as stored.
    static func converted(for table: TableSchema) -> [Item] {
        [
            Item(
                id: "convert-1",
                values: [
                    "d": .double(Double(Int64.max)), "i": .int(-4), "t": .date(Timestamp(millisecondsSince1970: -1)),
                ]),
            Item(id: "convert-2", values: ["d": .double(-3), "i": .int(9_007_199_254_740_992)]),
            Item(id: "convert-3", values: ["t": .date(Timestamp(millisecondsSince1970: 1_709_242_200_250))]),
            Item(id: "convert-4", values: ["t": .date(Timestamp(millisecondsSince1970: 1))]),
            Item(id: "convert-5", values: ["t": .date(Timestamp(millisecondsSince1970: 946_684_799_999))]),
        ]
    }

    /// Queries that find each value of `rows` again through equality, ranges, `in` and orderings
    /// on every column.
    static func probes(for table: TableSchema, rows: [Item]) -> [Query] {
        var queries: [Query] = []
        for column in table.columns {
            queries.append(Query(table: table.name, orderBy: [SortKey(column.name)]))
            queries.append(Query(table: table.name, orderBy: [SortKey(column.name, descending: true)], top: 5))
            var seen: [Value] = []
            for row in rows where !seen.contains(row[column.name]) && !row[column.name].isNull {
                let value = row[column.name]
                seen.append(value)
                queries.append(
                    Query(table: table.name, filter: .comparison(.column(column.name), .eq, .literal(value))))
            }
            let some = Array(seen.prefix(4))
            if let first = some.first {
                queries.append(
                    Query(
                        table: table.name, filter: .comparison(.column(column.name), .ge, .literal(first)),
                        orderBy: [SortKey(column.name)]))
                queries.append(Query(table: table.name, filter: .isIn(.column(column.name), some)))
            }
        }
        queries.append(Query(table: table.name, filter: .isIn(.column("id"), rows.map { .string($0.id) })))
        return queries
    }
}
