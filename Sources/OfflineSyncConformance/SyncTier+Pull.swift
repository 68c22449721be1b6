import OfflineSync
import OfflineSyncService

/// Pull: full and incremental paging, equal timestamps, deletions, pending items, implicit push,
/// validation, several tables, interruption.
enum SyncTierPull {
    static let pull = ConformanceGroup(
        "pull", tier: .sync,
        cases: [
            CaseContext.syncCase("a full pull pages through every record") { f, c in
                try f.seedServer(120)
                let result = try await f.todo.pull()
                c.expectEqual(result.received, 120, "received")
                c.expectEqual(try f.store.count("todo"), 120, "stored")
                c.expectEqual(result.requests, 4, "requests (3 pages and an empty one)")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "pull queues nothing")
                return nil
            },
            CaseContext.syncCase("a full pull honours the query's filter, skip and top") { f, c in
                try f.seedServer(30)
                let query = Query(
                    table: "todo", filter: .function(.startsWith, [.column("id"), .literal("s0001")]),
                    orderBy: [SortKey("id", descending: true)], skip: 2, top: 5)
                let result = try await f.todo.pull(query, options: PullOptions(pageSize: 3))
                c.expectEqual(result.received, 5, "received")
                c.expectEqual(
                    try f.todo.read().items.map(\.id).sorted(), ["s00013", "s00014", "s00015", "s00016", "s00017"],
                    "stored ids")
                return nil
            },
            CaseContext.syncCase("500 records sharing one updatedAt pull completely at page size 50") { f, c in
                try f.seedServer(500)
                let first = try await f.todo.pull(queryId: "all")
                c.expectEqual(first.received, 500, "received")
                c.expectEqual(try f.store.count("todo"), 500, "stored")
                c.expectEqual(first.requests, 11, "requests (10 pages and an empty one)")
                c.expectEqual(try f.todo.deltaToken(queryId: "all")?.itemId, "s00499", "token's last item")
                let second = try await f.todo.pull(queryId: "all")
                c.expectEqual(second.received, 0, "second pull receives nothing")
                c.expectEqual(second.requests, 1, "second pull requests")
                return nil
            },
            CaseContext.syncCase("an incremental pull fetches only what changed") { f, c in
                try f.seedServer(60)
                try await f.todo.pull(queryId: "all")
                try f.remote.changeFromAnotherDevice(table: "todo", id: "s00007") { $0["text"] = "changed" }
                _ = try f.remote.service.insert(SyncFixture.todo("new", "added elsewhere"), into: "todo")
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(result.received, 2, "received")
                c.expectEqual(try f.todo.lookup(id: "s00007")?["text"], "changed", "changed record")
                c.expect(try f.todo.lookup(id: "new") != nil, "new record")
                return nil
            },
            CaseContext.syncCase("records deleted on the server are removed locally") { f, c in
                try f.seedServer(10)
                try await f.todo.pull(queryId: "all")
                try f.remote.service.delete(id: "s00003", from: "todo", ifMatch: nil)
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(result.deleted, 1, "deleted")
                c.expect(try f.todo.lookup(id: "s00003") == nil, "deleted record removed")
                c.expectEqual(try f.store.count("todo"), 9, "remaining")
                return nil
            },
            CaseContext.syncCase("without includeDeleted local copies of deleted records stay") { f, c in
                try f.seedServer(10)
                try await f.todo.pull()
                try f.remote.service.delete(id: "s00003", from: "todo", ifMatch: nil)
                try await f.todo.pull(options: PullOptions(includeDeleted: false))
                c.expect(try f.todo.lookup(id: "s00003") != nil, "local copy kept")
                try await f.todo.pull()
                c.expect(try f.todo.lookup(id: "s00003") == nil, "removed by a pull including deleted records")
                return nil
            },
            CaseContext.syncCase("items with a queued operation are not overwritten") { f, c in
                try f.seedServer(5)
                try await f.todo.pull(queryId: "all")
                try f.remote.changeFromAnotherDevice(table: "todo", id: "s00002") { $0["text"] = "server" }
                f.remote.observeCalls { call in
                    guard call.operation == .read else { return }
                    f.remote.observeCalls(nil)
                    do { try f.todo.update(SyncFixture.todo("s00002", "local")) } catch {
                        c.fail("local edit during the pull threw \(error)")
                    }
                }
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(result.skippedPending, 1, "skipped")
                c.expectEqual(try f.todo.lookup(id: "s00002")?["text"], "local", "local edit kept")
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["s00002"], "operation kept")
                return nil
            },
            CaseContext.syncCase("a pull pushes the table's pending operations first") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "local"))
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(try f.serverItem("a")?["text"], "local", "server item")
                c.expectEqual(result.received, 1, "received back")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue")
                c.expectEqual(try f.todo.lookup(id: "a")?.version, try f.serverItem("a")?.version, "local version")
                return nil
            },
            CaseContext.syncCase("a pull whose implicit push fails throws and keeps the token") { f, c in
                try f.seedServer(5)
                try await f.todo.pull(queryId: "all")
                let token = try f.todo.deltaToken(queryId: "all")
                try f.todo.insert(SyncFixture.todo("a", "local"))
                f.remote.failNext(with: .network)
                let failure = await c.expectThrowsAsync("pull with failing push", as: PushFailure.self) {
                    try await f.todo.pull(queryId: "all")
                }
                c.expectEqual(failure?.status, .abortedByNetwork, "status")
                c.expectEqual(try f.todo.deltaToken(queryId: "all"), token, "token")
                c.expectEqual(try f.context.pendingOperationCount(), 1, "queue kept")
                return nil
            },
            CaseContext.syncCase("pull options and query ids are validated") { f, c in
                let ordered = Query(table: "todo", orderBy: [SortKey("text")])
                await c.expectSyncError("orderBy with a query id", code: .invalidQuery) {
                    try await f.todo.pull(ordered, queryId: "q")
                }
                await c.expectSyncError("skip with a query id", code: .invalidQuery) {
                    try await f.todo.pull(Query(table: "todo", skip: 1), queryId: "q")
                }
                await c.expectSyncError("top with a query id", code: .invalidQuery) {
                    try await f.todo.pull(Query(table: "todo", top: 1), queryId: "q")
                }
                await c.expectSyncError("select", code: .invalidQuery) {
                    try await f.todo.pull(Query(table: "todo", selection: ["text"]))
                }
                await c.expectSyncError("empty query id", code: .invalidQuery) { try await f.todo.pull(queryId: "") }
                await c.expectSyncError("256-byte query id", code: .invalidQuery) {
                    try await f.todo.pull(queryId: String(repeating: "q", count: 256))
                }
                await c.expectSyncError("query id with '|'", code: .invalidQuery) {
                    try await f.todo.pull(queryId: "a|b")
                }
                await c.expectSyncError("page size 0", code: .configuration) {
                    try await f.todo.pull(options: PullOptions(pageSize: 0))
                }
                c.expectEqual(f.remote.totalCallCount, 0, "no request sent")
                try await f.todo.pull(queryId: String(repeating: "q", count: 255))
                return nil
            },
            CaseContext.syncCase("several tables pull in one call") { f, c in
                try f.seedServer(7)
                try f.remote.service.store.upsert(
                    [Item(id: "t1", values: ["name": "home", "updatedAt": .date(.epoch), "version": "v1"])], into: "tag"
                )
                let results = try await f.context.pull([
                    PullRequest(table: "todo", queryId: "all"), PullRequest(table: "tag", queryId: "all"),
                ])
                c.expectEqual(results.map(\.received), [7, 1], "received per table")
                c.expectEqual(try f.store.count("tag"), 1, "tags stored")
                return nil
            },
            CaseContext.syncCase("large pages are accepted", remoteOptions: TableService.Options(maximumPageSize: 1000))
            { f, c in
                try f.seedServer(2500)
                let result = try await f.todo.pull(queryId: "all", options: PullOptions(pageSize: 1000))
                c.expectEqual(result.received, 2500, "received")
                c.expectEqual(result.requests, 4, "requests")
                return nil
            },
            CaseContext.syncCase("pull reports progress per page") { f, c in
                try f.seedServer(120)
                let reports = Reports()
                try await f.todo.pull(queryId: "all", options: PullOptions(progress: { reports.add($0) }))
                c.expectEqual(reports.all.map(\.completed), [50, 100, 120], "received counts")
                c.expect(reports.all.allSatisfy { $0.phase == .pull && $0.table == "todo" }, "phase and table")
                return nil
            },
            CaseContext.syncCase("a store failure in the middle of a pull loses nothing") { f, c in
                try f.seedServer(300, updatedAt: Timestamp(year: 2021, month: 5, day: 1))
                try f.seedServer(200, prefix: "t", updatedAt: Timestamp(year: 2022, month: 5, day: 1))
                f.store.failWrite(4)
                await c.expectSyncError("pull with a failing page", code: .storage) {
                    try await f.todo.pull(queryId: "all")
                }
                c.expectEqual(try f.store.count("todo"), 150, "records of the committed pages")
                c.expectEqual(
                    try f.todo.deltaToken(queryId: "all")?.itemId, "s00149", "token at the last committed page")
                f.checkInvariants(c, "after the failure")
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(result.received, 350, "records pulled on retry")
                c.expectEqual(try f.store.count("todo"), 500, "every record stored")
                return nil
            },
        ])
}
