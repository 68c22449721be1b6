import OfflineSync
import OfflineSyncService
import Testing

/// The change feed and query observation of the core, on ``InMemoryStore`` (the conformance
/// sync tier's `observation` group runs the same promises on every backend).
@Suite struct ObservationTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])
    static let tag = TableSchema("tag", columns: [Column("name", .string)])

    static func context() throws -> SyncContext {
        try SyncContext(
            store: InMemoryStore(), remote: try InMemoryRemote(tables: [todo, tag]), tables: [todo, tag])
    }

    @Test func concurrentWritersAppearInTheFeedInCommitOrderAndNoneIsLost() async throws {
        let context = try Self.context()
        let todo = try context.table("todo")
        let feed = context.changes(bufferLimit: 1_000)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        _ = try? todo.insert(Item(id: "w\(writer)-\(index)", values: ["text": "x"]))
                    }
                }
            }
        }
        var sequences: [UInt64] = []
        var ids = Set<String>()
        for await change in feed {
            sequences.append(change.sequence)
            ids.formUnion(change.ids(in: "todo") ?? [])
            if sequences.count == 400 { break }
        }
        #expect(sequences == Array(1...400))
        #expect(ids.count == 400)
        #expect(try todo.read().items.count == 400)
    }

    @Test func anObserverConvergesOnTheLastCommitUnderConcurrentWriters() async throws {
        let context = try Self.context()
        let todo = try context.table("todo")
        var results = try todo.observe(Query(table: "todo", top: 0, includeTotalCount: true)).makeAsyncIterator()
        #expect(try await results.next()?.totalCount == 0)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<100 {
                        _ = try? todo.insert(Item(id: "w\(writer)-\(index)", values: ["text": "x"]))
                    }
                }
            }
        }
        var seen: [Int] = []
        while let result = try await results.next() {
            seen.append(result.totalCount ?? -1)
            if result.totalCount == 400 { break }
        }
        #expect(seen.last == 400)
        #expect(seen == seen.sorted(), "counts only grow: \(seen)")
    }

    @Test func aMergedChangeSetDropsTheIdsOfATableBeyondTheLimit() async throws {
        let context = try Self.context()
        let todo = try context.table("todo")
        let tag = try context.table("tag")
        let feed = context.changes(bufferLimit: 1)
        try todo.insert((0..<(ChangeSet.mergedIdLimit - 5)).map { Item(id: "a\($0)", values: ["text": "x"]) })
        try todo.insert((0..<10).map { Item(id: "b\($0)", values: ["text": "x"]) })
        try tag.insert(Item(id: "t", values: ["name": "home"]))
        var changes = feed.makeAsyncIterator()
        let merged = await changes.next()
        #expect(merged?.transactionCount == 3)
        #expect(merged?.sequence == 3)
        #expect(merged?.tables == ["todo", "tag"])
        #expect(merged?.ids(in: "todo") == nil, "too many todo ids to keep")
        #expect(merged?.ids(in: "tag") == ["t"])
        #expect(merged?.ids(in: "other") == [])
        #expect(merged?.origin == .localEdit)
    }

    @Test func leavingTheLoopReleasesTheObserver() async throws {
        let context = try Self.context()
        let todo = try context.table("todo")
        try todo.insert(Item(id: "a", values: ["text": "x"]))
        for try await result in try todo.observe() {
            #expect(result.items.count == 1)
            break
        }
        #expect(context.observationCounts.observers == 0)
        do {
            let feed = context.changes()
            _ = feed
            #expect(context.observationCounts.feeds == 1)
        }
        #expect(context.observationCounts.feeds == 0)
    }
}
