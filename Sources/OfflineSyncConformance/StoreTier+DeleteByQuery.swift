import OfflineSync

extension StoreTierGroups {
    /// `delete(matching:)`: filter, ordering, `skip` and `top` all choose the rows deleted.
    static let deleteByQuery = ConformanceGroup(
        "deleteByQuery", tier: .store,
        cases: [
            ConformanceCase("deleting by a filter removes exactly the matching rows") { context in
                let filter = FilterExpression.or(
                    .comparison(.column("priority"), .eq, .literal(1)),
                    .comparison(.column("title"), .eq, .literal(.null)))
                expectDeletion(context, Query(table: "notes", filter: filter))
            },
            ConformanceCase("deleting by filter, ordering and top removes the first rows in order") { context in
                let filter = FilterExpression.comparison(.column("done"), .eq, .literal(true))
                expectDeletion(
                    context,
                    Query(table: "notes", filter: filter, orderBy: [SortKey("priority", descending: true)], top: 2))
                expectDeletion(
                    context, Query(table: "notes", orderBy: [SortKey("title"), SortKey("priority")], top: 3))
            },
            ConformanceCase("deleting with skip and top removes the window") { context in
                expectDeletion(context, Query(table: "notes", orderBy: [SortKey("priority")], skip: 2, top: 4))
                expectDeletion(context, Query(table: "notes", orderBy: [SortKey("priority")], skip: 8))
            },
            ConformanceCase("deleting with top 0 or skip beyond the end removes nothing") { context in
                expectDeletion(context, Query(table: "notes", top: 0))
                expectDeletion(context, Query(table: "notes", skip: 10))
            },
            ConformanceCase("deleting without a filter empties the table") { context in
                expectDeletion(context, Query(table: "notes"))
            },
            ConformanceCase("deleting by an invalid query deletes nothing") { context in
                let (store, rows) = try openWithPagingRows(context)
                let query = Query(table: "notes", filter: .comparison(.column("nope"), .eq, .literal(1)))
                context.expectThrows("delete(matching: \(query))", code: .unknownColumn, mentioning: ["notes", "nope"])
                {
                    try store.delete(matching: query)
                }
                context.expectRows(store, "notes", rows, "a rejected delete(matching:)")
            },
        ])

    /// Deletes by `query` in a fresh store of ``pagingRows()`` and checks the count returned, the
    /// rows left and the counts the store answers afterwards against the reference evaluator.
    private static func expectDeletion(_ context: CaseContext, _ query: Query) {
        let rows = pagingRows()
        let stored = rows.compactMap { try? Fixtures.notes.normalize($0, origin: .local) }
        guard let store = context.attempt("open(schema:)", { try context.openStore(Fixtures.schema) }),
            context.attempt("upsert(notes) of \(rows.count) rows", { try store.upsert(rows, into: "notes") }) != nil,
            let doomed = context.attempt(
                "reference evaluation of \(query)",
                {
                    try QueryEvaluator(query: query, schema: Fixtures.notes).run(over: stored).items.map {
                        Array($0.id.utf8)
                    }
                })
        else { return }
        let deleted = context.attempt("delete(matching: \(query))") { try store.delete(matching: query) }
        context.expectEqual(deleted, doomed.count, "delete(matching: \(query)) count")
        let remaining = stored.filter { !doomed.contains(Array($0.id.utf8)) }
        context.expectRows(store, "notes", remaining, "delete(matching: \(query))")
        // The counts too: a row counter that a delete by query forgets answers the old number.
        context.expectEqual(
            context.attempt("count(notes) after delete(matching: \(query))") { try store.count("notes") },
            remaining.count, "count(notes) after delete(matching: \(query))")
        let done = FilterExpression.comparison(.column("done"), .eq, .literal(true))
        context.expectReference(
            store, Query(table: "notes", filter: done, top: 0, includeTotalCount: true), rows: remaining,
            schema: Fixtures.notes)
    }
}
