import OfflineSync

extension StoreTierGroups {
    /// Rule 6 operation by operation: every read a transaction can make (`read` unfiltered,
    /// filtered and counting, `lookup`, `insertNew`'s report) after every kind of write or delete
    /// earlier in it; and every transaction method's error, caught by the closure, rolling nothing
    /// back.
    static let visibilityCases: [ConformanceCase] = [
        ConformanceCase("every read inside a transaction sees each kind of write and delete made earlier in it") {
            context in
            let store = try context.openStore(StoreSchema([Fixtures.left]))
            let committed = (1...6).map {
                Item(id: "c\($0)", values: ["n": .int(Int64($0)), "s": .string("s\($0 % 2)")])
            }
            try store.upsert(committed, into: "lefts")
            let table = Fixtures.left
            let n = FilterExpression.column("n")
            // Each write, and the rows the table holds after it.
            let writes: [(String, (any StoreTransaction) throws -> Void, [Item])] = [
                (
                    "upsert(.local) of a new row and a replaced one",
                    {
                        try $0.upsert(
                            [Item(id: "w1", values: ["n": 10]), Item(id: "c2", values: ["n": 20])], into: "lefts",
                            origin: .local)
                    },
                    committed.filter { $0.id != "c2" } + [
                        Item(id: "w1", values: ["n": 10]), Item(id: "c2", values: ["n": 20]),
                    ]
                ),
                (
                    "upsert(.server) of a new row and a replaced one",
                    {
                        try $0.upsert(
                            [Item(id: "w1", values: ["n": 10, "zz": 1]), Item(id: "c2", values: ["s": "t"])],
                            into: "lefts", origin: .server)
                    },
                    committed.filter { $0.id != "c2" } + [
                        Item(id: "w1", values: ["n": 10]), Item(id: "c2", values: ["s": "t"]),
                    ]
                ),
                (
                    "insertNew of a new row and a present one",
                    {
                        _ = try $0.insertNew(
                            [Item(id: "w1", values: ["n": 10]), Item(id: "c2", values: ["n": 99])], into: "lefts",
                            origin: .local)
                    },
                    committed + [Item(id: "w1", values: ["n": 10])]
                ),
                (
                    "delete(ids:) of two rows",
                    { try $0.delete(ids: ["c2", "c5", "missing"], from: "lefts") },
                    committed.filter { $0.id != "c2" && $0.id != "c5" }
                ),
                (
                    "delete(matching:) of the rows with n > 3",
                    { _ = try $0.delete(matching: Query(table: "lefts", filter: .comparison(n, .gt, .literal(3)))) },
                    committed.filter { ($0["n"].intValue ?? 0) <= 3 }
                ),
                (
                    "delete(matching:) of the first two rows by n descending",
                    {
                        _ = try $0.delete(
                            matching: Query(table: "lefts", orderBy: [SortKey("n", descending: true)], top: 2))
                    },
                    committed.filter { ($0["n"].intValue ?? 0) <= 4 }
                ),
            ]
            let queries = [
                Query(table: "lefts"), Query(table: "lefts", filter: .comparison(n, .ge, .literal(2))),
                Query(table: "lefts", filter: .comparison(.column("s"), .eq, .literal("s1")), includeTotalCount: true),
                Query(table: "lefts", top: 0, includeTotalCount: true),
                Query(table: "lefts", filter: .comparison(n, .ne, .literal(.null)), top: 0, includeTotalCount: true),
                Query(table: "lefts", orderBy: [SortKey("n", descending: true)], top: 3, selection: ["n"]),
            ]
            let probed = ["w1", "c2", "c5", "c6", "c1"]
            for (what, write, expected) in writes {
                context.rollingBack(store, "write(_:) with \(what), then reads") { transaction in
                    try write(transaction)
                    for query in queries {
                        if let difference = Reference.difference(
                            query, rows: expected, schema: table, answer: { try transaction.read(query) })
                        {
                            context.fail("after \(what), transaction.read(lefts) \(query): \(difference)")
                        }
                    }
                    for id in probed {
                        let want = expected.first { $0.id == id }
                        let found = try transaction.lookup(table: "lefts", id: id)
                        if let difference = RowDifference.first(
                            expected: want.map { [$0] } ?? [], actual: found.map { [$0] } ?? [])
                        {
                            context.fail("after \(what), transaction.lookup(lefts, id '\(id)'): \(difference)")
                        }
                    }
                    let present = try transaction.insertNew(
                        probed.map { Item(id: $0, values: ["n": -1]) }, into: "lefts", origin: .local)
                    let wanted = probed.filter { id in expected.contains { $0.id == id } }
                    if present != wanted {
                        context.fail(
                            "after \(what), transaction.insertNew(lefts) of \(probed) reported \(present) present; expected \(wanted)"
                        )
                    }
                }
                context.expectRows(store, "lefts", committed, "after a rolled-back transaction with \(what)")
            }
        },
        ConformanceCase(
            "an operation's error caught inside a transaction rolls nothing back, for every method that throws"
        ) {
            context in
            let store = try context.openStore(StoreSchema([Fixtures.left, Fixtures.values]))
            let failing: [(String, (any StoreTransaction) throws -> Void)] = [
                (
                    "read of an unknown column",
                    { _ = try $0.read(Query(table: "lefts", filter: .comparison(.column("nope"), .eq, .literal(1)))) }
                ),
                ("read of an undeclared table", { _ = try $0.read(Query(table: "undeclared")) }),
                ("lookup in an undeclared table", { _ = try $0.lookup(table: "undeclared", id: "a") }),
                (
                    "upsert of a value of the wrong type",
                    { try $0.upsert([Item(id: "bad", values: ["n": "text"])], into: "lefts", origin: .local) }
                ),
                (
                    "upsert of an unknown column from a local write",
                    { try $0.upsert([Item(id: "bad", values: ["nope": 1])], into: "lefts", origin: .local) }
                ),
                (
                    "insertNew of a value of the wrong type",
                    {
                        _ = try $0.insertNew(
                            [Item(id: "bad", values: ["n": .double(2.5)])], into: "lefts", origin: .server)
                    }
                ),
                (
                    "insertNew of an invalid id",
                    { _ = try $0.insertNew([Item(id: "", values: ["n": 1])], into: "lefts", origin: .local) }
                ),
                ("delete(ids:) from an undeclared table", { try $0.delete(ids: ["a"], from: "undeclared") }),
                (
                    "delete(matching:) with an ill-typed filter",
                    {
                        _ = try $0.delete(
                            matching: Query(table: "lefts", filter: .comparison(.column("n"), .eq, .literal("x"))))
                    }
                ),
                (
                    "delete(matching:) of an undeclared table",
                    { _ = try $0.delete(matching: Query(table: "undeclared")) }
                ),
            ]
            for (position, (what, operation)) in failing.enumerated() {
                let before = Item(id: "before\(position)", values: ["n": .int(Int64(position))])
                let after = Item(id: "after\(position)", values: ["s": .string(what)])
                let other = Item(id: "v\(position)", values: ["i": .int(Int64(position))])
                context.attempt("write(_:) catching the error of a \(what)") {
                    try store.write { transaction in
                        try transaction.upsert([before], into: "lefts", origin: .local)
                        try transaction.upsert([other], into: "values", origin: .local)
                        do {
                            try operation(transaction)
                            context.fail("a \(what) inside a transaction did not throw")
                        } catch {}
                        try transaction.upsert([after], into: "lefts", origin: .local)
                        try transaction.delete(ids: ["before\(position - 1)"], from: "lefts")
                    }
                }
                context.expectLookup(
                    store, "lefts", before.id, before, "a transaction that caught the error of a \(what)")
                context.expectLookup(
                    store, "lefts", after.id, after, "a transaction that caught the error of a \(what)")
                context.expectLookup(
                    store, "values", other.id, other, "a transaction that caught the error of a \(what)")
                context.expectLookup(
                    store, "lefts", "before\(position - 1)", nil, "a transaction that caught the error of a \(what)")
                context.expectLookup(store, "lefts", "bad", nil, "a transaction that caught the error of a \(what)")
            }
        },
    ]
}
