import OfflineSync

extension StoreTierGroups {
    /// Rule 6 table by table and method by method: what a transaction sees and leaves behind in
    /// the tables it wrote, in those it wrote first and then left, in those it only deleted from,
    /// and in those it never wrote; and rule 1 through every transaction method.
    static let transactionScope = ConformanceGroup(
        "transactionScope", tier: .store,
        cases: [
            ConformanceCase("a transaction sees its own writes in every table it wrote, not only the last") { context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                context.attempt("write(_:) over lefts, then rights, then notes, reading lefts and rights back") {
                    try store.write { transaction in
                        try transaction.upsert([Item(id: "l9", values: ["n": 9])], into: "lefts", origin: .local)
                        try transaction.delete(ids: ["l1"], from: "lefts")
                        try transaction.upsert([Item(id: "r9", values: ["n": 9])], into: "rights", origin: .server)
                        try transaction.delete(
                            matching: Query(table: "rights", filter: .comparison(.column("n"), .eq, .literal(1))))
                        try transaction.upsert([Fixtures.note("z", priority: 9)], into: "notes", origin: .local)
                        let lefts = try transaction.read(Query(table: "lefts")).items
                        context.expectEqual(
                            lefts, [Item(id: "l2", values: ["n": 2]), Item(id: "l9", values: ["n": 9])],
                            "transaction.read(lefts) after writing lefts, then rights and notes")
                        context.expectEqual(
                            try transaction.lookup(table: "lefts", id: "l9"), Item(id: "l9", values: ["n": 9]),
                            "transaction.lookup(lefts, id 'l9') after writing rights and notes")
                        context.expectEqual(
                            try transaction.lookup(table: "lefts", id: "l1"), nil,
                            "transaction.lookup(lefts, id 'l1') deleted before writing rights and notes")
                        let rights = try transaction.read(
                            Query(table: "rights", filter: .comparison(.column("n"), .ge, .literal(2)))
                        ).items.map(\.id)
                        context.expectEqual(
                            rights, ["r2", "r3", "r9"], "transaction.read(rights) where n ge 2 after writing notes")
                        // Filters that match the deleted rows must not find them either.
                        let deletedLefts = try transaction.read(
                            Query(table: "lefts", filter: .comparison(.column("n"), .le, .literal(1)))
                        ).items.map(\.id)
                        context.expectEqual(
                            deletedLefts, [], "transaction.read(lefts) where n le 1 after deleting id 'l1' (n 1)")
                        let deletedRights = try transaction.read(
                            Query(
                                table: "rights", filter: .comparison(.column("n"), .lt, .literal(2)),
                                includeTotalCount: true))
                        context.expectEqual(
                            deletedRights, QueryResult(items: [], totalCount: 0),
                            "transaction.read(rights) where n lt 2 after delete(matching: rights where n eq 1)")
                    }
                }
                context.expectRows(
                    store, "lefts", [Item(id: "l2", values: ["n": 2]), Item(id: "l9", values: ["n": 9])],
                    "committed write(_:) over three tables")
                context.expectRows(
                    store, "rights", seeded.rights.filter { $0.id != "r1" } + [Item(id: "r9", values: ["n": 9])],
                    "committed write(_:) over three tables")
            },
            ConformanceCase("a transaction reads the committed rows of tables it never wrote") { context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                context.attempt("write(_:) that writes lefts and reads rights and notes") {
                    try store.write { transaction in
                        for step in 0..<2 {
                            let rights = try transaction.read(Query(table: "rights", includeTotalCount: true))
                            context.expectEqual(
                                rights.items, seeded.rights, "transaction.read(rights) never written, step \(step)")
                            context.expectEqual(
                                rights.totalCount, seeded.rights.count, "transaction.read(rights) count")
                            context.expectEqual(
                                try transaction.lookup(table: "notes", id: "b"), seeded.notes[1],
                                "transaction.lookup(notes, id 'b') never written, step \(step)")
                            try transaction.upsert([Item(id: "l\(step + 5)")], into: "lefts", origin: .local)
                        }
                    }
                }
                _ = context.attempt("write(_:) that only reads") {
                    try store.write { transaction in
                        context.expectEqual(
                            try transaction.read(Query(table: "lefts")).items.count, seeded.lefts.count + 2,
                            "transaction.read(lefts) in a transaction that writes nothing")
                    }
                }
            },
            ConformanceCase("a throw rolls back tables written only by delete(ids:) or delete(matching:)") { context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                for (what, body) in ScopeFixtures.deletions {
                    let error = context.expectThrows("write(_:) that \(what) and then throws") {
                        try store.write { transaction in
                            try body(transaction)
                            throw RollBack()
                        }
                    }
                    context.expect(error is RollBack, "write(_:) that \(what) must rethrow the body's error")
                    context.expectRows(store, "lefts", seeded.lefts, "write(_:) that \(what), rolled back")
                    context.expectRows(store, "rights", seeded.rights, "write(_:) that \(what), rolled back")
                    context.expectRows(store, "notes", seeded.notes, "write(_:) that \(what), rolled back")
                }
            },
            ConformanceCase("a throw rolls back every table, the first written as well as the last") { context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                for order in [["lefts", "rights", "notes"], ["notes", "rights", "lefts"]] {
                    _ = context.expectThrows("write(_:) over \(order) that throws") {
                        try store.write { transaction in
                            for table in order {
                                try transaction.upsert([Item(id: "added-\(table)")], into: table, origin: .server)
                                try transaction.delete(ids: ["l1", "r1", "a"], from: table)
                            }
                            throw RollBack()
                        }
                    }
                    context.expectRows(store, "lefts", seeded.lefts, "write(_:) over \(order), rolled back")
                    context.expectRows(store, "rights", seeded.rights, "write(_:) over \(order), rolled back")
                    context.expectRows(store, "notes", seeded.notes, "write(_:) over \(order), rolled back")
                }
            },
            ConformanceCase("delete(matching:) inside a transaction deletes the rows the transaction wrote") {
                context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                let deleted = context.attempt("write(_:) that upserts into lefts and deletes by a query") {
                    try store.write { transaction -> Int in
                        try transaction.upsert(
                            [Item(id: "l7", values: ["n": 7]), Item(id: "l1", values: ["n": 8])], into: "lefts",
                            origin: .local)
                        return try transaction.delete(
                            matching: Query(table: "lefts", filter: .comparison(.column("n"), .ge, .literal(7))))
                    }
                }
                context.expectEqual(deleted, 2, "transaction.delete(matching: lefts where n ge 7) count")
                context.expectRows(
                    store, "lefts", seeded.lefts.filter { $0.id != "l1" },
                    "delete(matching:) of rows written earlier in the transaction")
                // Nor does it choose or count the rows the transaction deleted before (lefts holds 'l2', n 2).
                let byTwo = Query(table: "lefts", filter: .comparison(.column("n"), .eq, .literal(2)))
                let first = Query(table: "lefts", orderBy: [SortKey("n")], top: 1)
                let what =
                    "write(_:) that upserts lefts 'l3' (n 3) and 'l4' (n 4), deletes id 'l2' (n 2), then deletes by queries"
                let counts = context.attempt(what) {
                    try store.write { transaction -> [Int] in
                        try transaction.upsert(
                            [Item(id: "l3", values: ["n": 3]), Item(id: "l4", values: ["n": 4])], into: "lefts",
                            origin: .local)
                        try transaction.delete(ids: ["l2"], from: "lefts")
                        return [try transaction.delete(matching: byTwo), try transaction.delete(matching: first)]
                    }
                }
                context.expectEqual(
                    counts, [0, 1],
                    "\(what): counts of transaction.delete(matching: \(byTwo)) and transaction.delete(matching: \(first))"
                )
                context.expectRows(
                    store, "lefts", [Item(id: "l4", values: ["n": 4])],
                    "\(what): delete(matching: \(first)) after delete(ids: ['l2']) in the same transaction")
            },
            ConformanceCase("an undeclared table is an unknownTable error in every transaction method") { context in
                let store = try context.openStore(Fixtures.schema)
                let seeded = try ScopeFixtures.seed(store)
                let table = "undeclared"
                let operations: [(String, (any StoreTransaction) throws -> Void)] = [
                    ("transaction.read(\(table))", { _ = try $0.read(Query(table: table)) }),
                    ("transaction.lookup(\(table), id 'a')", { _ = try $0.lookup(table: table, id: "a") }),
                    (
                        "transaction.upsert(\(table), origin: .local)",
                        { try $0.upsert([Item(id: "a")], into: table, origin: .local) }
                    ),
                    (
                        "transaction.upsert(\(table), origin: .server)",
                        { try $0.upsert([Item(id: "a")], into: table, origin: .server) }
                    ),
                    ("transaction.delete(ids: ['a'], from: \(table))", { try $0.delete(ids: ["a"], from: table) }),
                    ("transaction.delete(matching:) on \(table)", { _ = try $0.delete(matching: Query(table: table)) }),
                    (
                        "transaction.insertNew([Item(id: 'a')], into: \(table))",
                        { _ = try $0.insertNew([Item(id: "a")], into: table, origin: .server) }
                    ),
                    // Nothing to write is no reason to accept the table.
                    ("transaction.insertNew([], into: \(table))", { _ = try $0.insertNew([], into: table, origin: .server) }),
                    ("transaction.upsert([], into: \(table))", { try $0.upsert([], into: table, origin: .local) }),
                    ("transaction.delete(ids: [], from: \(table))", { try $0.delete(ids: [], from: table) }),
                ]
                for (what, operation) in operations {
                    context.expectThrows("\(what) after writing lefts", code: .unknownTable, mentioning: [table]) {
                        try store.write { transaction in
                            try transaction.upsert([Item(id: "l5", values: ["n": 5])], into: "lefts", origin: .local)
                            try operation(transaction)
                        }
                    }
                    context.expectRows(store, "lefts", seeded.lefts, "\(what) failed, so the transaction rolled back")
                }
                context.expectThrows("upsert(\(table), origin: .server)", code: .unknownTable, mentioning: [table]) {
                    try store.upsert([Item(id: "a")], into: table, origin: .server)
                }
            },
        ] + visibilityCases)
}

