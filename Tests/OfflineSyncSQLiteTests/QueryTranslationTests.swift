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

    @Test("a NaN or infinite literal is refused as the in-memory store refuses it (SQLite would bind NaN as null)", arguments: SQLBackend.all)
    func nonFiniteLiteralsAreRefused(backend: SQLBackend) throws {
        try withStores(backend) { store, _ in
            for number in [Double.nan, .infinity] {
                let query = Query(table: "t", filter: .comparison(.column("d"), .ne, .literal(.double(number))))
                let error = try #require(throws: OfflineSyncError.self) { try store.read(query) }
                #expect(error.code == .invalidQuery, "\(error)")
            }
        }
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

    /// Functions and arithmetic over the corpus, including the forms that SQL cannot express
    /// exactly (evaluated in Swift over SQL-selected candidates).
    static let functionFilters: [String] = [
        "indexof(s, 'b') eq 1", "indexof(s, '') eq 0", "indexof(s, 'é') eq 1", "indexof(s, 'b') eq 2",
        "indexof(s, 'smile') eq 2", "substring(s, 1) eq 'bc'", "substring(s, 1, 1) eq 'b'",
        "substring(s, -3, 4) eq 'a'",
        "substring(s, 2) eq 'b'", "substring(s, 0, 2) eq '\u{0}é'", "length(substring(s, 1)) eq 2",
        "trim(s) eq 'abc'", "trim(concat('  ', s)) eq s", "concat(s, s) eq 'abcabc'", "concat(s, 'x') eq 'x'",
        "replace(s, 'abc', 'x') eq 'xx'", "replace(s, 'b', '') eq 'ac'", "replace(s, '', 'x') eq s",
        "replace(s, null, 'x') eq null", "replace(s, '\u{0}', 'z') eq 'azb'", "replace(s, s, 'x') eq 'x'",
        "hour(dt) eq 23", "minute(dt) eq 59", "second(dt) eq 59", "hour(dt) eq 0", "second(dt) lt 30",
        "round(d) eq 2", "round(d) eq -2", "floor(d) eq -3", "ceiling(d) eq 2", "round(d) eq 0", "round(i) eq 3",
        "round(0.49999999999999994) eq 0", "round(-2.5) eq -3", "floor(-0.5) eq -1", "ceiling(d div 2) eq 1",
        "round(round(round(d mul 1.5))) gt 1", "i add 1 eq 4", "i sub 1 eq 2", "i mul 2 eq 6", "i div 2 eq 1",
        "i mod 2 eq 1", "i mod 2 eq -1", "i mod 0 eq null", "i div 0 eq null", "d div 0 eq null", "d mod 2 eq 1.5",
        "d mod 2 eq -0.25", "i add 1 gt 9223372036854775807", "i sub 1 lt -9223372036854775808",
        "i mul i gt 1e18", "-i eq 5", "-i gt 9223372036854775807", "-d lt 0", "(i add 1) mod 2 eq 0",
        "i div -1 gt 0", "d mul 1e10 gt 1e300", "(d mul 1e300) sub (d mul 1e300) eq null", "i add d gt 3",
        "length(s) add indexof(s, 'c') eq 5", "year(dt) add month(dt) gt 2000",
    ]

    @Test(arguments: SQLBackend.all)
    func everyFunctionAndOperatorMatchesTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            for text in QueryTranslationTests.functionFilters {
                let filter = try ODataParser.filter(text)
                for query in [
                    Query(table: "t", filter: filter, includeTotalCount: true),
                    Query(table: "t", filter: .not(filter), orderBy: [SortKey("d")], skip: 1, top: 3),
                ] {
                    let expected = try reference.read(query)
                    let actual = try store.read(query)
                    #expect(actual == expected, "\(backend) \(query)")
                }
            }
        }
    }

    @Test(arguments: SQLBackend.all)
    func deleteMatchingAFilterEvaluatedInSwiftDeletesTheSameRows(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let query = Query(
                table: "t", filter: try ODataParser.filter("substring(s, 1) ne 'bc' and i gt 0"),
                orderBy: [SortKey("i")], top: 2)
            #expect(try store.delete(matching: query) == (try reference.delete(matching: query)))
            #expect(try store.read(Query(table: "t")) == (try reference.read(Query(table: "t"))))
        }
    }

    @Test(arguments: SQLBackend.all)
    func filtersWhoseSQLWouldGrowExponentiallyMatchTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let inChain =
                String(repeating: "(", count: 60) + "b"
                + String(repeating: " in (null, true))", count: 60)
            let lengths =
                String(repeating: "length(substring(s, ", count: 60) + "1" + String(repeating: "))", count: 60)
            for text in [inChain, "\(lengths) ge 0", "endswith(trim(trim(trim(s))), 'c')"] {
                let query = Query(table: "t", filter: try ODataParser.filter(text), includeTotalCount: true)
                #expect(try store.read(query) == (try reference.read(query)), "\(backend) \(text)")
            }
        }
    }

    @Test(arguments: SQLBackend.all)
    func deeplyNestedFiltersMatchTheEvaluator(backend: SQLBackend) throws {
        try withStores(backend) { store, reference in
            let texts = [
                String(repeating: "not ", count: 60) + "(i gt 0)",
                String(repeating: "tolower(", count: 80) + "s" + String(repeating: ")", count: 80) + " eq 'abc'",
                String(repeating: "round(", count: 40) + "d" + String(repeating: ")", count: 40) + " eq 2",
                "i" + String(repeating: " add 1", count: 95) + " gt 0",
                (0..<90).map { "s ne 'x\($0)'" }.joined(separator: " and "),
                String(repeating: "(b or ", count: 90) + "b" + String(repeating: ")", count: 90),
            ]
            for text in texts {
                let query = Query(table: "t", filter: try ODataParser.filter(text), includeTotalCount: true)
                #expect(try store.read(query) == (try reference.read(query)), "\(backend) \(text.prefix(40))")
                #expect(
                    try store.delete(matching: query) == (try reference.delete(matching: query)),
                    "\(backend) \(text.prefix(40))")
            }
        }
    }
}
