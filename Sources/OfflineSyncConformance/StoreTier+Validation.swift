import OfflineSync

extension StoreTierGroups {
    /// Bad names, bad values, bad ids and ill-typed queries are rejected with errors that name them.
    static let validation = ConformanceGroup(
        "validation", tier: .store,
        cases: [
            ConformanceCase("bad table names are rejected at open") { context in
                for name in [
                    "", "1table", "has space", "dash-ed", "caf\u{E9}", "semi;colon", "quote\"d",
                    String(repeating: "t", count: 129),
                ] {
                    let store = try context.makeStore()
                    let schema = StoreSchema([TableSchema(name, columns: [Column("n", .integer)])])
                    context.expectThrows(
                        "open(schema:) with table name '\(RowDifference.escaped(name))'", code: .invalidName,
                        mentioning: name.isEmpty ? ["table"] : ["table", String(name.prefix(40))]
                    ) { try store.open(schema: schema) }
                }
            },
            ConformanceCase("bad column names are rejected at open") { context in
                for name in ["", "9lives", "with space", "a.b", "naïve", "x'y", String(repeating: "c", count: 129)] {
                    let store = try context.makeStore()
                    let schema = StoreSchema([TableSchema("good", columns: [Column(name, .integer)])])
                    context.expectThrows(
                        "open(schema:) with table 'good' column name '\(RowDifference.escaped(name))'",
                        code: .invalidName,
                        mentioning: name.isEmpty ? ["column"] : ["column", String(name.prefix(40))]
                    ) { try store.open(schema: schema) }
                }
            },
            ConformanceCase("names of the longest length are accepted") { context in
                let tableName = "t" + String(repeating: "a", count: Identifier.maximumLength - 1)
                let columnName = "c" + String(repeating: "b", count: Identifier.maximumLength - 1)
                let table = TableSchema(
                    tableName, columns: [Column(columnName, .string)],
                    indexes: [
                        TableIndex("i" + String(repeating: "x", count: Identifier.maximumLength - 1), on: [columnName])
                    ])
                let store = try context.makeStore()
                guard
                    context.attempt(
                        "open(schema:) with table and column names of \(Identifier.maximumLength) characters",
                        { try store.open(schema: StoreSchema([table])) }) != nil
                else { return }
                let item = Item(id: "a", values: [columnName: "v"])
                context.attempt("upsert(\(tableName.prefix(8))…, id 'a')") { try store.upsert([item], into: tableName) }
                context.expectRows(
                    store, tableName, [item], "upsert into a table with names of \(Identifier.maximumLength) characters"
                )
            },
            ConformanceCase("table and column names match exactly, not by letter case") { context in
                let store = try context.openStore(Fixtures.schema)
                context.expectThrows("read(NOTES)", code: .unknownTable, mentioning: ["NOTES"]) {
                    try store.read(Query(table: "NOTES"))
                }
                context.expectThrows("upsert(Notes, id 'a')", code: .unknownTable, mentioning: ["Notes"]) {
                    try store.upsert([Item(id: "a")], into: "Notes")
                }
                context.expectThrows(
                    "read(notes) where TITLE eq 'x'", code: .unknownColumn, mentioning: ["notes", "TITLE"]
                ) {
                    try store.read(Query(table: "notes", filter: .comparison(.column("TITLE"), .eq, .literal("x"))))
                }
                context.expectThrows(
                    "upsert(notes, id 'a') with column 'Title'", code: .unknownColumn,
                    mentioning: ["notes", "Title", "a"]
                ) {
                    try store.upsert([Item(id: "a", values: ["Title": "x"])], into: "notes")
                }
                context.attempt("upsert(notes, id 's', origin: .server) with column 'Title'") {
                    try store.upsert(
                        [Item(id: "s", values: ["Title": "dropped", "title": "kept"])], into: "notes", origin: .server)
                }
                context.expectRows(
                    store, "notes", [Fixtures.note("s", title: "kept")], "server upsert with 'Title' next to 'title'")
            },
            ConformanceCase("inconsistent schemas are rejected at open") { context in
                let schemas: [(String, StoreSchema, [String])] = [
                    (
                        "column 'n' declared twice",
                        StoreSchema([TableSchema("t", columns: [Column("n", .integer), Column("N", .string)])]),
                        ["t", "N"]
                    ),
                    (
                        "a column named 'id'", StoreSchema([TableSchema("t", columns: [Column("id", .string)])]),
                        ["t", "id"]
                    ),
                    (
                        "table 't' declared twice",
                        StoreSchema([TableSchema("t", columns: []), TableSchema("T", columns: [])]), ["T"]
                    ),
                    (
                        "an index on a missing column",
                        StoreSchema([
                            TableSchema("t", columns: [Column("n", .integer)], indexes: [TableIndex("ix", on: ["m"])])
                        ]), ["t", "ix", "m"]
                    ),
                    (
                        "system column 'updatedAt' as a string",
                        StoreSchema([TableSchema("t", columns: [Column("updatedAt", .string)])]), ["t", "updatedAt"]
                    ),
                ]
                for (what, schema, words) in schemas {
                    let store = try context.makeStore()
                    context.expectThrows("open(schema:) with \(what)", code: .invalidSchema, mentioning: words) {
                        try store.open(schema: schema)
                    }
                }
            },
            ConformanceCase("values of the wrong type are rejected and nothing is stored") { context in
                let store = try context.openStore(Fixtures.schema)
                let bad: [(String, Value)] = [
                    ("d", .double(.nan)), ("d", .double(.infinity)), ("d", .double(-.infinity)), ("d", .string("1.5")),
                    ("i", .double(1.5)), ("i", .double(1e19)), ("i", .string("1")), ("i", .bool(true)),
                    ("b", .int(1)), ("b", .string("true")), ("s", .int(5)), ("s", .json("[]")),
                    ("t", .string("yesterday")),
                    ("t", .int(0)),
                    ("t", .date(Timestamp(millisecondsSince1970: Timestamp.minimum.millisecondsSince1970 - 1))),
                    ("t", .date(Timestamp(millisecondsSince1970: Timestamp.maximum.millisecondsSince1970 + 1))),
                    ("j", .string("[]")), ("j", .double(0)),
                    ("j", .json("{bad")), ("j", .json("")), ("j", .json("42")), ("j", .json("\"text\"")),
                    ("j", .json("[1] [2]")), ("j", .json("{\"a\":1,}")),
                ]
                for (index, (column, value)) in bad.enumerated() {
                    let id = "bad-\(index)"
                    let batch = [
                        Item(id: "good-\(index)", values: ["s": "fine"]), Item(id: id, values: [column: value]),
                    ]
                    for origin in [WriteOrigin.local, .server] {
                        context.expectThrows(
                            "upsert(values, id '\(id)', origin: .\(origin)) column '\(column)' = \(RowDifference.show(value))",
                            code: .invalidValue,
                            mentioning: ["values", column, id]
                        ) {
                            try store.upsert(batch, into: "values", origin: origin)
                        }
                        // insertNew checks the values it inserts as an upsert does (an encoder of its own may not).
                        context.expectThrows(
                            "transaction.insertNew(values, id '\(id)', origin: .\(origin)) column '\(column)' = \(RowDifference.show(value))",
                            code: .invalidValue,
                            mentioning: ["values", column, id]
                        ) {
                            try store.write { try $0.insertNew(batch, into: "values", origin: origin) }
                        }
                    }
                }
                context.expectRows(
                    store, "values", [],
                    "rejected upserts and insertNews from either origin (each batch held one good row before the bad one)"
                )
            },
            ConformanceCase("empty, oversized and NUL ids are rejected") { context in
                let store = try context.openStore(Fixtures.schema)
                let oversized = String(repeating: "x", count: TableSchema.maximumIdLength + 1)
                let oversizedMultibyte = String(repeating: "\u{E9}", count: TableSchema.maximumIdLength / 2 + 1)
                for (what, id) in [
                    ("empty id", ""), ("id of 256 bytes", oversized), ("id of 256 UTF-8 bytes", oversizedMultibyte),
                    ("id with U+0000", "a\u{0}b"),
                ] {
                    context.expectThrows("upsert(notes) with an \(what)", code: .invalidValue, mentioning: ["notes"]) {
                        try store.upsert([Item(id: id, values: [:])], into: "notes")
                    }
                }
                context.expectRows(store, "notes", [], "rejected ids")
                let longest = [
                    Item(id: String(repeating: "y", count: TableSchema.maximumIdLength)),
                    Item(id: String(repeating: "\u{E9}", count: TableSchema.maximumIdLength / 2) + "z"),
                ]
                context.attempt("upsert(notes) of ids of exactly \(TableSchema.maximumIdLength) bytes") {
                    try store.upsert(longest, into: "notes")
                }
                context.expectRows(store, "notes", longest, "upsert of the longest ids")
            },
            ConformanceCase("unknown and badly named tables are rejected in every operation") { context in
                let store = try context.openStore(Fixtures.schema)
                for (table, code) in [("nosuch", OfflineSyncError.Code.unknownTable), ("bad name", .invalidName)] {
                    context.expectThrows("read(\(table))", code: code, mentioning: [table]) {
                        try store.read(Query(table: table))
                    }
                    context.expectThrows("lookup(\(table), id 'a')", code: code, mentioning: [table]) {
                        try store.lookup(table: table, id: "a")
                    }
                    context.expectThrows("upsert(\(table), id 'a')", code: code, mentioning: [table]) {
                        try store.upsert([Item(id: "a")], into: table)
                    }
                    context.expectThrows("transaction.delete(ids:) from \(table)", code: code, mentioning: [table]) {
                        try store.write { try $0.delete(ids: ["a"], from: table) }
                    }
                }
            },
            ConformanceCase("ill-typed queries are rejected naming the operand") { context in
                let store = try context.openStore(Fixtures.schema)
                let queries: [(FilterExpression, OfflineSyncError.Code, [String])] = [
                    (.comparison(.column("nope"), .eq, .literal(1)), .unknownColumn, ["notes", "nope"]),
                    (.comparison(.column("priority"), .eq, .literal("high")), .invalidQuery, ["notes", "priority"]),
                    (.comparison(.column("due"), .gt, .literal(5)), .invalidQuery, ["notes", "due"]),
                    (.column("priority"), .invalidQuery, ["notes", "priority"]),
                    (
                        .function(.startsWith, [.column("priority"), .literal("1")]), .invalidQuery,
                        ["notes", "startswith"]
                    ),
                    (.function(.year, [.column("title")]), .invalidQuery, ["notes", "year"]),
                    (.isIn(.column("done"), [.int(1)]), .invalidQuery, ["notes", "done"]),
                    (.not(.column("title")), .invalidQuery, ["notes", "title"]),
                ]
                for (filter, code, words) in queries {
                    let query = Query(table: "notes", filter: filter)
                    context.expectThrows("read(notes) \(query)", code: code, mentioning: words) {
                        try store.read(query)
                    }
                }
                context.expectThrows(
                    "read(notes) ordered by 'nope'", code: .unknownColumn, mentioning: ["notes", "nope"]
                ) {
                    try store.read(Query(table: "notes", orderBy: [SortKey("nope")]))
                }
            },
            ConformanceCase("names starting with a prefix the store reserves are rejected at open") { context in
                let probe = try context.makeStore()
                for prefix in probe.reservedNamePrefixes {
                    let name = prefix.uppercased() + "x"
                    let tables = [
                        ("table", TableSchema(name, columns: [Column("n", .integer)])),
                        ("column", TableSchema("good", columns: [Column(name, .integer)])),
                        (
                            "index",
                            TableSchema(
                                "good", columns: [Column("n", .integer)], indexes: [TableIndex(name, on: ["n"])])
                        ),
                    ]
                    for (kind, table) in tables {
                        let store = try context.makeStore()
                        context.expectThrows(
                            "open(schema:) with \(kind) name '\(name)' (reserved prefix '\(prefix)')",
                            code: .invalidName,
                            mentioning: [kind, name]
                        ) { try store.open(schema: StoreSchema([table])) }
                    }
                    // What a reopen adds is checked as well, and a rejected reopen changes nothing.
                    guard context.suite.capabilities.contains(.persistent) else { continue }
                    let original = TableSchema("good", columns: [Column("n", .integer)])
                    let widened: [(String, StoreSchema)] = [
                        ("table", StoreSchema([original, TableSchema(name, columns: [Column("n", .integer)])])),
                        (
                            "column",
                            StoreSchema([TableSchema("good", columns: [Column("n", .integer), Column(name, .integer)])])
                        ),
                        (
                            "index",
                            StoreSchema([
                                TableSchema(
                                    "good", columns: [Column("n", .integer)], indexes: [TableIndex(name, on: ["n"])])
                            ])
                        ),
                    ]
                    for (kind, schema) in widened {
                        let store = try context.openStore(StoreSchema([original]))
                        try store.close()
                        context.expectThrows(
                            "open(schema:) reopening table 'good' with an added \(kind) named '\(name)' (reserved prefix '\(prefix)')",
                            code: .invalidName,
                            mentioning: [kind, name]
                        ) { try store.open(schema: schema) }
                        try? store.close()
                        context.attempt("open(schema:) with the original schema after a rejected reopen") {
                            try store.open(schema: StoreSchema([original]))
                        }
                        guard
                            let stored = context.attempt(
                                "schema after a rejected reopen adding \(kind) '\(name)'", { try store.schema })
                        else { continue }
                        let names =
                            stored.tables.map(\.name)
                            + stored.tables.flatMap { $0.columns.map(\.name) + $0.indexes.map(\.name) }
                        context.expect(
                            !names.contains(name),
                            "schema after a rejected reopen adding \(kind) '\(name)' (reserved prefix '\(prefix)') lists it: \(names)"
                        )
                    }
                }
            },
        ])
}
