import OfflineSync
import Testing

@testable import OfflineSyncLMDB

/// LMDB answers every query exactly as the reference `InMemoryStore` does, whether it uses the
/// primary key, an index, or a scan.
@Suite struct ReferenceComparisonTests {
    /// An LMDB store and the reference store, both declared with `table` and holding `count`
    /// reference rows; the closure runs with both and the store is closed and removed afterwards.
    private func withStores(
        _ table: TableSchema, count: Int,
        _ body: (LMDBStore, InMemoryStore) throws -> Void
    ) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([table]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([table]))
        try fill([store, reference], with: ReferenceData.items(count: count))
        try body(store, reference)
    }

    private func fill(_ stores: [any LocalStore], with items: [Item]) throws {
        for store in stores { try store.upsert(items, into: "notes") }
    }

    private func compare(_ store: any LocalStore, with reference: InMemoryStore, label: String) throws {
        for filter in ReferenceData.filters {
            for orderBy in ReferenceData.orderings {
                for page in ReferenceData.pages {
                    let query = Query(
                        table: "notes", filter: filter, orderBy: orderBy, skip: page.skip, top: page.top,
                        includeTotalCount: page.count)
                    let expected = try reference.read(query)
                    let actual = try store.read(query)
                    #expect(actual == expected, "\(label): \(query)")
                }
            }
        }
    }

    @Test func queriesWithIndexesMatchTheReference() throws {
        try withStores(indexedNotes, count: 250) { store, reference in
            try compare(store, with: reference, label: "indexed")
        }
    }

    @Test func queriesWithoutIndexesMatchTheReference() throws {
        try withStores(notes, count: 250) { store, reference in
            try compare(store, with: reference, label: "scan")
        }
    }

    @Test func indexesFollowUpdatesAndDeletes() throws {
        try withStores(indexedNotes, count: 300) { store, reference in
            try fill([store, reference], with: ReferenceData.items(count: 200, seed: 7))
            for target in [store, reference] as [any LocalStore] {
                try target.delete(ids: (0..<300).filter { $0 % 3 == 0 }.map { "n\($0)" }, from: "notes")
                try target.delete(matching: Query(table: "notes", filter: ReferenceData.cmp("rank", .eq, 1)))
            }
            try compare(store, with: reference, label: "after updates")
        }
    }

    @Test func selectionKeepsOnlyTheNamedColumns() throws {
        try withStores(indexedNotes, count: 50) { store, reference in
            let query = Query(
                table: "notes", filter: ReferenceData.cmp("rank", .gt, 0), orderBy: [SortKey("rank")],
                selection: ["title", "id"])
            let actual = try store.read(query)
            let expected = try reference.read(query)
            #expect(actual == expected)
        }
    }

    @Test func deleteMatchingHonoursOrderSkipAndTop() throws {
        try withStores(indexedNotes, count: 80) { store, reference in
            let query = Query(
                table: "notes", filter: ReferenceData.cmp("rank", .ge, 0),
                orderBy: [SortKey("score", descending: true)], skip: 2, top: 9)
            let deleted = try store.delete(matching: query)
            let expectedDeleted = try reference.delete(matching: query)
            #expect(deleted == expectedDeleted)
            let all = Query(table: "notes", includeTotalCount: true)
            let remaining = try store.read(all)
            let expectedRemaining = try reference.read(all)
            #expect(remaining == expectedRemaining)
        }
    }
}
