import OfflineSync

extension StoreTierGroups {
    /// Column selection: only the selected columns (and `id`) come back.
    static let selection = ConformanceGroup(
        "selection", tier: .store,
        cases: [
            ConformanceCase("a selection returns the chosen columns and id") { context in
                let (store, rows) = try openWithPagingRows(context)
                for selection in [["title"], ["priority", "done"], ["id"], ["id", "title"], ["updatedAt"]] {
                    context.expectReference(
                        store, Query(table: "notes", selection: selection), rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("an empty selection returns ids only") { context in
                let (store, rows) = try openWithPagingRows(context)
                let query = Query(table: "notes", selection: [])
                let items = context.attempt("read(notes) \(query)") { try store.read(query).items } ?? []
                for item in items where !item.values.filter({ !$0.value.isNull }).isEmpty {
                    context.fail(
                        "read(notes) \(query): id '\(item.id)' should carry no columns, got \(item.values.keys.sorted())"
                    )
                }
                context.expectEqual(items.count, rows.count, "read(notes) \(query): row count")
            },
            ConformanceCase("filter and ordering may use columns that are not selected") { context in
                let (store, rows) = try openWithPagingRows(context)
                let query = Query(
                    table: "notes", filter: .comparison(.column("done"), .eq, .literal(true)),
                    orderBy: [SortKey("priority", descending: true), SortKey("title")], skip: 1, top: 3,
                    includeTotalCount: true, selection: ["title"])
                context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
            },
            ConformanceCase("selecting an unknown column is an unknownColumn error") { context in
                let store = try context.openStore(Fixtures.schema)
                context.expectThrows(
                    "read(notes) selecting 'nope'", code: .unknownColumn, mentioning: ["notes", "nope"]
                ) {
                    try store.read(Query(table: "notes", selection: ["title", "nope"]))
                }
            },
        ])
}
