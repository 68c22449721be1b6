import OfflineSync
import OfflineSyncService

/// Purge and delta-token resets.
enum SyncTierPurge {
    static let purge = ConformanceGroup(
        "purge", tier: .sync,
        cases: [
            CaseContext.syncCase("purge refuses a table with queued operations") { f, c in
                try f.seedServer(5)
                try await f.todo.pull()
                try f.todo.insert(SyncFixture.todo("a", "local"))
                await c.expectSyncError("purge with a pending insert", code: .invalidOperation) {
                    try await f.todo.purge()
                }
                c.expectEqual(try f.store.count("todo"), 6, "items kept")
                try await f.tag.purge()
                return nil
            },
            CaseContext.syncCase("forced purge drops the operations and their errors") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                try f.tag.insert(Item(id: "t", values: ["name": "home"]))
                f.remote.inject(RemoteFault(.status(500)) { $0.itemId == "a" })
                f.remote.inject(RemoteFault(.network) { $0.itemId == "b" })
                _ = await c.expectThrowsAsync("push", as: PushFailure.self) { try await f.context.push() }
                c.expectEqual(try f.context.operationErrors().count, 1, "errors before purge")
                let removed = try await f.todo.purge(force: true)
                c.expectEqual(removed, 2, "items removed")
                c.expectEqual(try f.context.pendingOperations().map(\.table), ["tag"], "operations left")
                c.expectEqual(try f.context.operationErrors().count, 0, "errors left")
                return nil
            },
            CaseContext.syncCase("purge by query removes only matching items") { f, c in
                try f.seedServer(10)
                try await f.todo.pull()
                let removed = try await f.todo.purge(
                    Query(table: "todo", filter: .comparison(.column("id"), .lt, .literal("s00004"))))
                c.expectEqual(removed, 4, "removed")
                c.expectEqual(try f.store.count("todo"), 6, "remaining")
                return nil
            },
            CaseContext.syncCase("forced purge by query drops only the matching items' operations") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                try await f.todo.purge(
                    Query(table: "todo", filter: .comparison(.column("id"), .eq, .literal("a"))), force: true)
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["b"], "operations left")
                c.expect(try f.todo.lookup(id: "b") != nil, "'b' kept")
                return nil
            },
            CaseContext.syncCase("purge with a query id resets its token") { f, c in
                try f.seedServer(10)
                try await f.todo.pull(queryId: "all")
                try await f.todo.pull(queryId: "other")
                try await f.todo.purge(
                    Query(table: "todo", filter: .comparison(.column("id"), .lt, .literal("s00004"))), queryId: "all")
                c.expect(try f.todo.deltaToken(queryId: "all") == nil, "token reset")
                c.expect(try f.todo.deltaToken(queryId: "other") != nil, "other token kept")
                let result = try await f.todo.pull(queryId: "all")
                c.expectEqual(result.received, 10, "pulled again from the start")
                c.expectEqual(try f.store.count("todo"), 10, "stored")
                return nil
            },
            CaseContext.syncCase("purging a whole table resets every token of the table") { f, c in
                try f.seedServer(10)
                try await f.todo.pull(queryId: "all")
                try await f.todo.pull(queryId: "other")
                try await f.todo.purge()
                c.expectEqual(try f.store.count("todo"), 0, "items")
                c.expect(
                    try f.todo.deltaToken(queryId: "all") == nil && f.todo.deltaToken(queryId: "other") == nil,
                    "tokens reset")
                return nil
            },
            CaseContext.syncCase("resetting a delta token makes the next pull start over") { f, c in
                try f.seedServer(10)
                try await f.todo.pull(queryId: "all")
                try await f.todo.resetDeltaToken(queryId: "all")
                c.expect(try f.todo.deltaToken(queryId: "all") == nil, "token reset")
                c.expectEqual(try await f.todo.pull(queryId: "all").received, 10, "pulled again")
                return nil
            },
        ])
}
