import OfflineSync

extension StoreTierGroups {
    /// Looking up and deleting ids that do not exist are not errors.
    static let missing = ConformanceGroup(
        "missing", tier: .store,
        cases: [
            ConformanceCase("looking up a missing id answers nil") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Fixtures.note("present")], into: "notes")
                try store.upsert([Item(id: "elsewhere", values: ["n": 1])], into: "lefts")
                // Ids holding U+0000 too: a key passed as a C string would find 'present'.
                for id in ["absent", "Present", "present ", "😀", "present\u{0}", "present\u{0}x"] {
                    context.expectLookup(store, "notes", id, nil, "lookup of a missing id")
                }
                // An id another table holds is still missing from this one.
                context.expectLookup(store, "notes", "elsewhere", nil, "lookup of an id only table 'lefts' holds")
                context.expectLookup(store, "lefts", "present", nil, "lookup of an id only table 'notes' holds")
                for id in ["absent", "elsewhere", "present\u{0}x"] {
                    let inside = context.attempt("lookup(notes, id '\(RowDifference.escaped(id))') inside write(_:)") {
                        try store.write { try $0.lookup(table: "notes", id: id) }
                    }
                    context.expect(
                        inside == .some(nil),
                        "lookup(notes, id '\(RowDifference.escaped(id))') inside write(_:): expected nil, got \(String(describing: inside))"
                    )
                }
            },
            ConformanceCase("deleting missing ids does nothing") { context in
                let store = try context.openStore(Fixtures.schema)
                let kept = Fixtures.note("kept", priority: 1)
                try store.upsert([kept], into: "notes")
                context.attempt("delete(ids: ['absent', 'KEPT', 'kept ', ' kept', 'kept\\u{0}'], from: notes)") {
                    try store.delete(ids: ["absent", "KEPT", "kept ", " kept", "kept\u{0}"], from: "notes")
                }
                context.attempt("transaction.delete(ids: ['kept\\u{0}x'], from: notes)") {
                    try store.write { try $0.delete(ids: ["kept\u{0}x"], from: "notes") }
                }
                context.attempt("delete(ids: [], from: notes)") { try store.delete(ids: [], from: "notes") }
                context.expectRows(store, "notes", [kept], "delete of missing ids")
                // A row counter that answers count() must not go down for ids that were not there.
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 1,
                    "count(notes) after deletes of missing ids")
            },
            ConformanceCase("a deleted id is missing") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Fixtures.note("gone"), Fixtures.note("stays")], into: "notes")
                try store.delete(ids: ["gone", "gone"], from: "notes")
                context.expectLookup(store, "notes", "gone", nil, "delete(ids: ['gone', 'gone']) then lookup")
                context.expectRows(store, "notes", [Fixtures.note("stays")], "delete(ids: ['gone', 'gone'])")
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 1,
                    "count(notes) after delete(ids: ['gone', 'gone'])")
            },
            /// Ids are equal byte for byte: "\u{E9}" and "e\u{301}" (canonically equivalent, equal as
            /// Swift `String`s) are two rows, and an `id in` list naming both names each once. A
            /// backend that removes duplicate ids with a `Set<String>` looks up only the first.
            ConformanceCase("ids that Unicode calls equivalent are different rows, in id lists too") { context in
                let store = try context.openStore(Fixtures.schema)
                let composed = Fixtures.note("\u{E9}", priority: 1)
                let decomposed = Fixtures.note("e\u{301}", priority: 2)
                try store.upsert([composed, decomposed, Fixtures.note("x", priority: 3)], into: "notes")
                context.expectRows(store, "notes", [composed, decomposed, Fixtures.note("x", priority: 3)], "upsert")
                let both = FilterExpression.isIn(.column("id"), [.string("e\u{301}"), .string("\u{E9}")])
                let query = Query(table: "notes", filter: both)
                context.expectEqual(
                    context.attempt("read(\(query))") { try store.read(query).items.count }, 2,
                    "rows of read(\(query))")
                context.expectEqual(
                    context.attempt("delete(matching: \(query))") { try store.delete(matching: query) }, 2,
                    "count of delete(matching: \(query))")
                context.expectRows(store, "notes", [Fixtures.note("x", priority: 3)], "delete(matching: \(query))")
                try store.upsert([composed, decomposed], into: "notes")
                try store.delete(ids: ["e\u{301}"], from: "notes")
                context.expectRows(
                    store, "notes", [composed, Fixtures.note("x", priority: 3)], "delete(ids: ['e\\u{301}'])")
            },
            ConformanceCase("deleting by a query that matches nothing deletes nothing") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Fixtures.note("a", priority: 1)], into: "notes")
                let query = Query(table: "notes", filter: .comparison(.column("priority"), .gt, .literal(100)))
                context.expectEqual(
                    context.attempt("delete(matching: \(query))") { try store.delete(matching: query) }, 0,
                    "delete(matching: \(query)) count")
                context.expectRows(store, "notes", [Fixtures.note("a", priority: 1)], "delete(matching: \(query))")
            },
            /// A backend whose keys are the table name and the id without a separator (or that scans
            /// the key prefix of a table's name alone) finds the rows of table 'notesArchive' in
            /// table 'notes', under ids that start with 'Archive'.
            ConformanceCase("a table whose name extends another's keeps its rows apart") { context in
                let archive = TableSchema(
                    "notesArchive", columns: [Column("title", .string), Column("priority", .integer)])
                let store = try context.openStore(StoreSchema(Fixtures.schema.tables + [archive]))
                let note = Fixtures.note("x", title: "note", priority: 1)
                let archived = [Fixtures.note("x", title: "archived", priority: 2), Fixtures.note("y", priority: 3)]
                try store.upsert([note], into: "notes")
                try store.upsert(archived, into: "notesArchive")
                let written = "upsert of id 'x' into 'notes' and of ids 'x', 'y' into 'notesArchive'"
                context.expectRows(store, "notes", [note], written)
                context.expectRows(store, "notesArchive", archived, written)
                for id in ["Archivex", "Archivey"] {
                    context.expectLookup(
                        store, "notes", id, nil, "\(written): lookup of 'Archive' and an id of 'notesArchive'")
                }
                let query = Query(
                    table: "notes", filter: .comparison(.column("priority"), .ge, .literal(2)), includeTotalCount: true)
                context.expectEqual(
                    context.attempt("read(notes) \(query)") { try store.read(query) },
                    QueryResult(items: [], totalCount: 0), "\(written): read(notes) \(query)")
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, 1, "\(written): count(notes)")
            },
            ConformanceCase("a query that matches nothing answers no rows and a zero count") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Fixtures.note("a", priority: 1)], into: "notes")
                let query = Query(
                    table: "notes", filter: .comparison(.column("id"), .eq, .literal("b")), includeTotalCount: true)
                let result = context.attempt("read(\(query))") { try store.read(query) }
                context.expectEqual(result, QueryResult(items: [], totalCount: 0), "read(\(query))")
            },
        ])
}
