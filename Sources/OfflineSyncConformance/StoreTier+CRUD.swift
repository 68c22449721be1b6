import OfflineSync

extension StoreTierGroups {
    /// Writing and reading back every value type exactly, whole-row upserts, unknown columns.
    static let crud = ConformanceGroup(
        "crud", tier: .store,
        cases: [
            ConformanceCase("every value type round-trips exactly") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = ValueSamples.rows
                context.attempt("upsert(values) of \(rows.count) sample rows") {
                    try store.upsert(rows, into: "values")
                }
                for row in rows {
                    context.expectLookup(store, "values", row.id, row, "upsert then lookup")
                }
                context.expectRows(store, "values", rows, "upsert then read")
            },
            ConformanceCase("negative zero keeps its sign bit") { context in
                let store = try context.openStore(Fixtures.schema)
                let row = Item(id: "negative-zero", values: ["d": .double(-0.0)])
                try store.upsert([row], into: "values")
                let lookup = "lookup(values, id 'negative-zero')"
                let read = "read(values) of id 'negative-zero'"
                let answers: [(String, Item??)] = [
                    (lookup, context.attempt(lookup) { try store.lookup(table: "values", id: row.id) }),
                    (read, context.attempt(read) { try store.read(Query(table: "values")).items.first }),
                ]
                for case let (operation, found?) in answers {
                    guard case .double(let number)? = found?["d"] else {
                        context.fail(
                            "\(operation) column 'd': expected double -0.0, got \(found.map { RowDifference.show($0["d"]) } ?? "no row")"
                        )
                        continue
                    }
                    context.expect(
                        number.sign == .minus && number == 0,
                        "\(operation) column 'd': expected -0.0 (sign bit set), got \(number) with bit pattern 0x\(String(number.bitPattern, radix: 16))"
                    )
                }
            },
            ConformanceCase("precomposed and decomposed é are different ids and values") { context in
                let store = try context.openStore(Fixtures.schema)
                let precomposed = "caf\u{E9}"
                let decomposed = "cafe\u{301}"
                let rows = [
                    Item(id: precomposed, values: ["s": .string(precomposed), "i": 1]),
                    Item(id: decomposed, values: ["s": .string(decomposed), "i": 2]),
                ]
                try store.upsert(rows, into: "values")
                context.expectRows(store, "values", rows, "upsert of ids 'caf\\u{e9}' and 'cafe\\u{301}'")
                context.expectLookup(store, "values", precomposed, rows[0], "lookup of the precomposed id")
                context.expectLookup(store, "values", decomposed, rows[1], "lookup of the decomposed id")
                let query = Query(
                    table: "values", filter: .comparison(.column("s"), .eq, .literal(.string(decomposed))))
                let ids = context.attempt("read(values) \(query)") { try store.read(query).items.map(\.id) }
                context.expect(
                    ids?.count == 1 && ids?.first?.utf8.elementsEqual(decomposed.utf8) == true,
                    "read(values) where s eq the decomposed 'cafe\\u{301}': expected only id 'cafe\\u{301}', got \(ids.map { $0.map(RowDifference.escaped) } ?? [])"
                )
                try store.delete(ids: [precomposed], from: "values")
                context.expectRows(store, "values", [rows[1]], "delete(ids: ['caf\\u{e9}']) must keep 'cafe\\u{301}'")
            },
            /// Ids compare byte for byte: a backend storing them in a padded or trimmed column, or
            /// comparing them with a collation that ignores trailing spaces, merges these rows.
            ConformanceCase("ids that differ only in spaces are different rows") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = [
                    Fixtures.note("k", priority: 1), Fixtures.note("k ", priority: 2),
                    Fixtures.note("k  ", priority: 3), Fixtures.note(" k", priority: 4),
                ]
                let written = "upsert(notes) of ids 'k', 'k ', 'k  ' and ' k'"
                context.attempt(written) { try store.upsert(rows, into: "notes") }
                context.expectRows(store, "notes", rows, written)
                for row in rows { context.expectLookup(store, "notes", row.id, row, written) }
                for filter: FilterExpression in [
                    .comparison(.column("id"), .eq, .literal("k ")), .isIn(.column("id"), ["k", "k  "]),
                    .comparison(.column("id"), .gt, .literal("k")),
                ] {
                    context.expectReference(
                        store, Query(table: "notes", filter: filter), rows: rows, schema: Fixtures.notes)
                }
                context.attempt("delete(ids: ['k '], from: notes)") { try store.delete(ids: ["k "], from: "notes") }
                context.expectRows(
                    store, "notes", rows.filter { $0.id != "k " }, "delete(ids: ['k ']) must keep 'k', 'k  ' and ' k'")
                context.expectLookup(store, "notes", "k ", nil, "delete(ids: ['k '])")
                context.expectLookup(store, "notes", "k", rows[0], "delete(ids: ['k '])")
            },
            ConformanceCase("1 MiB strings round-trip", requires: .largeValues) { context in
                let store = try context.openStore(Fixtures.schema)
                let ascii = String(repeating: "abcdefghijklmnop", count: 65_536)
                let multibyte = String(repeating: "é😀", count: 1_048_576 / 6 + 1)
                let rows = [
                    Item(id: "ascii", values: ["s": .string(ascii)]),
                    Item(id: "multibyte", values: ["s": .string(multibyte), "j": .json("[\"" + ascii + "\"]")]),
                ]
                context.attempt("upsert(values) of 1 MiB strings") { try store.upsert(rows, into: "values") }
                for row in rows {
                    context.expectLookup(store, "values", row.id, row, "upsert then lookup of a 1 MiB string")
                }
                context.expectRows(store, "values", rows, "upsert then read of 1 MiB strings")
            },
            ConformanceCase("an upsert replaces the whole row") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Fixtures.note("a", title: "old", priority: 1, score: 2.5, done: true)], into: "notes")
                let replacement = Fixtures.note("a", priority: 9)
                try store.upsert([replacement], into: "notes")
                context.expectLookup(
                    store, "notes", "a", replacement, "second upsert of id 'a' without title, score, done")
                context.expectRows(store, "notes", [replacement], "second upsert of id 'a'")
            },
            ConformanceCase("the last of duplicate ids in one upsert wins") { context in
                let store = try context.openStore(Fixtures.schema)
                let last = Fixtures.note("dup", title: "third")
                context.attempt("upsert(notes) of id 'dup' three times in one batch") {
                    try store.upsert(
                        [
                            Fixtures.note("dup", title: "first", priority: 1), Fixtures.note("dup", title: "second"),
                            last,
                        ], into: "notes")
                }
                context.expectRows(store, "notes", [last], "upsert of id 'dup' three times in one batch")
            },
            ConformanceCase("empty upserts and deletes do nothing") { context in
                let store = try context.openStore(Fixtures.schema)
                let row = Fixtures.note("a", priority: 1)
                try store.upsert([row], into: "notes")
                context.attempt("upsert(notes) of no items") { try store.upsert([], into: "notes") }
                context.attempt("delete(ids: [], from: notes)") { try store.delete(ids: [], from: "notes") }
                context.attempt("write(_:) with an empty body") { try store.write { _ in } }
                context.expectRows(store, "notes", [row], "empty upsert, delete and transaction")
            },
            ConformanceCase("an explicit null reads back as absent") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Item(id: "a", values: ["title": .null, "priority": 1])], into: "notes")
                context.expectLookup(
                    store, "notes", "a", Fixtures.note("a", priority: 1), "upsert(notes, id 'a') with title null")
            },
            ConformanceCase("stored values are the normalized values") { context in
                let store = try context.openStore(Fixtures.schema)
                let written = Item(
                    id: "a", values: ["d": .int(3), "i": .double(4), "t": .string("1969-12-31T23:59:59.999Z")])
                context.attempt("upsert(values, id 'a') needing conversion") {
                    try store.upsert([written], into: "values")
                }
                let expected = Item(
                    id: "a", values: ["d": .double(3), "i": .int(4), "t": .date(Timestamp(millisecondsSince1970: -1))])
                context.expectLookup(
                    store, "values", "a", expected,
                    "upsert of int into double, integral double into integer, ISO text into date")
            },
            ConformanceCase("server writes drop unknown columns") { context in
                let store = try context.openStore(Fixtures.schema)
                var item = Fixtures.note("s1", title: "from server")
                item["serverOnly"] = "dropped"
                item["another_unknown"] = 42
                context.attempt("upsert(notes, id 's1', origin: .server) with unknown columns") {
                    try store.upsert([item], into: "notes", origin: .server)
                }
                context.expectLookup(
                    store, "notes", "s1", Fixtures.note("s1", title: "from server"),
                    "server upsert with unknown columns")
                var inserted = Fixtures.note("s2", title: "inserted from server")
                inserted["serverOnly"] = "dropped"
                _ = context.attempt(
                    "transaction.insertNew(notes, id 's2', origin: .server) with unknown column 'serverOnly'"
                ) {
                    try store.write { try $0.insertNew([inserted], into: "notes", origin: .server) }
                }
                context.expectLookup(
                    store, "notes", "s2", Fixtures.note("s2", title: "inserted from server"),
                    "server insertNew with unknown columns")
            },
            ConformanceCase("local writes reject unknown columns") { context in
                let store = try context.openStore(Fixtures.schema)
                var item = Fixtures.note("l1", title: "local")
                item["localOnly"] = "rejected"
                context.expectThrows(
                    "upsert(notes, id 'l1', origin: .local) with column 'localOnly'", code: .unknownColumn,
                    mentioning: ["notes", "localOnly", "l1"]
                ) { try store.upsert([item], into: "notes", origin: .local) }
                context.expectThrows(
                    "transaction.insertNew(notes, id 'l1', origin: .local) with column 'localOnly'",
                    code: .unknownColumn, mentioning: ["notes", "localOnly", "l1"]
                ) { try store.write { try $0.insertNew([item], into: "notes", origin: .local) } }
                context.expectRows(store, "notes", [], "a rejected local upsert or insertNew must store nothing")
            },
            ConformanceCase("system columns round-trip") { context in
                let store = try context.openStore(Fixtures.schema)
                var item = Fixtures.note("sys", title: "t")
                item["createdAt"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_001))
                item["updatedAt"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_999))
                item["version"] = "AAAAAAAAB9E="
                item["deleted"] = true
                context.attempt("upsert(notes, id 'sys') with system columns") {
                    try store.upsert([item], into: "notes", origin: .server)
                }
                context.expectLookup(store, "notes", "sys", item, "upsert with createdAt, updatedAt, version, deleted")
            },
            ConformanceCase("many rows in one upsert, then delete by ids") { context in
                let store = try context.openStore(Fixtures.schema)
                let rows = (0..<1000).map { Fixtures.note("n\($0)", title: "note \($0)", priority: Int64($0 % 7)) }
                context.attempt("upsert(notes) of 1000 rows") { try store.upsert(rows, into: "notes") }
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 1000,
                    "count(notes) after 1000 upserts")
                let doomed = rows.indices.filter { $0 % 3 == 0 }.map { rows[$0].id }
                context.attempt("delete(ids:) of \(doomed.count) rows from notes") {
                    try store.delete(ids: doomed, from: "notes")
                }
                context.expectRows(
                    store, "notes", rows.indices.filter { $0 % 3 != 0 }.map { rows[$0] },
                    "delete(ids:) of every third note")
            },
            ConformanceCase("insertNew inserts absent ids, keeps present rows and their index entries") { context in
                let store = try context.openStore(Fixtures.schema)
                let old = Fixtures.note("kept", title: "old", priority: 1)
                try store.upsert([old], into: "notes")
                let new = [
                    Fixtures.note("a", title: "first a", priority: 2), Fixtures.note("kept", title: "new", priority: 3),
                    Fixtures.note("b", title: "b", priority: 3), Fixtures.note("a", title: "second a", priority: 4),
                ]
                let present = context.attempt("insertNew(notes) of ids a, kept, b, a") {
                    try store.write { try $0.insertNew(new, into: "notes", origin: .local) }
                }
                context.expectEqual(present, ["kept", "a"], "insertNew(notes): the ids already there, in order")
                context.expectRows(
                    store, "notes", [new[0], old, new[2]], "insertNew keeps 'kept' and the first 'a' as they were")
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 3,
                    "count(notes) after insertNew of ids a, kept, b, a")
                // The index on priority must hold the inserted rows and still the kept one.
                for (priority, ids) in [(Int64(1), ["kept"]), (2, ["a"]), (3, ["b"]), (4, [])] {
                    let query = Query(
                        table: "notes", filter: .comparison(.column("priority"), .eq, .literal(.int(priority))))
                    context.expectEqual(
                        context.attempt("read(notes) where priority eq \(priority)") {
                            try store.read(query).items.map(\.id)
                        }, ids, "read(notes) where priority eq \(priority) after insertNew")
                }
                context.expectThrows("insertNew(notes) of an empty id", code: .invalidValue) {
                    try store.write { try $0.insertNew([Item(id: "")], into: "notes", origin: .local) }
                }
                // A present id listed twice is reported twice, once per item (a set of present ids is not).
                let again = [
                    Fixtures.note("kept", title: "again"), Fixtures.note("c", priority: 5),
                    Fixtures.note("kept", title: "once more"), Fixtures.note("c", priority: 6),
                ]
                let presentAgain = context.attempt("insertNew(notes) of ids kept, c, kept, c") {
                    try store.write { try $0.insertNew(again, into: "notes", origin: .local) }
                }
                context.expectEqual(
                    presentAgain, ["kept", "kept", "c"],
                    "insertNew(notes) of ids kept, c, kept, c: the ids already there, one per item, in order")
                context.expectRows(
                    store, "notes", [new[0], old, new[2], again[1]],
                    "insertNew(notes) of ids kept, c, kept, c keeps 'kept' and inserts the first 'c'")
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 4,
                    "count(notes) after insertNew of ids kept, c, kept, c")
            },
        ])
}