/// The rows and deletions of the `transactionScope` group.
enum ScopeFixtures {
    struct Seeded {
        let lefts: [Item]
        let rights: [Item]
        let notes: [Item]
    }

    /// Fills `lefts`, `rights` and `notes`; answers what each holds, in id order.
    static func seed(_ store: any LocalStore) throws -> Seeded {
        let seeded = Seeded(
            lefts: [Item(id: "l1", values: ["n": 1, "s": "one"]), Item(id: "l2", values: ["n": 2])],
            rights: [
                Item(id: "r1", values: ["n": 1]), Item(id: "r2", values: ["n": 2]),
                Item(id: "r3", values: ["n": 3, "s": "three"]),
            ],
            notes: [Fixtures.note("a", priority: 1), Fixtures.note("b", priority: 2), Fixtures.note("c")])
        try store.write { transaction in
            try transaction.upsert(seeded.lefts, into: "lefts", origin: .local)
            try transaction.upsert(seeded.rights, into: "rights", origin: .local)
            try transaction.upsert(seeded.notes, into: "notes", origin: .local)
        }
        return seeded
    }

    /// Transaction bodies that only delete, each from one table or two.
    static var deletions: [(String, (any StoreTransaction) throws -> Void)] {
        [
            ("deletes by ids from rights", { try $0.delete(ids: ["r1", "r3"], from: "rights") }),
            ("deletes every note by a query", { _ = try $0.delete(matching: Query(table: "notes")) }),
            (
                "deletes by ids from lefts and by a query from rights",
                { transaction in
                    try transaction.delete(ids: ["l2"], from: "lefts")
                    _ = try transaction.delete(
                        matching: Query(table: "rights", filter: .comparison(.column("s"), .eq, .literal(.null))))
                }
            ),
        ]
    }
}
