import OfflineSync
import Testing

/// The SQL translation of queries, checked row for row against `QueryEvaluator` (through
/// `InMemoryStore`) on every SQL backend, so both SQLite 3.40 and SQLCipher's 3.15 are covered.
@Suite struct QueryTranslationTests {
    private func withStores(_ backend: SQLBackend, _ body: (any LocalStore, InMemoryStore) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        let reference = InMemoryStore()
        for candidate in [store, reference] as [any LocalStore] {
            try candidate.open(schema: Corpus.schema)
            try candidate.upsert(Corpus.items, into: "t")
        }
        defer { try? store.close() }
        try body(store, reference)
    }

    @Test(arguments: SQLBackend.all)
    func everyFilterMatchesTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            for filter in Corpus.filters {
                let query = Query(table: "t", filter: filter, includeTotalCount: true)
                let expected = try reference.read(query)
                let actual = try store.read(query)
                #expect(actual.items.map(\.id) == expected.items.map(\.id), "\(backend) filter \(filter)")
                #expect(actual.totalCount == expected.totalCount, "\(backend) count of \(filter)")
            }
        }
    }

    @Test(arguments: SQLBackend.all)
    func everyOrderingMatchesTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            for column in ["id", "b", "i", "d", "s", "dt", "j"] {
                for descending in [false, true] {
                    for (skip, top) in [(0, nil), (2, 3), (0, 0), (9, 5), (20, nil)] as [(Int, Int?)] {
                        let query = Query(
                            table: "t", orderBy: [SortKey(column, descending: descending)], skip: skip, top: top)
                        let actual = try store.read(query).items.map(\.id)
                        let expected = try reference.read(query).items.map(\.id)
                        #expect(actual == expected, "\(backend) \(query)")
                    }
                }
            }
            let twoKeys = Query(table: "t", orderBy: [SortKey("b", descending: true), SortKey("i")])
            let actual = try store.read(twoKeys).items.map(\.id)
            let expected = try reference.read(twoKeys).items.map(\.id)
            #expect(actual == expected)
        }
    }

    @Test(arguments: SQLBackend.all)
    func valuesRoundTripExactly(backend: SQLBackend) throws {
        try withStores(backend) { store, _ in
            let rows = try store.read(Query(table: "t")).items
            let expected = Corpus.items.sorted { ValueSemantics.compareBytes($0.id, $1.id) < 0 }
            #expect(rows == expected)
            let negativeZero = try store.lookup(table: "t", id: "a")?["d"].doubleValue
            #expect(negativeZero?.sign == .minus)
        }
    }

    @Test(arguments: SQLBackend.all)
    func selectionReturnsOnlyTheListedColumns(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let query = Query(
                table: "t", filter: .comparison(.column("i"), .gt, .literal(0)), selection: ["id", "s", "j"])
            let actual = try store.read(query)
            let expected = try reference.read(query)
            #expect(actual == expected)
        }
    }

    @Test(arguments: SQLBackend.all)
    func deleteMatchingAppliesOrderSkipAndTop(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let query = Query(
                table: "t", filter: .comparison(.column("i"), .ne, .literal(nil)),
                orderBy: [SortKey("d", descending: true)], skip: 1, top: 3)
            let deleted = try store.delete(matching: query)
            let expectedDeleted = try reference.delete(matching: query)
            #expect(deleted == expectedDeleted)
            let remaining = try store.read(Query(table: "t"))
            let expectedRemaining = try reference.read(Query(table: "t"))
            #expect(remaining == expectedRemaining)
        }
    }

    @Test(arguments: SQLBackend.all)
    func deleteMatchingWithoutAFilterCountsEveryRow(backend: SQLBackend) throws {
        try withStores(backend) { store, _ in
            let deleted = try store.delete(matching: Query(table: "t"))
            let remaining = try store.count("t")
            #expect(deleted == Corpus.items.count)
            #expect(remaining == 0)
        }
    }

    @Test(arguments: SQLBackend.all)
    func inListsLongerThanTheParameterLimitMatchTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let values = (0..<1500).map { Value.string("v\($0)") } + ["abc", "ABC", nil]
            let query = Query(
                table: "t", filter: .isIn(.column("s"), values), orderBy: [SortKey("s")], top: 2,
                includeTotalCount: true)
            let actual = try store.read(query)
            let expected = try reference.read(query)
            #expect(actual == expected)
            let deleted = try store.delete(matching: query)
            let expectedDeleted = try reference.delete(matching: query)
            #expect(deleted == expectedDeleted)
            let remaining = try store.count("t")
            let expectedRemaining = try reference.count("t")
            #expect(remaining == expectedRemaining)
        }
    }
}
