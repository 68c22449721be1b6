import OfflineSync
import OfflineSyncService
import Synchronization

/// Query observation and the change feed over the store under test: every kind of write wakes
/// the observers of its table and only those, nothing is missed between the first result and
/// the first change, bursts are coalesced, cancellation releases everything.
enum SyncTierObservation {
    /// Every todo, by id.
    static let allTodos = Query(table: "todo")

    static let observation = ConformanceGroup(
        "observation", tier: .sync,
        cases: [
            CaseContext.syncCase("an observation yields the current result first") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                var results = try f.todo.observe(allTodos).makeAsyncIterator()
                let first = try await next(&results, c, "first result")
                c.expectEqual(first?.items.map(\.id), ["a", "b"], "first result ids")
                c.expectEqual(first, try f.todo.read(allTodos), "first result equals a read")
                return nil
            },
            CaseContext.syncCase("every kind of write wakes the observers of its table and only those") { f, c in
                try await everyKindOfWrite(f, c)
                return nil
            },
            CaseContext.syncCase("a change between registering and the first read is not missed") { f, c in
                // The store commits an insert right after the observer's first read returned: a
                // result without it was yielded, so the next one must follow without another write.
                let once = Locked(false)
                let todo = f.todo
                f.store.afterRead { query in
                    guard query.table == "todo",
                        once.withLock({ done in
                            defer { done = true }
                            return !done
                        })
                    else {
                        return
                    }
                    _ = try? todo.insert(SyncFixture.todo("late", "written after the first read"))
                }
                var results = try f.todo.observe(allTodos).makeAsyncIterator()
                let first = try await next(&results, c, "first result")
                f.store.afterRead(nil)
                c.expectEqual(first?.items.map(\.id), [], "first result (read before the insert)")
                let second = try await next(&results, c, "result after the insert")
                c.expectEqual(second?.items.map(\.id), ["late"], "result after the insert")
                return nil
            },
            CaseContext.syncCase("a 1,000-record pull in 100 pages wakes an observer once") { f, c in
                try f.seedServer(1000)
                let feed = f.context.changes(bufferLimit: 8)
                var changes = feed.makeAsyncIterator()
                var results = try f.todo.observe(Query(table: "todo", top: 0, includeTotalCount: true))
                    .makeAsyncIterator()
                c.expectEqual(try await next(&results, c, "first result")?.totalCount, 0, "count before the pull")
                let wakes = f.context.observerWakeCount
                let pulled = try await f.todo.pull(options: PullOptions(pageSize: 10))
                c.expectEqual(pulled.stored, 1000, "records stored")
                c.expectEqual(f.context.observerWakeCount - wakes, 1, "observer wake-ups during the pull")
                c.expectEqual(try await next(&results, c, "result after the pull")?.totalCount, 1000, "count after")
                // The feed kept at most 8 change sets, merging the oldest; together they cover
                // all 100 page transactions and every id pulled.
                var transactions = 0
                var ids = Set<String>()
                var sets = 0
                while transactions < 100, let change = await changes.next() {
                    sets += 1
                    transactions += change.transactionCount
                    c.expectEqual(change.origins, [.pull], "origins of change set \(change)")
                    ids.formUnion(change.ids(in: "todo") ?? [])
                }
                c.expectEqual(transactions, 100, "page transactions in the feed")
                c.expect(sets <= 8, "the feed held \(sets) change sets; its limit is 8")
                c.expectEqual(ids.count, 1000, "ids in the feed")
                return nil
            },
            CaseContext.syncCase("a slow consumer gets the newest result, not a backlog") { f, c in
                var results = try f.todo.observe(allTodos).makeAsyncIterator()
                _ = try await next(&results, c, "first result")
                for index in 0..<50 { try f.todo.insert(SyncFixture.todo("i\(index + 100)", "edit \(index)")) }
                let newest = try await next(&results, c, "result after 50 edits")
                c.expectEqual(newest?.items.count, 50, "items in the one result after 50 edits")
                try f.todo.insert(SyncFixture.todo("i200", "one more"))
                c.expectEqual(try await next(&results, c, "result after one more")?.items.count, 51, "items")
                return nil
            },
            CaseContext.syncCase("a rolled-back transaction wakes nobody and feeds nothing") { f, c in
                var results = try f.todo.observe(allTodos).makeAsyncIterator()
                _ = try await next(&results, c, "first result")
                var changes = f.context.changes().makeAsyncIterator()
                let wakes = f.context.observerWakeCount
                f.store.failWrite(1)
                c.expectThrows("insert into a failing store", code: .storage) {
                    try f.todo.insert(SyncFixture.todo("a", "lost"))
                }
                c.expectEqual(f.context.observerWakeCount - wakes, 0, "wake-ups after a rolled-back insert")
                try f.todo.insert(SyncFixture.todo("b", "kept"))
                let change = await changes.next()
                c.expectEqual(change?.ids(in: "todo"), ["b"], "first change set after the rollback")
                c.expectEqual(try await next(&results, c, "result")?.items.map(\.id), ["b"], "result ids")
                return nil
            },
            CaseContext.syncCase("cancelling the consuming tasks ends them and unregisters them") { f, c in
                let (started, signal) = AsyncStream<Void>.makeStream()
                let observation = try f.todo.observe(allTodos)
                let observer = Task {
                    var count = 0
                    for try await _ in observation {
                        count += 1
                        if count == 1 { signal.yield() }
                    }
                    return count
                }
                let feed = f.context.changes()
                let feeder = Task {
                    signal.yield()
                    var count = 0
                    for await _ in feed { count += 1 }
                    return count
                }
                var ready = started.makeAsyncIterator()
                _ = await ready.next()
                _ = await ready.next()
                try f.todo.insert(SyncFixture.todo("a", "one"))
                c.expectEqual(f.context.observationCounts.observers, 1, "observers while observing")
                c.expectEqual(f.context.observationCounts.feeds, 1, "feeds while observing")
                observer.cancel()
                feeder.cancel()
                _ = try await observer.value
                _ = await feeder.value
                c.expectEqual(f.context.observationCounts.observers, 0, "observers after cancelling")
                c.expectEqual(f.context.observationCounts.feeds, 0, "feeds after cancelling")
                return nil
            },
            CaseContext.syncCase("closing the context ends observations and feeds") { f, c in
                var results = try f.todo.observe(allTodos).makeAsyncIterator()
                _ = try await next(&results, c, "first result")
                var changes = f.context.changes().makeAsyncIterator()
                let reopened = try f.reopened()
                c.expect(try await results.next() == nil, "an observation of a closed context ended")
                c.expect(await changes.next() == nil, "a feed of a closed context ended")
                c.expectEqual(f.context.observationCounts.observers, 0, "observers of the closed context")
                c.expectEqual(f.context.observationCounts.feeds, 0, "feeds of the closed context")
                return reopened
            },
            CaseContext.syncCase("observe refuses a query on another table") { f, c in
                c.expectThrows("observe a tag query on todo", code: .invalidQuery) {
                    _ = try f.todo.observe(Query(table: "tag"))
                }
                c.expectThrows("observe an unknown column", code: .unknownColumn) {
                    _ = try f.todo.observe(Query(table: "todo", orderBy: [SortKey("nope")]))
                }
                return nil
            },
        ])

    /// A local edit, a push outcome, a pull, a resolution and a purge, one after another, each
    /// checked on a todo observer, a tag observer and the feed.
    static func everyKindOfWrite(_ f: SyncFixture, _ c: CaseContext) async throws {
        var todos = try f.todo.observe(allTodos).makeAsyncIterator()
        var tags = try f.tag.observe().makeAsyncIterator()
        var changes = f.context.changes().makeAsyncIterator()
        _ = try await next(&todos, c, "first todo result")
        _ = try await next(&tags, c, "first tag result")

        /// Runs one write; expects one wake-up (of the todo observer), one change set of `origin`
        /// naming `ids` of todo, and a todo result equal to a read.
        func step(_ origin: ChangeOrigin, ids: Set<String>, _ write: () async throws -> Void) async throws {
            let wakes = f.context.observerWakeCount
            try await write()
            c.expectEqual(f.context.observerWakeCount - wakes, 1, "\(origin): wake-ups (the todo observer only)")
            let change = await changes.next()
            c.expectEqual(change?.origins, [origin], "\(origin): change set origin")
            c.expectEqual(change?.tables, ["todo"], "\(origin): change set tables")
            c.expectEqual(change?.ids(in: "todo"), ids, "\(origin): change set ids")
            let result = try await next(&todos, c, "\(origin): todo result")
            c.expectEqual(result, try f.todo.read(allTodos), "\(origin): todo result equals a read")
        }

        try await step(.localEdit, ids: ["a", "b"]) {
            try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
        }
        try await step(.pushOutcome, ids: ["a", "b"]) { try await f.context.push() }
        try f.seedServer(3)
        try await step(.pull, ids: ["a", "b", "s00000", "s00001", "s00002"]) { try await f.todo.pull(queryId: "all") }
        try f.remote.changeFromAnotherDevice(table: "todo", id: "a") { $0["text"] = "server edit" }
        try await step(.localEdit, ids: ["a"]) { try f.todo.update(SyncFixture.todo("a", "local edit")) }
        // The push records a conflict: only the operation tables change, so no change set.
        let wakes = f.context.observerWakeCount
        let error = try await f.context.push().errors.first
        c.expectEqual(f.context.observerWakeCount - wakes, 0, "a push that only records an error wakes nobody")
        guard let error else { return c.fail("the push of a conflicting update recorded no error") }
        try await step(.resolution, ids: ["a"]) { try f.context.resolve(error, .cancelAndTakeServerItem(nil)) }
        try await step(.purge, ids: ["s00001", "s00002"]) {
            try await f.todo.purge(
                Query(table: "todo", filter: .comparison(.column("id"), .ge, .literal("s00001"))), queryId: "all")
        }
        // A tag edit wakes the tag observer only, and the todo result does not move.
        let before = f.context.observerWakeCount
        try f.tag.insert(Item(id: "t", values: ["name": "home"]))
        c.expectEqual(f.context.observerWakeCount - before, 1, "a tag edit wakes one observer")
        c.expectEqual(try await next(&tags, c, "tag result")?.items.map(\.id), ["t"], "tag result")
        c.expectEqual(await changes.next()?.tables, ["tag"], "change set of the tag edit")
    }

    /// The iterator's next result (of an untyped or a typed observation); a failure (not a hang)
    /// when none comes within a minute, the guard against a missed wake-up.
    static func next<Iterator: AsyncIteratorProtocol & Sendable>(
        _ iterator: inout Iterator, _ c: CaseContext, _ what: String
    ) async throws -> Iterator.Element? where Iterator.Element: Sendable {
        let current = iterator
        let (advanced, result) = try await withThrowingTaskGroup(
            of: (Iterator, Iterator.Element?)?.self
        ) { group in
            group.addTask {
                var iterator = current
                let result = try await iterator.next()
                return (iterator, result)
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            while let first = try await group.next() {
                if let first { return first }
                c.fail("\(what): no result within 60 s (a missed wake-up?)")
                group.cancelAll()
            }
            return (current, nil)
        }
        iterator = advanced
        if result == nil { c.fail("\(what): the observation ended") }
        return result
    }
}
