import OfflineSync
import OfflineSyncService

/// The offline tutorial of Azure Mobile Apps, end to end: online pull, offline edits, restart,
/// back online, push and pull.
enum SyncTierTutorial {
    static let tutorial = ConformanceGroup(
        "tutorial", tier: .sync,
        cases: [
            CaseContext.syncCase("the offline tutorial round trip", requires: .persistent) { f, c in
                let originals = try ["buy milk", "walk dog", "call mom"].enumerated().map { index, text in
                    try f.remote.service.insert(SyncFixture.todo("item\(index)", text), into: "todo")
                }
                let online = try await f.todo.pull(queryId: "allTodoItems")
                c.expectEqual(online.received, 3, "first pull")

                f.remote.setOffline(true)
                let added = try f.todo.insert([
                    Item(id: "", values: ["text": "offline one", "complete": false]),
                    Item(id: "", values: ["text": "offline two", "complete": false]),
                ])
                var completed = try f.todo.lookup(id: "item1") ?? Item(id: "item1")
                completed["complete"] = true
                try f.todo.update(completed)
                _ = await c.expectThrowsAsync("push while offline", as: PushFailure.self) { try await f.context.push() }
                _ = await c.expectThrowsAsync("pull while offline", as: PushFailure.self) {
                    try await f.todo.pull(queryId: "allTodoItems")
                }
                c.expectEqual(try f.remote.items(in: "todo").count, 3, "server untouched while offline")

                let restarted = try f.reopened()
                c.expectEqual(try restarted.context.pendingOperationCount(), 3, "queue after restart")
                c.expectEqual(try restarted.todo.lookup(id: "item1")?["complete"], true, "completed item after restart")
                c.expectEqual(try restarted.store.count("todo"), 5, "local items after restart")

                f.remote.setOffline(false)
                let pushed = try await restarted.context.push()
                c.expect(pushed.succeeded, "push when back online: \(pushed.errors)")
                let pulled = try await restarted.todo.pull(queryId: "allTodoItems")
                c.expectEqual(pulled.received, 3, "records changed since the first pull")

                let server = try f.remote.items(in: "todo")
                c.expectEqual(server.count, 5, "server items")
                var expected: [String: (String, Bool)] = [
                    "item0": ("buy milk", false), "item1": ("walk dog", true), "item2": ("call mom", false),
                ]
                for item in added { expected[item.id] = (item["text"].stringValue ?? "", false) }
                for item in server {
                    guard let (text, complete) = expected[item.id] else {
                        c.fail("unexpected server item \(item)")
                        continue
                    }
                    c.expectEqual(item["text"], .string(text), "server text of '\(item.id)'")
                    c.expectEqual(item["complete"], .bool(complete), "server complete of '\(item.id)'")
                    c.expectEqual(
                        try restarted.todo.lookup(id: item.id)?.version, item.version, "local version of '\(item.id)'")
                }
                c.expectEqual(
                    server.first { $0.id == "item0" }?.version, originals[0].version, "untouched item keeps its version"
                )
                return restarted
            }
        ])
}
