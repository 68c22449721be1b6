import OfflineSync

extension StoreTierGroups {
    /// `skip`, `top` and the total count, compared with the reference evaluator.
    static let paging = ConformanceGroup(
        "paging", tier: .store,
        cases: [
            ConformanceCase("every skip and top window agrees with the reference evaluator") { context in
                let (store, rows) = try openWithPagingRows(context)
                for skip in [0, 1, 2, 5, 9, 10, 11, 50] {
                    for top in [nil, 0, 1, 3, 9, 10, 11] as [Int?] {
                        for includeTotalCount in [false, true] {
                            let query = Query(
                                table: "notes", orderBy: [SortKey("priority", descending: true)], skip: skip, top: top,
                                includeTotalCount: includeTotalCount)
                            context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
                        }
                    }
                }
            },
            ConformanceCase("top 0 answers no rows and the full count") { context in
                let (store, rows) = try openWithPagingRows(context)
                let query = Query(table: "notes", top: 0, includeTotalCount: true)
                let result = context.attempt("read(notes) \(query)") { try store.read(query) }
                context.expectEqual(result, QueryResult(items: [], totalCount: rows.count), "read(notes) \(query)")
                context.expectEqual(
                    context.attempt("count(notes)") { try store.count("notes") }, rows.count, "count(notes)")
            },
            ConformanceCase("skip beyond the end answers no rows and the full count") { context in
                let (store, rows) = try openWithPagingRows(context)
                let filter = FilterExpression.comparison(.column("priority"), .ge, .literal(1))
                for skip in [rows.count, rows.count + 1, Int.max] {
                    let query = Query(table: "notes", filter: filter, skip: skip, top: 5, includeTotalCount: true)
                    context.expectReference(store, query, rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("the largest top answers every row") { context in
                let (store, rows) = try openWithPagingRows(context)
                for skip in [0, 3] {
                    context.expectReference(
                        store, Query(table: "notes", skip: skip, top: Int.max), rows: rows, schema: Fixtures.notes)
                }
            },
            ConformanceCase("pages of a tied ordering visit every row once") { context in
                let (store, rows) = try openWithPagingRows(context)
                var seen: [String] = []
                for page in 0..<5 {
                    let query = Query(table: "notes", orderBy: [SortKey("done")], skip: page * 3, top: 3)
                    seen += context.attempt("read(notes) \(query)") { try store.read(query).items.map(\.id) } ?? []
                }
                let expected = rows.map(\.id).sorted { ValueSemantics.compareBytes($0, $1) < 0 }
                context.expectEqual(
                    seen.sorted { ValueSemantics.compareBytes($0, $1) < 0 }, expected,
                    "read(notes) ordered by 'done' in pages of 3: ids seen")
            },
            ConformanceCase("the total count is absent unless asked for") { context in
                let (store, _) = try openWithPagingRows(context)
                let query = Query(table: "notes", top: 2)
                let result = context.attempt("read(notes) \(query)") { try store.read(query) }
                context.expect(
                    result?.totalCount == nil,
                    "read(notes) \(query): total count should be nil, got \(String(describing: result?.totalCount))")
            },
            ConformanceCase("negative skip and top are invalid queries") { context in
                let store = try context.openStore(Fixtures.schema)
                context.expectThrows("read(notes) with skip -1", code: .invalidQuery, mentioning: ["notes"]) {
                    try store.read(Query(table: "notes", skip: -1))
                }
                context.expectThrows("read(notes) with top -1", code: .invalidQuery, mentioning: ["notes"]) {
                    try store.read(Query(table: "notes", top: -1))
                }
            },
        ])

    /// A store opened with the fixture schema whose `notes` hold ``pagingRows()``.
    static func openWithPagingRows(_ context: CaseContext) throws -> (any LocalStore, [Item]) {
        let store = try context.openStore(Fixtures.schema)
        let rows = pagingRows()
        try store.upsert(rows, into: "notes")
        return (store, rows)
    }

    /// Ten notes with repeated priorities and some nulls.
    static func pagingRows() -> [Item] {
        (0..<10).map { (index: Int) -> Item in
            let title: String? = index % 4 == 0 ? nil : "title \(index % 3)"
            let priority: Int64? = index % 5 == 0 ? nil : Int64(index % 3)
            return Fixtures.note("p\(index)", title: title, priority: priority, done: index % 2 == 0)
        }
    }
}
