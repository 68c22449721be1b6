import OfflineSync
import OfflineSyncService

/// Local writes and the operation queue: errors, the collapse matrix, ordering, durability.
enum SyncTierQueue {
    static let group = ConformanceGroup(
        "queue", tier: .sync,
        cases: [
            CaseContext.syncCase("insert without id gets a UUID") { f, c in
                let stored = try f.todo.insert(Item(id: "", values: ["text": "milk"]))
                c.expectEqual(stored.id.count, 36, "generated id length")
                c.expect(try f.todo.lookup(id: stored.id) != nil, "generated id '\(stored.id)' is stored")
                c.expectEqual(try f.context.pendingOperations().map(\.kind), [.insert], "queue after insert")
                return nil
            },
            CaseContext.syncCase("insert of an existing id, update or delete of a missing id are conflicts") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                c.expectThrows("insert of existing 'a'", code: .conflict) {
                    try f.todo.insert(SyncFixture.todo("a", "two"))
                }
                c.expectThrows("update of missing 'b'", code: .conflict) {
                    try f.todo.update(SyncFixture.todo("b", "x"))
                }
                c.expectThrows("delete of missing 'b'", code: .conflict) { try f.todo.delete(id: "b") }
                c.expectEqual(try f.todo.lookup(id: "a")?["text"], "one", "'a' after the failed writes")
                c.expectEqual(try f.context.pendingOperationCount(), 1, "queue length")
                return nil
            },
            CaseContext.syncCase("insert then update stays one insert with the new item") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try f.todo.update(SyncFixture.todo("a", "two"))
                let queue = try f.context.pendingOperations()
                c.expectEqual(queue.map(\.kind), [.insert], "queue kinds")
                c.expectEqual(queue.first?.version, 2, "operation version after collapse")
                try await f.context.push()
                c.expectEqual(try f.serverItem("a")?["text"], "two", "server text")
                return nil
            },
            CaseContext.syncCase("insert then delete removes both") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try f.todo.delete(id: "a")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue length")
                c.expect(try f.todo.lookup(id: "a") == nil, "'a' is gone locally")
                try await f.context.push()
                c.expectEqual(f.remote.callCount(.insert) + f.remote.callCount(.delete), 0, "calls sent")
                return nil
            },
            CaseContext.syncCase("update then update stays one update") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.todo.update(SyncFixture.todo("a", "two"))
                try f.todo.update(SyncFixture.todo("a", "three"))
                let queue = try f.context.pendingOperations()
                c.expectEqual(queue.map(\.kind), [.update], "queue kinds")
                c.expectEqual(queue.first?.version, 2, "operation version")
                try await f.context.push()
                c.expectEqual(try f.serverItem("a")?["text"], "three", "server text")
                return nil
            },
            CaseContext.syncCase("update then delete becomes a delete keeping the item") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.todo.update(SyncFixture.todo("a", "two"))
                try f.todo.delete(id: "a")
                let queue = try f.context.pendingOperations()
                c.expectEqual(queue.map(\.kind), [.delete], "queue kinds")
                c.expectEqual(queue.first?.item?["text"], "two", "item kept in the delete")
                c.expect(queue.first?.item?.version != nil, "deleted item keeps its version for If-Match")
                try await f.context.push()
                c.expect(try f.serverItem("a") == nil, "'a' deleted on the server")
                return nil
            },
            CaseContext.syncCase("anything after a delete, and insert after insert or update, are errors") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.todo.update(SyncFixture.todo("a", "two"))
                c.expectThrows("insert after update", code: .conflict) { try f.todo.insert(SyncFixture.todo("a", "x")) }
                try f.todo.delete(id: "a")
                c.expectThrows("insert after delete", code: .invalidOperation) {
                    try f.todo.insert(SyncFixture.todo("a", "x"))
                }
                c.expectThrows("update after delete", code: .conflict) { try f.todo.update(SyncFixture.todo("a", "x")) }
                c.expectThrows("delete after delete", code: .conflict) { try f.todo.delete(id: "a") }
                try f.todo.insert(SyncFixture.todo("b", "one"))
                c.expectThrows("insert after insert", code: .conflict) { try f.todo.insert(SyncFixture.todo("b", "x")) }
                c.expectEqual(
                    try f.context.pendingOperations().map(\.kind), [.delete, .insert], "queue unchanged by the errors")
                return nil
            },
            CaseContext.syncCase("a delete after an attempted insert is queued, not dropped") { f, c in
                f.remote.inject(RemoteFault(.network, afterApplying: true))
                try f.todo.insert(SyncFixture.todo("a", "one"))
                _ = await c.expectThrowsAsync("push with lost answer", as: PushFailure.self) {
                    try await f.context.push()
                }
                c.expect(try f.serverItem("a") != nil, "server applied the insert")
                c.expectEqual(try f.context.pendingOperations().first?.state, .attempted, "insert state")
                try f.todo.delete(id: "a")
                c.expectEqual(try f.context.pendingOperations().map(\.kind), [.delete], "queue after delete")
                try await f.context.push()
                c.expect(try f.serverItem("a") == nil, "server copy deleted")
                return nil
            },
            CaseContext.syncCase("an attempted insert is still attempted after reopening", requires: .persistent) {
                f, c in
                f.remote.inject(RemoteFault(.network, afterApplying: true))
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try f.todo.insert(SyncFixture.todo("b", "two"))
                _ = await c.expectThrowsAsync("push with lost answer", as: PushFailure.self) {
                    try await f.context.push()
                }
                let reopened = try f.reopened()
                // 'b' waits behind the failure.
                let states = try reopened.context.pendingOperations().map(\.state)
                c.expect(
                    states == [.attempted, .attempted],
                    "states after reopening (an unsent 'b' was in the same chunk): \(states)")
                try reopened.todo.insert(SyncFixture.todo("c", "three"))
                c.expectEqual(
                    try reopened.context.pendingOperations().last?.state, .pending, "an insert queued after the push")
                try reopened.todo.delete(id: "a")
                c.expectEqual(
                    try reopened.context.pendingOperations().map(\.kind),
                    [.delete, .insert, .insert],
                    "queue after deleting 'a'")
                try await reopened.context.push()
                c.expect(try reopened.serverItem("a") == nil, "server copy of 'a' deleted")
                c.expectEqual(
                    try reopened.remote.items(in: "todo", includeDeleted: false).map(\.id), ["b", "c"], "server items")
                return reopened
            },
            CaseContext.syncCase("edits of later operations made during a push are pushed as they stand") { f, c in
                let ids = (0..<150).map { "i\($0)" }
                _ = try f.todo.insert(ids.map { SyncFixture.todo($0, "text \($0)") })
                try await f.context.push()
                try f.todo.update(ids.map { SyncFixture.todo($0, "edited \($0)") })
                let handler = RecordingPushHandler { operation in
                    guard operation.itemId == "i0" else { return }
                    try f.todo.delete(id: "i100")
                    try f.todo.update(SyncFixture.todo("i120", "edited again"))
                    try f.todo.insert(SyncFixture.todo("late", "queued during the push"))
                }
                let result = try await f.context.push(handler: handler)
                c.expectEqual(result.errors.count, 0, "errors")
                c.expect(
                    !handler.order.contains("update todo/i100"),
                    "the update of 'i100', replaced by its delete, is not sent")
                c.expect(handler.order.contains("delete todo/i100"), "the delete of 'i100' is sent")
                c.expect(try f.serverItem("i100") == nil, "server copy of 'i100' deleted")
                c.expectEqual(try f.serverItem("i120")?["text"], "edited again", "server text of 'i120'")
                c.expectEqual(try f.serverItem("late")?["text"], "queued during the push", "server text of 'late'")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after the push")
                return nil
            },
            CaseContext.syncCase("an edit during the push of its item is queued behind it") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                let handler = RecordingPushHandler { operation in
                    guard operation.itemId == "a", operation.kind == .insert else { return }
                    try f.todo.update(SyncFixture.todo("a", "edited while pushing"))
                    let queue = try f.context.pendingOperations()
                    c.expectEqual(queue.map(\.kind), [.insert, .update], "queue while the insert is in flight")
                }
                let result = try await f.context.push(handler: handler)
                c.expectEqual(handler.order, ["insert todo/a", "update todo/a"], "operations pushed")
                c.expectEqual(result.completedCount, 2, "completed operations")
                c.expectEqual(try f.serverItem("a")?["text"], "edited while pushing", "server text")
                c.expectEqual(
                    try f.todo.lookup(id: "a")?.version, try f.serverItem("a")?.version,
                    "local version matches the server")
                return nil
            },
            CaseContext.syncCase(
                "an edit stranded behind a failed push is folded in on reopening", requires: .persistent
            ) { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.todo.update(SyncFixture.todo("a", "two"))
                let handler = RecordingPushHandler { _ in
                    try f.todo.update(SyncFixture.todo("a", "three"))
                    f.store.failWrite(1, count: 2)
                }
                let failure = await c.expectThrowsAsync("push whose store fails", as: PushFailure.self) {
                    try await f.context.push(handler: handler)
                }
                c.expectEqual(failure?.status, .abortedByStore, "status")
                c.expectEqual(try f.context.pendingOperationCount(), 2, "operations left behind by the failure")
                let reopened = try f.reopened()
                let queue = try reopened.context.pendingOperations()
                c.expectEqual(queue.map(\.kind), [.update], "queue after reopening")
                c.expectEqual(try reopened.todo.lookup(id: "a")?["text"], "three", "local text kept")
                let error = try await reopened.context.push().errors.first
                c.expectEqual(
                    error?.status, 412, "the server applied 'two' before the store failed, so 'three' meets a conflict")
                var retry = try reopened.todo.lookup(id: "a") ?? Item(id: "a")
                retry["version"] = error?.serverItem?["version"] ?? .null
                if let error { try reopened.context.resolve(error, .keepAndRetry(retry)) }
                try await reopened.context.push()
                c.expectEqual(try reopened.serverItem("a")?["text"], "three", "server text")
                return reopened
            },
            CaseContext.syncCase("local-only tables cannot be synced") { f, c in
                let store = try c.makeStore()
                let local = TableSchema("settings", columns: [Column("value", .string)], synced: false)
                let context = try SyncContext(store: store, remote: f.remote, tables: [SyncFixture.todoSchema, local])
                c.expectThrows("table(\"settings\")", code: .invalidOperation) { try context.table("settings") }
                return nil
            },
            CaseContext.syncCase("the sequence is global across tables and survives reopening", requires: .persistent) {
                f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try f.tag.insert(Item(id: "t", values: ["name": "home"]))
                try f.todo.insert(SyncFixture.todo("b", "two"))
                let reopened = try f.reopened()
                try reopened.tag.insert(Item(id: "u", values: ["name": "work"]))
                let queue = try reopened.context.pendingOperations()
                c.expectEqual(
                    queue.map { "\($0.table)/\($0.itemId)" }, ["todo/a", "tag/t", "todo/b", "tag/u"], "queue order")
                let sequences = queue.map(\.sequence)
                c.expectEqual(sequences, sequences.sorted(), "sequences increase")
                c.expectEqual(try reopened.context.pendingOperationCount(table: "tag"), 2, "tag operations")
                return reopened
            },
            CaseContext.syncCase("items with the longest ids queue, collapse and push") { f, c in
                let long = String(repeating: "é", count: 125) + "xyzab"
                let other = String(repeating: "é", count: 125) + "xyzac"
                try f.todo.insert([SyncFixture.todo(long, "one"), SyncFixture.todo(other, "two")])
                try f.todo.update(SyncFixture.todo(long, "three"))
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), [long, other], "queued items")
                try await f.context.push()
                c.expectEqual(try f.serverItem(long)?["text"], "three", "server text of the long id")
                try f.todo.delete(id: other)
                c.expectEqual(try f.context.pendingOperations().map(\.kind), [.delete], "queue after delete")
                return nil
            },
            CaseContext.syncCase("a batch write is all or nothing") { f, c in
                let items =
                    (0..<10).map { SyncFixture.todo("b\($0)", "item \($0)") } + [SyncFixture.todo("b3", "duplicate")]
                c.expectThrows("batch with a duplicate id", code: .invalidOperation) { try f.todo.insert(items) }
                c.expectEqual(try f.store.count("todo"), 0, "items after the failed batch")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after the failed batch")
                try f.todo.insert(Array(items.dropLast()))
                c.expectEqual(try f.context.pendingOperationCount(), 10, "queue after the batch")
                return nil
            },
            CaseContext.syncCase("a batch insert of many items queues each insert in order") { f, c in
                // More items than the core hands the store at once (its queue rows go in chunks).
                let items = (0..<600).map { SyncFixture.todo("m\($0)", "item \($0)") }
                try f.todo.insert(items)
                let queue = try f.context.pendingOperations()
                c.expectEqual(queue.map(\.itemId), items.map(\.id), "queued item ids, in batch order")
                c.expect(
                    queue.allSatisfy { $0.kind == .insert && $0.table == "todo" }, "every operation an insert of 'todo'"
                )
                c.expect(
                    queue.allSatisfy { $0.state == .pending && $0.version == 1 }, "every operation pending, version 1")
                c.expect(
                    zip(queue, queue.dropFirst()).allSatisfy { $0.sequence < $1.sequence },
                    "sequences strictly increase")
                // A refused batch (an id with a pending delete, late in the batch) leaves nothing.
                try await f.context.push()
                try f.todo.delete(id: "m5")
                var refused = (0..<600).map { SyncFixture.todo("n\($0)", "item \($0)") }
                refused[550] = SyncFixture.todo("m5", "again")
                c.expectThrows("batch with an id whose delete is queued", code: .invalidOperation) {
                    try f.todo.insert(refused)
                }
                c.expectEqual(try f.store.count("todo"), 599, "items after the refused batch")
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["m5"], "queue after the refused batch")
                c.expectEqual(try f.serverItem("m599")?["text"], "item 599", "server copy of the last item")
                return nil
            },
            CaseContext.syncCase("concurrent edits from many tasks keep one operation per item") { f, c in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<8 {
                        group.addTask {
                            for index in 0..<40 { try f.todo.insert(SyncFixture.todo("t\(task)-\(index)", "v0")) }
                            for round in 1...3 {
                                for index in 0..<40 {
                                    try f.todo.update(SyncFixture.todo("t\(task)-\(index)", "v\(round)"))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let queue = try f.context.pendingOperations()
                c.expectEqual(queue.count, 320, "queued operations")
                c.expect(
                    queue.allSatisfy { $0.kind == .insert && $0.version == 4 },
                    "every operation is an insert collapsed three times")
                try await f.context.push()
                c.expectEqual(
                    try f.remote.items(in: "todo").filter { $0["text"] == "v3" }.count, 320,
                    "server items at the last version")
                return nil
            },
        ])
}
