import OfflineSync

extension StoreTierGroups {
    /// Rule 1 through every method after a reopen: the columns a reopen added read back through
    /// `read` (with and without a selection, in filters and orderings) and `lookup`, inside and
    /// outside a transaction; a table a reopen left out written by every write method; a reopen
    /// rejected for a retyped column leaving everything else it declared undone.
    static let wideningCases: [ConformanceCase] = [
        ConformanceCase("columns added by a reopen are read through every method", requires: .persistent) { context in
            let store = try context.openStore(StoreSchema([Fixtures.notes]))
            let old = [Fixtures.note("old1", title: "b", priority: 1), Fixtures.note("old2", title: "a")]
            try store.upsert(old, into: "notes")
            try store.close()
            let widened = TableSchema(
                "notes", columns: Fixtures.notes.columns + [Column("extra", .string), Column("rank", .integer)],
                indexes: [TableIndex("notes_extra", on: ["extra"])])
            try store.open(schema: StoreSchema([widened]))
            var rows = old
            for (position, extra) in ["x", "", "y", "x"].enumerated() {
                var row = Fixtures.note(
                    "new\(position)", title: position % 2 == 0 ? "a" : "c", priority: Int64(position))
                row["extra"] = .string(extra)
                if position != 1 { row["rank"] = .int(Int64(3 - position)) }
                rows.append(row)
            }
            context.attempt("upsert(notes) of rows with the added columns (local and server)") {
                try store.write { transaction in
                    try transaction.upsert(Array(rows[2...3]), into: "notes", origin: .local)
                    try transaction.upsert([rows[4]], into: "notes", origin: .server)
                    _ = try transaction.insertNew([rows[5]], into: "notes", origin: .local)
                }
            }
            let table = try store.schema.table(named: "notes") ?? widened
            let extra = FilterExpression.column("extra")
            let queries: [Query] = [
                Query(table: "notes"), Query(table: "notes", selection: ["extra", "rank"]),
                Query(table: "notes", selection: ["title"]), Query(table: "notes", selection: ["id", "rank", "extra"]),
                Query(table: "notes", filter: .comparison(extra, .eq, .literal("x"))),
                Query(table: "notes", filter: .comparison(extra, .eq, .literal(.null))),
                Query(table: "notes", filter: .comparison(extra, .ne, .literal("x")), selection: ["extra"]),
                Query(table: "notes", filter: .comparison(.column("rank"), .ge, .literal(1)), includeTotalCount: true),
                Query(table: "notes", filter: .function(.startsWith, [extra, .literal("")])),
                Query(table: "notes", orderBy: [SortKey("rank", descending: true)]),
                Query(table: "notes", orderBy: [SortKey("extra"), SortKey("title", descending: true)], top: 4),
                Query(table: "notes", orderBy: [SortKey("rank")], selection: ["title"]),
            ]
            for query in queries {
                context.expectReference(store, query, rows: rows, schema: table)
            }
            for row in rows {
                context.expectLookup(store, "notes", row.id, row, "after a reopen added 'extra', 'rank'")
            }
            context.rollingBack(store, "write(_:) reading the added columns inside a transaction") { transaction in
                var pending = Fixtures.note("pending", title: "p")
                pending["extra"] = "x"
                pending["rank"] = 9
                try transaction.upsert([pending], into: "notes", origin: .local)
                for query in queries {
                    if let difference = Reference.difference(
                        query, rows: (rows + [pending]).compactMap { try? table.normalize($0, origin: .local) },
                        schema: table, answer: { try transaction.read(query) })
                    {
                        context.fail("transaction.read(notes) \(query) after a reopen added columns: \(difference)")
                    }
                }
                for row in [rows[0], rows[3], pending] {
                    let found = try transaction.lookup(table: "notes", id: row.id)
                    if let difference = RowDifference.first(expected: [row], actual: found.map { [$0] } ?? []) {
                        context.fail(
                            "transaction.lookup(notes, id '\(row.id)') after a reopen added columns: \(difference)")
                    }
                }
            }
        },
        ConformanceCase("a table left out of a reopen stays writable by every write method", requires: .persistent) {
            context in
            let store = try context.openStore(StoreSchema([Fixtures.notes, Fixtures.left]))
            try store.upsert([Item(id: "a", values: ["n": 1]), Item(id: "b", values: ["n": 2])], into: "lefts")
            for reopen in [StoreSchema([Fixtures.notes]), StoreSchema([])] {
                try store.close()
                try store.open(schema: reopen)
                let operation = "after a reopen declaring \(reopen.tables.isEmpty ? "no table" : "only 'notes'")"
                try store.upsert([Item(id: "a", values: ["n": 1]), Item(id: "b", values: ["n": 2])], into: "lefts")
                context.attempt("write(_:) on table 'lefts' \(operation)") {
                    try store.write { transaction in
                        try transaction.upsert([Item(id: "c", values: ["n": 3])], into: "lefts", origin: .local)
                        try transaction.upsert(
                            [Item(id: "d", values: ["n": 4, "s": "d"])], into: "lefts", origin: .server)
                        let present = try transaction.insertNew(
                            [Item(id: "e", values: ["n": 5]), Item(id: "a", values: ["n": 0])], into: "lefts",
                            origin: .local)
                        if present != ["a"] {
                            context.fail("insertNew(lefts) \(operation) reported \(present) present; expected ['a']")
                        }
                        try transaction.delete(ids: ["b"], from: "lefts")
                        let deleted = try transaction.delete(
                            matching: Query(table: "lefts", filter: .comparison(.column("n"), .eq, .literal(4))))
                        if deleted != 1 {
                            context.fail("delete(matching:) on lefts \(operation) answered \(deleted); expected 1")
                        }
                    }
                }
                context.expectRows(
                    store, "lefts",
                    [
                        Item(id: "a", values: ["n": 1]), Item(id: "c", values: ["n": 3]),
                        Item(id: "e", values: ["n": 5]),
                    ],
                    "upsert (both origins), insertNew, delete(ids:) and delete(matching:) on table 'lefts' \(operation)"
                )
                context.attempt("delete(ids:) of every row of 'lefts' \(operation)") {
                    try store.delete(ids: ["a", "c", "e"], from: "lefts")
                }
            }
        },
        ConformanceCase("a reopen rejected for a retyped column changes nothing at all", requires: .persistent) {
            context in
            let store = try context.openStore(StoreSchema([Fixtures.notes, Fixtures.left]))
            let note = Fixtures.note("a", title: "kept", priority: 1)
            try store.upsert([note], into: "notes")
            let before = try store.schema
            try store.close()
            // The retyped column comes after and before additions, so that a store applying the
            // declaration table by table has added something either way.
            let retypes: [[TableSchema]] = [
                [
                    TableSchema("added_first", columns: [Column("n", .integer)], synced: false),
                    TableSchema("lefts", columns: [Column("n", .integer), Column("wider", .string)], synced: false),
                    TableSchema(
                        "notes", columns: [Column("priority", .string), Column("extra", .string)],
                        indexes: [TableIndex("notes_extra", on: ["extra"])]),
                ],
                [
                    TableSchema("notes", columns: [Column("title", .integer)]),
                    TableSchema(
                        "lefts", columns: [Column("n", .integer), Column("s", .string), Column("wider", .date)],
                        indexes: [TableIndex("lefts_s", on: ["s"])], synced: false),
                    TableSchema("added_last", columns: [Column("n", .integer)], synced: false),
                ],
            ]
            for tables in retypes {
                context.expectThrows(
                    "open(schema:) declaring \(tables.map(\.name)) with a retyped notes column", code: .invalidSchema
                ) { try store.open(schema: StoreSchema(tables)) }
                try? store.close()
                guard
                    context.attempt(
                        "open(schema:) with an empty schema after the rejected reopen",
                        {
                            try store.open(schema: StoreSchema([]))
                        }) != nil
                else { return }
                if let after = context.attempt("schema after the rejected reopen", { try store.schema }),
                    let difference = RandomPair.difference(after, before)
                {
                    context.fail("a reopen rejected for a retyped column changed the stored schema: \(difference)")
                }
                context.expectRows(store, "notes", [note], "after a rejected reopen")
                try store.close()
            }
        },
    ]
}
