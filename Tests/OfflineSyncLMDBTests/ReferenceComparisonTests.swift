import OfflineSync
import Testing
@testable import OfflineSyncLMDB

/// LMDB answers every query exactly as the reference `InMemoryStore` does, whether it uses the
/// primary key, an index, or a scan.
@Suite struct ReferenceComparisonTests {
    private func fill(_ stores: [any LocalStore], with items: [Item]) throws {
        for store in stores { try store.upsert(items, into: "notes") }
    }

    private func compare(_ store: any LocalStore, with reference: InMemoryStore, label: String) throws {
        for filter in ReferenceData.filters {
            for orderBy in ReferenceData.orderings {
                for page in ReferenceData.pages {
                    let query = Query(table: "notes", filter: filter, orderBy: orderBy, skip: page.skip, top: page.top,
                                      includeTotalCount: page.count)
                    let expected = try reference.read(query)
                    let actual = try store.read(query)
                    #expect(actual == expected, "\(label): \(query)")
                }
            }
        }
    }

    @Test func queriesWithIndexesMatchTheReference() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([indexedNotes]))
        try fill([store, reference], with: ReferenceData.items(count: 250))
        try compare(store, with: reference, label: "indexed")
    }

    @Test func queriesWithoutIndexesMatchTheReference() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([notes]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([notes]))
        try fill([store, reference], with: ReferenceData.items(count: 250))
        try compare(store, with: reference, label: "scan")
    }

    @Test func indexesFollowUpdatesAndDeletes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([indexedNotes]))
        try fill([store, reference], with: ReferenceData.items(count: 300))
        try fill([store, reference], with: ReferenceData.items(count: 200, seed: 7))
        for target in [store, reference] as [any LocalStore] {
            try target.delete(ids: (0..<300).filter { $0 % 3 == 0 }.map { "n\($0)" }, from: "notes")
            try target.delete(matching: Query(table: "notes", filter: ReferenceData.cmp("rank", .eq, 1)))
        }
        try compare(store, with: reference, label: "after updates")
    }

    @Test func selectionKeepsOnlyTheNamedColumns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([indexedNotes]))
        try fill([store, reference], with: ReferenceData.items(count: 50))
        let query = Query(table: "notes", filter: ReferenceData.cmp("rank", .gt, 0), orderBy: [SortKey("rank")], selection: ["title", "id"])
        #expect(try store.read(query) == reference.read(query))
    }

    @Test func deleteMatchingHonoursOrderSkipAndTop() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(StoreSchema([indexedNotes]), in: directory)
        defer { try? store.close() }
        let reference = InMemoryStore()
        try reference.open(schema: StoreSchema([indexedNotes]))
        try fill([store, reference], with: ReferenceData.items(count: 80))
        let query = Query(table: "notes", filter: ReferenceData.cmp("rank", .ge, 0), orderBy: [SortKey("score", descending: true)], skip: 2, top: 9)
        #expect(try store.delete(matching: query) == reference.delete(matching: query))
        let all = Query(table: "notes", includeTotalCount: true)
        #expect(try store.read(all) == reference.read(all))
    }
}
