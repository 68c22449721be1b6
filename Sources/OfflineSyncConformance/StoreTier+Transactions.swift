import OfflineSync

extension StoreTierGroups {
    /// Concurrent tasks in the concurrent-writers case.
    static let writerTasks = 8
    /// Read-modify-write increments per task.
    static let incrementsPerTask = 100

    /// Atomic, isolated, serialised write transactions across tables.
    static let transactions = ConformanceGroup(
        "transactions", tier: .store,
        cases: [
            ConformanceCase("a throw inside a transaction leaves nothing behind") { context in
                let store = try context.openStore(Fixtures.schema)
                let before = try seedTables(store)
                let outcome = context.expectThrows("write(_:) whose body throws after writing three tables") {
                    try store.write { transaction in
                        try transaction.upsert(
                            [Item(id: "new", values: ["n": 1]), Item(id: "l1", values: ["n": 100])], into: "lefts",
                            origin: .local)
                        // insertNew too: a backend inserting on a connection of its own keeps these.
                        _ = try transaction.insertNew(
                            [Item(id: "inserted", values: ["n": 5]), Item(id: "l2", values: ["n": 20])], into: "lefts",
                            origin: .local)
                        try transaction.delete(ids: ["r1"], from: "rights")
                        try transaction.upsert([Item(id: "r9", values: ["s": "added"])], into: "rights", origin: .local)
                        try transaction.delete(
                            matching: Query(table: "notes", filter: .comparison(.column("priority"), .ge, .literal(1))))
                        throw RollBack()
                    }
                }
                context.expect(
                    outcome is RollBack,
                    "write(_:) must rethrow the body's own error, got \(outcome.map { CaseContext.describe($0) } ?? "nothing")"
                )
                for (table, rows) in before {
                    context.expectRows(store, table, rows, "write(_:) rolled back by a throw")
                }
                context.expectLookup(
                    store, "lefts", "inserted", nil, "write(_:) that insertNew'd id 'inserted', then threw")
            },
            ConformanceCase("a failing operation inside a transaction rolls back the earlier ones") { context in
                let store = try context.openStore(Fixtures.schema)
                let before = try seedTables(store)
                context.expectThrows("write(_:) whose second upsert names unknown column 'nope'", code: .unknownColumn)
                {
                    try store.write { transaction in
                        try transaction.upsert([Item(id: "l1", values: ["n": 7])], into: "lefts", origin: .local)
                        try transaction.delete(ids: ["r2"], from: "rights")
                        try transaction.upsert([Item(id: "r3", values: ["nope": 1])], into: "rights", origin: .local)
                    }
                }
                for (table, rows) in before {
                    context.expectRows(store, table, rows, "write(_:) rolled back by a failing upsert")
                }
            },
            /// Only a throw out of the closure rolls back. A backend that rolls back once any
            /// operation failed (a database that aborts the transaction on a statement's error, a
            /// flag set by a failing operation) loses the writes of a body that caught the error.
            ConformanceCase(
                "a transaction whose body catches an operation's error and returns commits its other writes"
            ) {
                context in
                let store = try context.openStore(Fixtures.schema)
                let before = Dictionary(uniqueKeysWithValues: try seedTables(store))
                context.attempt("write(_:) whose body catches the errors of three failing operations and returns") {
                    try store.write { transaction in
                        try transaction.upsert([Item(id: "l1", values: ["n": 11])], into: "lefts", origin: .local)
                        context.expectThrows(
                            "transaction.upsert(rights, id 'r4') with unknown column 'nope'", code: .unknownColumn
                        ) {
                            try transaction.upsert(
                                [Item(id: "r4", values: ["nope": 1])], into: "rights", origin: .local)
                        }
                        context.expectThrows("transaction.read(undeclared)", code: .unknownTable) {
                            try transaction.read(Query(table: "undeclared"))
                        }
                        let invalid = Query(table: "rights", filter: .comparison(.column("nope"), .eq, .literal(1)))
                        context.expectThrows("transaction.delete(matching: \(invalid))", code: .unknownColumn) {
                            try transaction.delete(matching: invalid)
                        }
                        try transaction.delete(ids: ["r1"], from: "rights")
                    }
                }
                let operation = "write(_:) whose body caught an operation's error and returned"
                context.expectRows(
                    store, "lefts", [Item(id: "l1", values: ["n": 11]), Item(id: "l2", values: ["n": 2])], operation)
                context.expectRows(store, "rights", (before["rights"] ?? []).filter { $0.id != "r1" }, operation)
                context.expectRows(store, "notes", before["notes"] ?? [], operation)
            },
            ConformanceCase("a transaction across tables commits all of its writes") { context in
                let store = try context.openStore(Fixtures.schema)
                _ = try seedTables(store)
                let answer = context.attempt("write(_:) over lefts, rights and notes") {
                    try store.write { transaction -> String in
                        try transaction.upsert([Item(id: "l1", values: ["n": 11])], into: "lefts", origin: .local)
                        try transaction.delete(ids: ["r1", "r2"], from: "rights")
                        try transaction.delete(matching: Query(table: "notes"))
                        return "result"
                    }
                }
                context.expectEqual(answer, "result", "write(_:) returns the body's result")
                context.expectLookup(store, "lefts", "l1", Item(id: "l1", values: ["n": 11]), "committed write(_:)")
                context.expectRows(
                    store, "rights", [Item(id: "r3", values: ["n": 3, "s": "three"])], "committed write(_:)")
                context.expectRows(store, "notes", [], "committed write(_:)")
            },
            ConformanceCase("reads inside a transaction see its own writes") { context in
                let store = try context.openStore(Fixtures.schema)
                _ = try seedTables(store)
                context.attempt("write(_:) reading its own writes") {
                    try store.write { transaction in
                        try transaction.upsert([Item(id: "l9", values: ["n": 9])], into: "lefts", origin: .local)
                        let found = try transaction.lookup(table: "lefts", id: "l9")
                        context.expectEqual(
                            found, Item(id: "l9", values: ["n": 9]),
                            "transaction.lookup(lefts, id 'l9') after its upsert")
                        let query = Query(
                            table: "lefts", filter: .comparison(.column("n"), .ge, .literal(2)), includeTotalCount: true
                        )
                        let read = try transaction.read(query)
                        context.expectEqual(
                            read.items.map(\.id), ["l2", "l9"], "transaction.read(lefts) \(query) after upserting 'l9'")
                        context.expectEqual(read.totalCount, 2, "transaction.read(lefts) \(query) total count")
                        try transaction.delete(ids: ["l1"], from: "lefts")
                        context.expectEqual(
                            try transaction.lookup(table: "lefts", id: "l1"), nil,
                            "transaction.lookup(lefts, id 'l1') after deleting it")
                        // insertNew sees them too: 'l9' is there since its upsert, 'l1' gone since its delete.
                        let present = try transaction.insertNew(
                            [Item(id: "l9", values: ["n": 90]), Item(id: "l1", values: ["n": 10])], into: "lefts",
                            origin: .local)
                        context.expectEqual(
                            present, ["l9"],
                            "transaction.insertNew(lefts) of ids 'l9' (upserted earlier in the transaction) and 'l1' (deleted earlier): the ids already there"
                        )
                        context.expectEqual(
                            try transaction.lookup(table: "lefts", id: "l9"), Item(id: "l9", values: ["n": 9]),
                            "transaction.lookup(lefts, id 'l9') after insertNew, which must leave it as upserted")
                        context.expectEqual(
                            try transaction.lookup(table: "lefts", id: "l1"), Item(id: "l1", values: ["n": 10]),
                            "transaction.lookup(lefts, id 'l1') after insertNew, which must insert it again")
                        let deleted = try transaction.delete(
                            matching: Query(table: "rights", filter: .comparison(.column("n"), .le, .literal(2))))
                        context.expectEqual(deleted, 2, "transaction.delete(matching: rights where n le 2) count")
                        let left = try transaction.read(Query(table: "rights")).items.map(\.id)
                        context.expectEqual(left, ["r3"], "transaction.read(rights) after delete(matching:)")
                    }
                }
            },
            ConformanceCase("a store works normally after a rolled-back transaction") { context in
                let store = try context.openStore(Fixtures.schema)
                _ = try seedTables(store)
                _ = try? store.write { transaction in
                    try transaction.upsert([Item(id: "ghost", values: ["n": 0])], into: "lefts", origin: .local)
                    throw RollBack()
                }
                context.attempt("upsert(lefts, id 'after') after a rollback") {
                    try store.upsert([Item(id: "after", values: ["n": 5])], into: "lefts")
                }
                context.expectLookup(
                    store, "lefts", "after", Item(id: "after", values: ["n": 5]), "upsert after a rollback")
                context.expectLookup(store, "lefts", "ghost", nil, "upsert after a rollback")
            },
            ConformanceCase("concurrent read-modify-write transactions lose no update") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Item(id: "counter", values: ["n": 0])], into: "lefts")
                let failures = await withTaskGroup(of: [String].self) { group in
                    for task in 0..<writerTasks {
                        group.addTask {
                            var failures: [String] = []
                            for step in 0..<incrementsPerTask {
                                do {
                                    try store.write { try incrementCounter(in: $0) }
                                } catch {
                                    failures.append(
                                        "task \(task) increment \(step): write(_:) on lefts id 'counter' threw \(CaseContext.describe(error))"
                                    )
                                }
                            }
                            return failures
                        }
                    }
                    return await group.reduce(into: []) { $0 += $1 }
                }
                for failure in failures.prefix(5) { context.fail(failure) }
                let expected = Int64(writerTasks * incrementsPerTask - failures.count)
                context.expectLookup(
                    store, "lefts", "counter", Item(id: "counter", values: ["n": .int(expected)]),
                    "\(writerTasks) tasks × \(incrementsPerTask) concurrent increments")
            },
            ConformanceCase("a read never sees half of a transaction") { context in
                let store = try context.openStore(Fixtures.schema)
                try store.upsert([Item(id: "x", values: ["n": 0]), Item(id: "y", values: ["n": 0])], into: "lefts")
                let writer = Task {
                    for round in 1...200 {
                        try store.write { transaction in
                            try transaction.upsert(
                                [Item(id: "x", values: ["n": .int(Int64(round))])], into: "lefts", origin: .local)
                            try transaction.upsert(
                                [Item(id: "y", values: ["n": .int(Int64(round))])], into: "lefts", origin: .local)
                        }
                    }
                }
                var torn: [String] = []
                for _ in 0..<200 {
                    let values = context.attempt("read(lefts) during concurrent writes") {
                        try store.read(Query(table: "lefts")).items.map { $0["n"] }
                    }
                    if let values, Set(values).count > 1 { torn.append("\(values)") }
                    await Task.yield()
                }
                do { try await writer.value } catch {
                    context.fail("write(_:) on lefts ids 'x', 'y' threw \(CaseContext.describe(error))")
                }
                context.expect(
                    torn.isEmpty,
                    "read(lefts) saw ids 'x' and 'y' from different transactions \(torn.count) times, e.g. n = \(torn.first ?? "")"
                )
            },
        ])

    /// Fills `lefts`, `rights` and `notes` with a few rows; answers what each table holds.
    private static func seedTables(_ store: any LocalStore) throws -> [(String, [Item])] {
        let lefts = [Item(id: "l1", values: ["n": 1, "s": "one"]), Item(id: "l2", values: ["n": 2])]
        let rights = [
            Item(id: "r1", values: ["n": 1]), Item(id: "r2", values: ["n": 2]),
            Item(id: "r3", values: ["n": 3, "s": "three"]),
        ]
        let notes = [Fixtures.note("a", priority: 1), Fixtures.note("b", priority: 2), Fixtures.note("c")]
        try store.write { transaction in
            try transaction.upsert(lefts, into: "lefts", origin: .local)
            try transaction.upsert(rights, into: "rights", origin: .local)
            try transaction.upsert(notes, into: "notes", origin: .local)
        }
        return [("lefts", lefts), ("rights", rights), ("notes", notes)]
    }
}
