import OfflineSync

extension StoreTierGroups {
    /// The two members that tell a server about sharing, and rule 1's last sentence, with a
    /// second instance over one location: a store another instance can open is not confined to
    /// its instance, and an instance that has not seen another's widening keeps working.
    static let sharingMemberCases: [ConformanceCase] = [
        ConformanceCase("a store another instance can open is not confined to its instance", requires: .sharedLocation)
        {
            context in
            let first = try context.openStore(StoreSchema([Fixtures.left]))
            let second = try context.makeStore(sharingLocationOf: first)
            for (name, store) in [("first", first), ("second", second)] {
                context.expect(
                    !store.isConfinedToInstance,
                    "isConfinedToInstance of the \(name) of two instances over one location answered true: another instance can write its data, so TableService would keep a write clock that misses the other's writes"
                )
            }
        },
        ConformanceCase(
            "an instance that has not seen another instance's widening reads and writes without failing or dropping columns",
            requires: [.persistent, .sharedLocation]
        ) { context in
            let first = try context.openStore(StoreSchema([Fixtures.notes]))
            let old = Fixtures.note("a", title: "old", priority: 1)
            try first.upsert([old], into: "notes")
            let second = try context.makeStore(sharingLocationOf: first)
            let widened = TableSchema(
                "notes", columns: Fixtures.notes.columns + [Column("extra", .string)],
                indexes: Fixtures.notes.indexes + [TableIndex("notes_extra", on: ["extra"])])
            guard
                context.attempt(
                    "open(schema:) of a second instance adding notes column 'extra'",
                    {
                        try second.open(schema: StoreSchema([widened]))
                    }) != nil
            else { return }
            var wide = Fixtures.note("b", title: "wide", priority: 2)
            wide["extra"] = "kept"
            context.attempt("second instance: upsert(notes) id 'b' with column 'extra'") {
                try second.upsert([wide], into: "notes")
            }
            // The first instance has not reopened: whatever storedSchemaChanged() says, its reads
            // and writes must work and must not take away the column it does not know.
            let operation = "through the first instance before it reopened"
            let titles = context.attempt("read(notes) \(operation)") {
                try first.read(Query(table: "notes", filter: .comparison(.column("priority"), .ge, .literal(1)))).items
                    .map { $0["title"] }
            }
            context.expectEqual(titles, [.string("old"), .string("wide")], "read(notes) titles \(operation)")
            context.expectEqual(
                context.attempt("lookup(notes, id 'b') \(operation)") {
                    try first.lookup(table: "notes", id: "b")?["title"]
                },
                .string("wide"), "lookup(notes, id 'b') title \(operation)")
            context.attempt("upsert(notes) id 'c' and delete(ids: ['a']) \(operation)") {
                try first.write { transaction in
                    try transaction.upsert(
                        [Fixtures.note("c", title: "narrow", priority: 3)], into: "notes", origin: .local)
                    _ = try transaction.read(Query(table: "notes", orderBy: [SortKey("title")]))
                    try transaction.delete(ids: ["a"], from: "notes")
                }
            }
            context.expectEqual(
                context.attempt("count(notes) \(operation)") { try first.count("notes") }, 2,
                "count(notes) \(operation)")
            context.expectEqual(
                context.attempt("lookup(notes, id 'b') through the second instance") {
                    try second.lookup(table: "notes", id: "b")?["extra"]
                }, .string("kept"),
                "column 'extra' of id 'b', read by the second instance after the first instance's writes")
            context.expectEqual(
                context.attempt("read(notes) filtered on 'extra' through the second instance") {
                    try second.read(Query(table: "notes", filter: .comparison(.column("extra"), .eq, .literal("kept"))))
                        .items.map(\.id)
                }, ["b"], "read(notes) extra eq 'kept' through the second instance after the first instance's writes")
            try? first.close()
            context.attempt("reopening the first instance with an empty schema") {
                try first.open(schema: StoreSchema([]))
            }
            context.expectEqual(
                context.attempt("schema of the first instance after its reopen") {
                    try first.schema.table(named: "notes")?.column(named: "extra")?.type
                }, .string, "column 'extra' in the first instance's schema after it reopened")
        },
    ]
}