/// Values at the edges of every type, one row per value in the `values` fixture table.
enum ValueSamples {
    static let strings: [String] = [
        "", " ", "a", "A", "caf\u{E9}", "cafe\u{301}", "日本語", "😀", "\u{10FFFF}", "\u{FFFD}", "O'Brien", "quote\"",
        "back\\slash", "line\nbreak", "tab\t", "nul\u{0}inside", "%_*?[", "trailing space ", "\u{202E}rtl",
    ]
    static let integers: [Int64] = [
        0, 1, -1, .min, .max, .min + 1, .max - 1, 9_007_199_254_740_993, -9_007_199_254_740_993,
    ]
    static let doubles: [Double] = [
        0.1, -0.0, 0.0, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude,
        -Double.greatestFiniteMagnitude, 2.2250738585072014e-308,
        1.0 / 3.0, 1e-7, 123_456_789.123_456_78, 9_007_199_254_740_992, -2.5,
    ]
    static let dates: [Timestamp] = [
        .epoch, .minimum, .maximum, Timestamp(millisecondsSince1970: -1), Timestamp(millisecondsSince1970: 1),
        Timestamp(millisecondsSince1970: 999), Timestamp(millisecondsSince1970: -999),
        Timestamp(millisecondsSince1970: -1000),
        Timestamp(millisecondsSince1970: 951_827_696_789), Timestamp(millisecondsSince1970: -2_208_988_800_001),
    ]
    static let json: [String] = ["[]", "{}", "[1,\"a\",null,true]", "{\"k\":{\"n\":[1.5,false]},\"é\":\"\u{1F600}\"}"]

    static var rows: [Item] {
        var rows: [Item] = []
        func add(_ column: String, _ values: [Value]) {
            for (index, value) in values.enumerated() {
                rows.append(Item(id: "\(column)-\(index)", values: [column: value]))
            }
        }
        add("b", [.bool(true), .bool(false)])
        add("i", integers.map(Value.int))
        add("d", doubles.map(Value.double))
        add("s", strings.map(Value.string))
        add("t", dates.map(Value.date))
        add("j", json.map(Value.json))
        return rows
    }
}
