import OfflineSync

extension StoreTierGroups {
    /// Declaring tables, reopening (data kept, schema widened), the schema getter, unknown tables.
    static let schema = ConformanceGroup(
        "schema", tier: .store,
        cases: [
            ConformanceCase("declared tables start empty") { context in
                let store = try context.openStore(Fixtures.schema)
                for table in Fixtures.schema.tables {
                    let result = context.attempt("read(\(table.name))") {
                        try store.read(Query(table: table.name, includeTotalCount: true))
                    }
                    context.expectEqual(result?.items.count, 0, "read(\(table.name)) of a new store: row count")
                    context.expectEqual(result?.totalCount, 0, "read(\(table.name)) of a new store: total count")
                }
            },
            ConformanceCase("the schema getter answers the declared tables") { context in
                let store = try context.openStore(Fixtures.schema)
                guard let stored = context.attempt("schema", { try store.schema }) else { return }
                expectDeclares(context, stored, Fixtures.schema, "schema after open")
            },
            /// Replacements and deletes too: a store that replays a log on open must apply every
            /// record of an id in order (the last version wins, a delete's tombstone included), and
            /// one that caches writes must flush deletes as well as upserts.
            ConformanceCase("reopening keeps the data", requires: .persistent) { context in
                let store = try context.openStore(Fixtures.schema)
                let first = Fixtures.note("a", title: "first", priority: 1)
                let rows = [
                    Fixtures.note("a", title: "second", priority: 2), Fixtures.note("b", score: -0.0, done: true),
                ]
                try store.upsert([first, rows[1], Fixtures.note("c", title: "deleted by id")], into: "notes")
                try store.upsert([rows[0], Fixtures.note("d", priority: 100)], into: "notes")
                try store.delete(ids: ["c"], from: "notes")
                try store.delete(
                    matching: Query(table: "notes", filter: .comparison(.column("priority"), .eq, .literal(100))))
                try store.close()
                try store.open(schema: Fixtures.schema)
                let operation =
                    "upserts, a replacement of id 'a', delete(ids: ['c']) and a delete(matching:) of id 'd', then close() and open(schema:) with the same schema"
                context.expectRows(store, "notes", rows, operation)
                context.expectLookup(store, "notes", "a", rows[0], operation)
                for id in ["c", "d"] { context.expectLookup(store, "notes", id, nil, operation) }
            },
            ConformanceCase("reopening adds new columns and old rows read them as null", requires: .persistent) {
                context in
                let store = try context.openStore(Fixtures.schema)
                let old = Fixtures.note("old", title: "before")
                try store.upsert([old], into: "notes")
                try store.close()
                let widened = TableSchema(
                    "notes", columns: Fixtures.notes.columns + [Column("extra", .string), Column("rank", .integer)],
                    indexes: Fixtures.notes.indexes + [TableIndex("notes_rank", on: ["rank"])])
                try store.open(schema: StoreSchema([widened]))
                if let stored = context.attempt("schema after reopening with new columns", { try store.schema }) {
                    expectDeclares(context, stored, StoreSchema([widened]), "schema after reopening with new columns")
                }
                context.expectLookup(store, "notes", "old", old, "reopen with new columns 'extra', 'rank'")
                let query = Query(table: "notes", filter: .comparison(.column("extra"), .eq, .literal(.null)))
                let ids = context.attempt("read(notes) \(query)") { try store.read(query).items.map(\.id) }
                context.expectEqual(ids, ["old"], "read(notes) \(query) after adding column 'extra'")
                var new = Fixtures.note("new", title: "after")
                new["extra"] = "x"
                new["rank"] = 7
                context.attempt("upsert(notes, id 'new') with the new columns") {
                    try store.upsert([new], into: "notes")
                }
                context.expectLookup(store, "notes", "new", new, "upsert into new columns 'extra', 'rank'")
            },
            ConformanceCase("reopening adds new tables and keeps tables left out", requires: .persistent) { context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                let row = Fixtures.note("kept", priority: 3)
                try store.upsert([row], into: "notes")
                try store.close()
                let added = TableSchema("added", columns: [Column("n", .integer)], synced: false)
                try store.open(schema: StoreSchema([added]))
                if let stored = context.attempt("schema after reopening with only table 'added'", { try store.schema })
                {
                    expectDeclares(
                        context, stored, StoreSchema([Fixtures.notes, added]),
                        "schema after reopening with only table 'added'")
                }
                context.expectRows(store, "notes", [row], "reopen with a schema that leaves 'notes' out")
                let item = Item(id: "n1", values: ["n": 1])
                context.attempt("upsert(added, id 'n1')") { try store.upsert([item], into: "added") }
                context.expectRows(store, "added", [item], "upsert into table 'added' declared on reopen")
            },
            /// The stored schema is the union of every declaration: a reopen that declares a table with
            /// fewer columns or indexes (an older version of the app) drops none of them.
            ConformanceCase(
                "reopening keeps the columns and indexes a table's declaration leaves out", requires: .persistent
            ) { context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                var row = Fixtures.note("full", title: "t", priority: 2, score: 1.5, done: true)
                row["due"] = .date(Timestamp(millisecondsSince1970: 86_400_000))
                row["tags"] = .json("[\"a\"]")
                try store.upsert([row], into: "notes")
                try store.close()
                let narrowed = TableSchema("notes", columns: [Column("title", .string)])
                let reopened = "reopen with a declaration of notes holding only column 'title' and no index"
                try store.open(schema: StoreSchema([narrowed]))
                if let stored = context.attempt("schema after the \(reopened)", { try store.schema }) {
                    expectDeclares(context, stored, StoreSchema([Fixtures.notes]), "schema after the \(reopened)")
                }
                context.expectLookup(store, "notes", "full", row, reopened)
                let query = Query(table: "notes", filter: .comparison(.column("score"), .eq, .literal(1.5)))
                let ids = context.attempt("read(notes) \(query)") { try store.read(query).items.map(\.id) }
                context.expectEqual(ids, ["full"], "\(reopened): read(notes) \(query)")
                let new = Fixtures.note("new", title: "after", priority: 3, score: 0.5)
                context.attempt("upsert(notes, id 'new') with columns left out of the reopening declaration") {
                    try store.upsert([new], into: "notes")
                }
                context.expectLookup(store, "notes", "new", new, "\(reopened): upsert into columns left out")
            },
            /// What a reopen added (a column, an index, a table) stays when the next reopen declares
            /// the original schema again, as a backend comparing each declaration with the first
            /// one, instead of with the stored schema, would not.
            ConformanceCase("a widening is kept by later reopens that leave it out", requires: .persistent) {
                context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                try store.close()
                let widened = TableSchema(
                    "notes", columns: Fixtures.notes.columns + [Column("extra", .string)],
                    indexes: Fixtures.notes.indexes + [TableIndex("notes_extra", on: ["extra"])])
                let added = TableSchema("added", columns: [Column("n", .integer)], synced: false)
                try store.open(schema: StoreSchema([widened, added]))
                var row = Fixtures.note("w", title: "widened")
                row["extra"] = "x"
                let addedRow = Item(id: "a1", values: ["n": 1])
                context.attempt("upsert(notes, id 'w') into the added column 'extra'") {
                    try store.upsert([row], into: "notes")
                }
                context.attempt("upsert(added, id 'a1') into the added table") {
                    try store.upsert([addedRow], into: "added")
                }
                try store.close()
                let reopened =
                    "reopen with the original notes only, after a reopen that added column 'extra', index 'notes_extra' and table 'added'"
                try store.open(schema: StoreSchema([Fixtures.notes]))
                if let stored = context.attempt("schema after the \(reopened)", { try store.schema }) {
                    expectDeclares(context, stored, StoreSchema([widened, added]), "schema after the \(reopened)")
                }
                context.expectLookup(store, "notes", "w", row, reopened)
                context.expectRows(store, "added", [addedRow], reopened)
                let query = Query(table: "notes", filter: .comparison(.column("extra"), .eq, .literal("x")))
                let ids = context.attempt("read(notes) \(query)") { try store.read(query).items.map(\.id) }
                context.expectEqual(ids, ["w"], "\(reopened): read(notes) \(query)")
            },
            ConformanceCase("an index added on reopen covers the rows written before", requires: .persistent) {
                context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                let rows = (0..<12).map { index in
                    var item = Fixtures.note(
                        "i\(index)", title: "t\(index % 3)", score: Double(index % 4) - 1.5, done: index % 2 == 0)
                    item["due"] = .date(Timestamp(millisecondsSince1970: Int64(index % 5) * 86_400_000 - 1))
                    return item
                }
                try store.upsert(rows, into: "notes")
                try store.close()
                let indexed = TableSchema(
                    "notes", columns: Fixtures.notes.columns,
                    indexes: Fixtures.notes.indexes + [
                        TableIndex("notes_done", on: ["done"]), TableIndex("notes_due_score", on: ["due", "score"]),
                    ])
                try store.open(schema: StoreSchema([indexed]))
                let queries: [Query] = [
                    Query(table: "notes", filter: .comparison(.column("done"), .eq, .literal(true))),
                    Query(
                        table: "notes", filter: .comparison(.column("due"), .lt, .literal(.date(.epoch))),
                        orderBy: [SortKey("due")]),
                    Query(
                        table: "notes", filter: .comparison(.column("score"), .ge, .literal(0)),
                        orderBy: [SortKey("due"), SortKey("score")], top: 4),
                ]
                for query in queries {
                    context.expectReference(store, query, rows: rows, schema: indexed)
                }
            },
            ConformanceCase("reopening with a changed column type is rejected", requires: .persistent) { context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                let row = Fixtures.note("a", priority: 5)
                try store.upsert([row], into: "notes")
                try store.close()
                let retyped = TableSchema("notes", columns: [Column("priority", .string)])
                context.expectThrows(
                    "open(schema:) declaring notes.priority as string instead of integer",
                    code: .invalidSchema, mentioning: ["notes", "priority"]
                ) { try store.open(schema: StoreSchema([retyped])) }
                try? store.close()
                context.attempt("open(schema:) with the original schema after a rejected one") {
                    try store.open(schema: StoreSchema([Fixtures.notes]))
                }
                context.expectRows(store, "notes", [row], "open(schema:) after a rejected retyping")
            },
            ConformanceCase(
                "reopening with a changed column type is rejected while the table is empty", requires: .persistent
            ) {
                context in
                let store = try context.openStore(StoreSchema([Fixtures.notes, Fixtures.left]))
                try store.upsert([Item(id: "l1", values: ["n": 1])], into: "lefts")
                try store.close()
                for (table, column, type) in [
                    ("notes", "priority", ColumnType.string), ("notes", "updatedAt", .integer),
                    ("notes", "tags", .string),
                ] {
                    let retyped = TableSchema(table, columns: [Column(column, type)], synced: false)
                    context.expectThrows(
                        "open(schema:) declaring the empty table's \(table).\(column) as \(type.rawValue)",
                        code: .invalidSchema, mentioning: [table, column]
                    ) { try store.open(schema: StoreSchema([retyped])) }
                    try? store.close()
                }
                context.attempt("open(schema:) with the original schema after rejected retypings") {
                    try store.open(schema: StoreSchema([Fixtures.notes]))
                }
                if let stored = context.attempt("schema after rejected retypings", { try store.schema }) {
                    expectDeclares(
                        context, stored, StoreSchema([Fixtures.notes, Fixtures.left]), "schema after rejected retypings"
                    )
                }
                let row = Fixtures.note("a", priority: 5)
                context.attempt("upsert(notes, id 'a') with an integer priority after rejected retypings") {
                    try store.upsert([row], into: "notes")
                }
                context.expectRows(store, "notes", [row], "upsert after rejected retypings")
                context.expectRows(
                    store, "lefts", [Item(id: "l1", values: ["n": 1])], "rejected retypings of another table")
            },
            /// A caller that does not know the tables (a server reopening a store another process
            /// widened, a tool inspecting a file) opens with an empty schema to read the stored one.
            ConformanceCase("reopening with an empty schema keeps every table and its rows", requires: .persistent) {
                context in
                let store = try context.openStore(Fixtures.schema)
                let row = Fixtures.note("kept", title: "t", priority: 1)
                try store.upsert([row], into: "notes")
                try store.close()
                let reopened = "open(schema:) with an empty schema after close()"
                guard context.attempt(reopened, { try store.open(schema: StoreSchema([])) }) != nil else { return }
                if let stored = context.attempt("schema after the \(reopened)", { try store.schema }) {
                    expectDeclares(context, stored, Fixtures.schema, "schema after the \(reopened)")
                }
                context.expectRows(store, "notes", [row], reopened)
                let item = Item(id: "l1", values: ["n": 1])
                context.attempt("upsert(lefts, id 'l1') after the \(reopened)") {
                    try store.upsert([item], into: "lefts")
                }
                context.expectRows(store, "lefts", [item], "upsert(lefts, id 'l1') after the \(reopened)")
            },
            ConformanceCase("an undeclared table is an unknownTable error") { context in
                let store = try context.openStore(Fixtures.schema)
                let table = "undeclared"
                context.expectThrows("read(\(table))", code: .unknownTable, mentioning: [table]) {
                    try store.read(Query(table: table))
                }
                context.expectThrows("lookup(\(table), id 'a')", code: .unknownTable, mentioning: [table]) {
                    try store.lookup(table: table, id: "a")
                }
                context.expectThrows("upsert(\(table), id 'a')", code: .unknownTable, mentioning: [table]) {
                    try store.upsert([Item(id: "a")], into: table)
                }
                context.expectThrows("delete(ids: ['a'], from: \(table))", code: .unknownTable, mentioning: [table]) {
                    try store.delete(ids: ["a"], from: table)
                }
                context.expectThrows("delete(matching:) on \(table)", code: .unknownTable, mentioning: [table]) {
                    try store.delete(matching: Query(table: table))
                }
            },
            ConformanceCase("opening an open store throws and closing twice does not") { context in
                let store = try context.openStore(Fixtures.schema)
                context.expectThrows("open(schema:) on a store that is already open") {
                    try store.open(schema: Fixtures.schema)
                }
                context.attempt("close()") { try store.close() }
                context.attempt("close() of a closed store") { try store.close() }
            },
            ConformanceCase("a closed store refuses to work") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.close()
                context.expectThrows("schema of a closed store", code: .notOpen) { try store.schema }
                context.expectThrows("read(notes) on a closed store") { try store.read(Query(table: "notes")) }
                context.expectThrows("upsert(notes, id 'a') on a closed store") {
                    try store.upsert([Item(id: "a")], into: "notes")
                }
                // Every other method too: a closed handle is not an empty table.
                context.expectThrows("lookup(notes, id 'a') on a closed store") {
                    try store.lookup(table: "notes", id: "a")
                }
                context.expectThrows("count(notes) on a closed store") { try store.count("notes") }
                context.expectThrows("delete(ids: ['a'], from: notes) on a closed store") {
                    try store.delete(ids: ["a"], from: "notes")
                }
                context.expectThrows("delete(matching:) on notes of a closed store") {
                    try store.delete(matching: Query(table: "notes"))
                }
                context.expectThrows("write(_:) with an empty body on a closed store") { try store.write { _ in } }
            },
            /// Only another process or instance changes the stored schema: this instance's own
            /// opens, widening ones too, and its writes do not count.
            ConformanceCase("storedSchemaChanged() ignores the instance's own opens and writes", requires: .persistent)
            {
                context in
                let store = try context.openStore(StoreSchema([Fixtures.notes]))
                context.expectEqual(
                    context.attempt("storedSchemaChanged() after the first open") { try store.storedSchemaChanged() },
                    false, "storedSchemaChanged() after the first open")
                try store.upsert([Fixtures.note("a", priority: 1)], into: "notes")
                context.expectEqual(
                    context.attempt("storedSchemaChanged() after an upsert into notes") {
                        try store.storedSchemaChanged()
                    }, false, "storedSchemaChanged() after an upsert into notes")
                try store.close()
                let widened = TableSchema(
                    "notes", columns: Fixtures.notes.columns + [Column("extra", .string)],
                    indexes: Fixtures.notes.indexes + [TableIndex("notes_extra", on: ["extra"])])
                let added = TableSchema("added", columns: [Column("n", .integer)], synced: false)
                for (what, schema) in [
                    (
                        "a reopen adding column 'extra', index 'notes_extra' and table 'added'",
                        StoreSchema([widened, added])
                    ),
                    ("a reopen declaring the original notes only", StoreSchema([Fixtures.notes])),
                ] {
                    try? store.close()
                    guard context.attempt("open(schema:): \(what)", { try store.open(schema: schema) }) != nil else {
                        continue
                    }
                    context.expectEqual(
                        context.attempt("storedSchemaChanged() after \(what)") { try store.storedSchemaChanged() },
                        false,
                        "storedSchemaChanged() after \(what)")
                }
            },
        ] + wideningCases)

    /// Checks that `stored` declares every table, column (with its type) and index of `declared`.
    private static func expectDeclares(
        _ context: CaseContext, _ stored: StoreSchema, _ declared: StoreSchema, _ operation: String
    ) {
        for table in declared.tables {
            guard let found = stored.table(named: table.name) else {
                context.fail(
                    "\(operation): table '\(table.name)' is missing; the schema lists \(stored.tables.map(\.name))")
                continue
            }
            if found.synced != table.synced {
                context.fail(
                    "\(operation): table '\(table.name)' should be \(table.synced ? "synced" : "unsynced"), found \(found.synced ? "synced" : "unsynced") with columns \(found.columns.map(\.name))"
                )
            }
            for column in table.columns where found.column(named: column.name)?.type != column.type {
                context.fail(
                    "\(operation): table '\(table.name)' column '\(column.name)' should be \(column.type.rawValue), found \(found.column(named: column.name)?.type.rawValue ?? "no such column")"
                )
            }
            for index in table.indexes where !found.indexes.contains(index) {
                context.fail(
                    "\(operation): table '\(table.name)' index '\(index.name)' on \(index.columns) is missing; found \(found.indexes.map(\.name))"
                )
            }
        }
    }
}
