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
            /// A transaction's reads run through another path than the store's (its own
            /// connection, cursor or overlay of pending writes); the selection must apply there too,
            /// to committed and pending rows alike.
            ConformanceCase("a selection applies inside a transaction, to committed and pending rows") { context in
                let (store, rows) = try openWithPagingRows(context)
                let pending = [
                    Fixtures.note("q1", title: "pending", priority: 7, score: 1.5, done: true),
                    Fixtures.note("p3", title: "replaced", priority: 8, done: false),
                ]
                let pendingIds = Set(pending.map { Array($0.id.utf8) })
                let visible = (rows.filter { !pendingIds.contains(Array($0.id.utf8)) } + pending).compactMap {
                    try? Fixtures.notes.normalize($0, origin: .local)
                }
                let queries =
                    [["title"], ["priority", "done"], [], ["id"], ["id", "score"]].map {
                        Query(table: "notes", selection: $0)
                    } + [
                        Query(
                            table: "notes", filter: .comparison(.column("done"), .eq, .literal(true)),
                            orderBy: [SortKey("priority", descending: true)], skip: 1, top: 3, includeTotalCount: true,
                            selection: ["title"])
                    ]
                context.attempt("write(_:) that upserts ids 'q1' and 'p3' and reads with selections") {
                    try store.write { transaction in
                        try transaction.upsert(pending, into: "notes", origin: .local)
                        for query in queries {
                            if let difference = Reference.difference(
                                query, rows: visible, schema: Fixtures.notes, answer: { try transaction.read(query) })
                            {
                                context.fail("transaction.read(notes) \(query): \(difference)")
                            }
                        }
                    }
                }
            },
            /// The system columns of a synced table are columns like the others: a projection that
            /// always adds them (sync needs them), or that maps a selection onto the app's columns
            /// only, answers other values than the reference, outside and inside a transaction.
            ConformanceCase("a selection answers a synced table's system columns only when it selects them") {
                context in
                let store = try context.openStore(Fixtures.schema)
                let rows = (0..<4).map { index -> Item in
                    var item = Fixtures.note("s\(index)", title: "title \(index)", priority: Int64(index % 2))
                    item["createdAt"] = .date(Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(index)))
                    item["updatedAt"] = .date(Timestamp(millisecondsSince1970: 1_700_000_100_000 - Int64(index)))
                    item["version"] = .string("v\(index)")
                    item["deleted"] = .bool(index == 2)
                    return item
                }
                context.attempt("upsert(notes, origin: .server) of \(rows.count) rows with system columns") {
                    try store.upsert(rows, into: "notes", origin: .server)
                }
                let queries = [
                    ["title"], [], ["id"], ["updatedAt"], ["version", "deleted"], ["createdAt", "priority"],
                ]
                .flatMap { selection in
                    [
                        Query(table: "notes", selection: selection),
                        Query(
                            table: "notes", filter: .comparison(.column("deleted"), .eq, .literal(false)),
                            orderBy: [SortKey("updatedAt", descending: true)], top: 2, selection: selection),
                    ]
                }
                for query in queries {
                    context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
                }
                context.attempt("write(_:) that reads with selections of system columns") {
                    try store.write { transaction in
                        for query in queries {
                            if let difference = Reference.difference(
                                query, rows: rows, schema: Fixtures.notes, answer: { try transaction.read(query) })
                            {
                                context.fail("transaction.read(notes) \(query): \(difference)")
                            }
                        }
                    }
                }
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
