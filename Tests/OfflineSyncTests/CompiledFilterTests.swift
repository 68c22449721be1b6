import Testing

@testable import OfflineSync
@testable import OfflineSyncConformance

/// ``CompiledFilter`` (what ``QueryEvaluator/matches(_:)`` runs) against the tree-walking
/// interpreter ``QueryEvaluator/evaluate(_:on:)``, on the seeded query corpus: every random,
/// planner-shaped and Azure-client filter, on rows laid out on the table (columns read by
/// position) and on rows laid out otherwise (read by name).
@Suite struct CompiledFilterTests {
    @Test(arguments: [UInt64(1), 7, 42])
    func answersAsTheInterpreterOnTheCorpus(seed: UInt64) throws {
        var corpus = QueryCorpus(seed: seed)
        let table = QueryCorpus.table
        let loose = corpus.rows(count: 150)
        let laidOut = try loose.map { try table.normalize($0, origin: .local) }
        #expect(laidOut.allSatisfy { $0.layout === table.rowLayout }, "normalised rows share the table's layout")
        var filters = try QueryCorpus.clientQueries().compactMap(\.filter)
        for _ in 0..<400 {
            if let filter = corpus.query().filter { filters.append(filter) }
            if let filter = corpus.plannerQuery().filter { filters.append(filter) }
        }
        var checked = 0
        var matched = 0
        for filter in filters {
            let compiled = CompiledFilter(filter, layout: table.rowLayout)
            for row in loose + laidOut {
                let expected = QueryEvaluator.isTrue(QueryEvaluator.evaluate(filter, on: row))
                #expect(compiled.matches(row) == expected, "\(filter) on \(row)")
                checked += 1
                if expected { matched += 1 }
            }
        }
        // The corpus must exercise both answers, or the comparison proves nothing.
        #expect(matched > checked / 20 && matched < checked - checked / 20, "\(matched) of \(checked) matched")
    }

    @Test func mirrorsLiteralFirstComparisonsAndNegatesNestedConnectives() throws {
        let layout = RowLayout(uniqueNames: ["n", "s"])
        let row = Item(id: "k", layout: layout, values: [.int(5), nil])
        func matches(_ text: String) throws -> Bool {
            CompiledFilter(try ODataParser.filter(text), layout: layout).matches(row)
        }
        #expect(try matches("3 lt n"))
        #expect(try !matches("3 gt n"))
        #expect(try matches("5 ge n and 5 le n"))
        #expect(try !matches("s eq null and not (n eq 5)"))
        #expect(try matches("not (n eq 4 or s ne null)"))
        #expect(try !matches("null lt n"), "an ordering with null is false either way round")
        #expect(try matches("id eq 'k' and n in (1, 5)"))
        #expect(CompiledFilter(nil, layout: layout).matches(row), "no filter matches every row")
    }
}
