import OfflineSync
import Testing

@testable import OfflineSyncLMDB

/// Which rows a query reaches first: the planner's choices, checked without an environment.
@Suite struct QueryPlanTests {
    private let layout: TableLayout = {
        let indexes = indexedNotes.indexes.enumerated().map { position, index in
            IndexLayout(
                index: index, dbi: UInt32(position + 2),
                columns: index.columns.map { (name: $0, type: indexedNotes.column(named: $0)?.type ?? .string) },
                schema: indexedNotes)
        }
        return TableLayout(schema: indexedNotes, items: 1, indexes: indexes)
    }()

    private func plan(_ filter: FilterExpression?, orderBy: [SortKey] = [], top: Int? = nil) -> QueryPlan {
        QueryPlan.plan(Query(table: "notes", filter: filter, orderBy: orderBy, top: top), layout: layout)
    }

    private func indexName(_ plan: QueryPlan) -> String? {
        if case .index(let index, _) = plan.access { return index.index.name }
        return nil
    }

    @Test func idEqualityIsAPointLookup() {
        guard
            case .ids(let ids) = plan(.and(ReferenceData.cmp("id", .eq, "a"), ReferenceData.cmp("rank", .eq, 1))).access
        else {
            Issue.record("expected point lookups")
            return
        }
        #expect(ids == ["a"])
    }

    @Test func equalityOnAnIndexedColumnUsesThatIndex() {
        #expect(indexName(plan(ReferenceData.cmp("rank", .eq, 3))) == "byRank")
    }

    @Test func theIndexPinnedDownFurthestWins() {
        #expect(
            indexName(plan(.and(ReferenceData.cmp("done", .eq, true), ReferenceData.cmp("title", .eq, "x"))))
                == "byDoneTitle")
    }

    @Test func aRangeOnAnIndexedColumnIsOrderedWhenSortedByIt() {
        let chosen = plan(ReferenceData.cmp("rank", .gt, 3), orderBy: [SortKey("rank", descending: true)], top: 5)
        #expect(indexName(chosen) == "byRank")
        #expect(chosen.isOrdered && chosen.descending)
    }

    @Test func theFirstRowsInIndexOrderWalkTheIndex() {
        let chosen = plan(nil, orderBy: [SortKey("score")], top: 1)
        #expect(indexName(chosen) == "byScore")
        #expect(chosen.isOrdered)
    }

    @Test func anUnindexedPredicateScansTheTable() {
        let chosen = plan(.function(.startsWith, [.column("tags"), .literal("[")]))
        guard case .primary(let range) = chosen.access else {
            Issue.record("expected a table scan")
            return
        }
        #expect(range.lower == nil && range.upper == nil)
    }

    @Test func anIdRangeWalksPartOfTheTable() {
        guard
            case .primary(let range) = plan(.and(ReferenceData.cmp("id", .ge, "b"), ReferenceData.cmp("id", .lt, "d")))
                .access
        else {
            Issue.record("expected an id range")
            return
        }
        #expect(range.lower == Array("b".utf8) && range.upper == Array("d".utf8))
    }

    @Test func aStartsWithOnTheIdWalksThePrefix() {
        guard case .primary(let range) = plan(.function(.startsWith, [.column("id"), .literal("ab")])).access else {
            Issue.record("expected an id range")
            return
        }
        #expect(range.lower == Array("ab".utf8) && range.upper == Array("ab".utf8))
    }

    @Test func aStartsWithOnAnIndexedStringSeeksThePrefix() {
        let chosen = plan(
            .function(.startsWith, [.column("title"), .literal("b\u{0}")]), orderBy: [SortKey("title")], top: 3)
        #expect(indexName(chosen) == "byTitle")
        guard case .index(_, let ranges) = chosen.access else { return }
        // The component's tag, the prefix with its NUL escaped, and no terminator.
        #expect(ranges.count == 1 && ranges[0].lower == [1, 98, 0, 0xFF] && ranges[0].upper == [1, 98, 0, 0xFF])
        #expect(chosen.isOrdered && chosen.isExactlyOrdered)
    }

    @Test func anInListSortedOnItsColumnArrivesInOrder() {
        let chosen = plan(.isIn(.column("rank"), [5, 1, 3]), orderBy: [SortKey("rank")], top: 2)
        #expect(indexName(chosen) == "byRank")
        #expect(chosen.isOrdered && chosen.isExactlyOrdered && chosen.rangesAreDisjoint)
        guard case .index(_, let ranges) = chosen.access else { return }
        #expect(
            ranges.map { $0.lower ?? [] } == ranges.map { $0.lower ?? [] }.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func onlyTheIndexsOwnOrderIsExact() {
        // byDueRank orders by (due, rank, id): ordering by due alone leaves ties to sort by id.
        let dueOnly = plan(
            ReferenceData.cmp("due", .gt, .date(Timestamp(millisecondsSince1970: 0))), orderBy: [SortKey("due")], top: 3
        )
        #expect(indexName(dueOnly) == "byDueRank")
        #expect(dueOnly.isOrdered && !dueOnly.isExactlyOrdered)
        let both = plan(
            ReferenceData.cmp("due", .gt, .date(Timestamp(millisecondsSince1970: 0))),
            orderBy: [SortKey("due"), SortKey("rank"), SortKey("id")], top: 3)
        #expect(both.isOrdered && both.isExactlyOrdered)
        let descending = plan(ReferenceData.cmp("rank", .gt, 3), orderBy: [SortKey("rank", descending: true)], top: 5)
        #expect(descending.isOrdered && !descending.isExactlyOrdered)
    }
}
