import OfflineSync

extension StoreTierGroups {
    /// Several instances over one location (a file or database two processes of an app, or two
    /// `serve` processes, open at once), from ``ConformanceSuite/makeStoreSharingLocation``: each
    /// sees what the others committed and declared, their transactions are serialised with each
    /// other's, and ``OfflineSync/LocalStore/storedSchemaChanged()`` reports another instance's
    /// declarations. Skipped when the suite cannot make a second instance.
    static let sharing = ConformanceGroup(
        "sharing", tier: .store,
        cases: [
            /// A store that keeps a copy per instance, or caches rows it read, is caught by the
            /// second instance's first read or by the first instance's second lookup.
            ConformanceCase(
                "a second instance sees the first one's tables and committed rows, and the first sees its writes",
                requires: [.persistent, .sharedLocation]
            ) { context in
                let first = try context.openStore(StoreSchema([Fixtures.notes]))
                let rows = [Fixtures.note("a", title: "first", priority: 1), Fixtures.note("b", title: "kept")]
                try first.upsert(rows, into: "notes")
                context.expectEqual(
                    context.attempt("lookup(notes, id 'a') through the first instance") {
                        try first.lookup(table: "notes", id: "a")?["title"]
                    }, .string("first"), "lookup(notes, id 'a') through the first instance")

                let second = try context.makeStore(sharingLocationOf: first)
                guard context.attempt("open(schema:) of a second instance with an empty schema", {
                    try second.open(schema: StoreSchema([]))
                }) != nil else { return }
                context.expect(
                    (try? second.schema.table(named: "notes")) != nil,
                    "the second instance's schema lacks table 'notes' the first declared: it lists \((try? second.schema.tables.map(\.name)) ?? [])"
                )
                context.expectRows(second, "notes", rows, "the first instance's committed rows, read by the second")

                let changed = Fixtures.note("a", title: "changed by the second", priority: 2)
                let added = Fixtures.note("c", title: "added by the second")
                context.attempt("second instance: write(_:) replacing notes id 'a', adding 'c', deleting 'b'") {
                    try second.write { transaction in
                        try transaction.upsert([changed, added], into: "notes", origin: .local)
                        try transaction.delete(ids: ["b"], from: "notes")
                    }
                }
                context.expectEqual(
                    context.attempt("lookup(notes, id 'a') through the first instance after the second's write") {
                        try first.lookup(table: "notes", id: "a")?["title"]
                    }, .string("changed by the second"),
                    "lookup(notes, id 'a') through the first instance after the second instance committed a change")
                context.expectRows(first, "notes", [changed, added], "notes read by the first instance after the second's write")
                context.expectEqual(
                    context.attempt("count(notes) through the first instance") { try first.count("notes") }, 2,
                    "count(notes) through the first instance after the second's write")
            },
            /// A store that answers `false` without bringing its schema up to date (the default
            /// implementation, right only for a store nothing else can change) is caught here.
            ConformanceCase(
                "storedSchemaChanged() reports another instance's new table and column, and a reopen adopts them",
                requires: [.persistent, .sharedLocation]
            ) { context in
                let first = try context.openStore(StoreSchema([Fixtures.notes]))
                try first.upsert([Fixtures.note("a", title: "before")], into: "notes")
                let second = try context.makeStore(sharingLocationOf: first)
                let widened = TableSchema("notes", columns: Fixtures.notes.columns + [Column("extra", .string)])
                let added = TableSchema("added", columns: [Column("n", .integer)], synced: false)
                guard context.attempt("open(schema:) of a second instance adding notes column 'extra' and table 'added'", {
                    try second.open(schema: StoreSchema([widened, added]))
                }) != nil else { return }
                var row = Fixtures.note("b", title: "wide")
                row["extra"] = .string("only in the wider schema")
                context.attempt("second instance: upsert(notes) id 'b' with column 'extra'") {
                    try second.upsert([row], into: "notes")
                }

                guard let changed = context.attempt("storedSchemaChanged() of the first instance", {
                    try first.storedSchemaChanged()
                }) else { return }
                if changed {
                    // The store says so: reopening it reads the declarations another instance made.
                    try? first.close()
                    context.attempt("reopening the first instance with an empty schema") {
                        try first.open(schema: StoreSchema([]))
                    }
                    context.expectEqual(
                        context.attempt("storedSchemaChanged() of the first instance after its reopen") {
                            try first.storedSchemaChanged()
                        }, false, "storedSchemaChanged() of the first instance after it reopened")
                }
                // Either way (a store that brings its schema up to date in place answers `false`),
                // the first instance now declares what the second did, and reads it.
                let schema = try? first.schema
                context.expect(
                    schema?.table(named: "notes")?.column(named: "extra")?.type == .string
                        && schema?.table(named: "added") != nil,
                    "after another instance added notes column 'extra' and table 'added', storedSchemaChanged() answered \(changed)\(changed ? " and a reopen" : "") but the first instance's schema \(schema.map { "lists tables \($0.tables.map(\.name)) and notes columns \($0.table(named: "notes")?.columns.map(\.name) ?? [])" } ?? "cannot be read"): a store another instance can widen must answer true (or update its schema in place)"
                )
                context.expectEqual(
                    context.attempt("lookup(notes, id 'b') through the first instance") {
                        try first.lookup(table: "notes", id: "b")?["extra"]
                    }, .string("only in the wider schema"),
                    "lookup(notes, id 'b') column 'extra' through the first instance, after the other instance's widening")
                context.attempt("first instance: upsert(added) id 'n1'") {
                    try first.upsert([Item(id: "n1", values: ["n": 1])], into: "added")
                }
                context.expectRows(
                    second, "added", [Item(id: "n1", values: ["n": 1])], "table 'added' read by the second instance")
            },
            /// The read-modify-write rounds of the concurrency group, one thread on each instance:
            /// a store whose instances each hold a writer lock of their own loses an increment.
            ConformanceCase(
                "read-modify-write transactions on two instances never interleave",
                requires: [.persistent, .sharedLocation]
            ) { context in
                let first = try context.openStore(Fixtures.schema)
                try first.upsert([Item(id: "counter", values: ["n": 0])], into: "lefts")
                let second = try context.makeStore(sharingLocationOf: first)
                guard context.attempt("open(schema:) of a second instance", {
                    try second.open(schema: Fixtures.schema)
                }) != nil else { return }
                await incrementConcurrently(
                    context, first, second,
                    what: "a write(_:) of one instance let the other instance's transaction in between its read and its write (a writer lock per instance, not per location?)"
                )
            },
        ] + sharingMemberCases)
}
