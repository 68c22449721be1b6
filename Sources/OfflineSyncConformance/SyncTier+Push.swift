import OfflineSync
import OfflineSyncService
import Synchronization

/// Push: ordering, the server's copy, each failure class, resolutions and conflict policies.
enum SyncTierPush {
    /// Puts 'a' on the server and locally, then changes it on the server, so that a local update
    /// of 'a' meets a 412.
    static func conflictOnA(_ f: SyncFixture) async throws {
        try f.todo.insert(SyncFixture.todo("a", "original"))
        try await f.context.push()
        try f.remote.changeFromAnotherDevice(table: "todo", id: "a") { $0["text"] = "server edit" }
        try f.todo.update(SyncFixture.todo("a", "local edit"))
    }

    static let push = ConformanceGroup(
        "push", tier: .sync,
        cases: [
            CaseContext.syncCase("push follows the global queue order across tables") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try f.tag.insert(Item(id: "t", values: ["name": "home"]))
                try f.todo.insert(SyncFixture.todo("b", "two"))
                try f.tag.update(Item(id: "t", values: ["name": "house"]))
                try f.todo.delete(id: "a")
                try f.todo.insert(SyncFixture.todo("c", "three"))
                let handler = RecordingPushHandler()
                let result = try await f.context.push(handler: handler)
                c.expectEqual(handler.order, ["insert tag/t", "insert todo/b", "insert todo/c"], "push order")
                c.expectEqual(result.completedCount, 3, "completed")
                c.expectEqual(try f.serverItem("t", table: "tag")?["name"], "house", "tag on the server")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after push")
                return nil
            },
            CaseContext.syncCase("a pushed item takes the server's version and timestamps") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                let local = try f.todo.lookup(id: "a")
                let server = try f.serverItem("a")
                c.expect(local?.version != nil, "local version set")
                c.expectEqual(local?.version, server?.version, "local version")
                c.expectEqual(local?.updatedAt, server?.updatedAt, "local updatedAt")
                c.expectEqual(local?.createdAt, server?.createdAt, "local createdAt")
                try f.todo.update(SyncFixture.todo("a", "two"))
                try await f.context.push()
                c.expectEqual(try f.serverItem("a")?["text"], "two", "server text after update")
                c.expect(try f.serverItem("a")?.version != server?.version, "server version changed")
                return nil
            },
            CaseContext.syncCase("a 404 on delete counts as done") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.remote.service.delete(id: "a", from: "todo", ifMatch: nil)
                try f.todo.delete(id: "a")
                let result = try await f.context.push()
                c.expect(result.succeeded, "push succeeded: \(result)")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after push")
                return nil
            },
            CaseContext.syncCase("a version mismatch becomes an operation error with the server item") { f, c in
                try await conflictOnA(f)
                let result = try await f.context.push()
                c.expectEqual(result.errors.count, 1, "errors")
                let error = result.errors.first
                c.expectEqual(error?.status, 412, "status")
                c.expect(error?.isConflict == true, "isConflict")
                c.expectEqual(error?.serverItem?["text"], "server edit", "server item in the error")
                c.expectEqual(error?.item?["text"], "local edit", "local item in the error")
                c.expectEqual(try f.context.operationErrors().count, 1, "stored errors")
                c.expectEqual(try f.todo.lookup(id: "a")?["text"], "local edit", "local item kept")
                return nil
            },
            CaseContext.syncCase("progress reports every operation with the total") { f, c in
                try f.todo.insert((0..<5).map { SyncFixture.todo("p\($0)", "x") })
                let reports = Reports()
                try await f.context.push(progress: { reports.add($0) })
                c.expectEqual(reports.all.map(\.completed), [1, 2, 3, 4, 5], "completed counts")
                c.expectEqual(reports.all.last?.total, 5, "total")
                return nil
            },
        ])

    static let failures = ConformanceGroup(
        "pushFailures", tier: .sync,
        cases: [
            abortCase("a network failure aborts and keeps the queue", .network, .abortedByNetwork),
            abortCase("a timeout aborts and keeps the queue", .timeout, .abortedByNetwork),
            abortCase("a 401 aborts and keeps the queue", .unauthorized, .abortedByAuthentication),
            CaseContext.syncCase("a store failure aborts and keeps the queue") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                f.store.failWrite(1)
                let failure = await c.expectThrowsAsync("push with failing store", as: PushFailure.self) {
                    try await f.context.push()
                }
                c.expectEqual(failure?.status, .abortedByStore, "status")
                c.expectEqual(try f.context.pendingOperationCount(), 2, "queue kept")
                c.expectEqual(try f.context.operationErrors().count, 0, "no errors recorded")
                try await f.context.push()
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after retry")
                c.expectEqual(try f.remote.items(in: "todo").count, 2, "server items")
                return nil
            },
            CaseContext.syncCase("a 500 becomes an operation error and the push goes on") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                f.remote.inject(RemoteFault(.status(500)) { $0.itemId == "a" })
                let result = try await f.context.push()
                c.expectEqual(result.errors.map(\.itemId), ["a"], "unhandled errors")
                c.expectEqual(result.errors.first?.status, 500, "status")
                c.expectEqual(result.completedCount, 1, "completed")
                c.expect(try f.serverItem("b") != nil, "'b' pushed after the failure")
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["a"], "queue")
                let retried = try await f.context.push()
                c.expect(retried.succeeded, "second push succeeded")
                c.expectEqual(try f.context.operationErrors().count, 0, "errors cleared by a successful push")
                return nil
            },
            CaseContext.syncCase("cancelling the pushing task aborts and keeps the queue") { f, c in
                try f.todo.insert([SyncFixture.todo("a", "one"), SyncFixture.todo("b", "two")])
                let running = Locked<Task<PushResult, any Error>?>(nil)
                f.remote.setLatency(.milliseconds(1))
                f.remote.observeCalls { call in
                    if call.itemId == "b" { running.withLock { $0?.cancel() } }
                }
                let task = running.withLock { slot in
                    let task = Task { try await f.context.push() }
                    slot = task
                    return task
                }
                let failure = await c.expectThrowsAsync("cancelled push", as: PushFailure.self) { try await task.value }
                c.expectEqual(failure?.status, .cancelled, "status")
                c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["b"], "queue kept")
                f.remote.observeCalls(nil)
                try await f.context.push()
                c.expectEqual(try f.remote.items(in: "todo").count, 2, "server items after a new push")
                return nil
            },
            CaseContext.syncCase("a handler error that is not a remote error aborts the push") { f, c in
                struct Refusal: Error {}
                try f.todo.insert(SyncFixture.todo("a", "one"))
                let handler = RecordingPushHandler { _ in throw Refusal() }
                let failure = await c.expectThrowsAsync("push with a refusing handler", as: PushFailure.self) {
                    try await f.context.push(handler: handler)
                }
                c.expectEqual(failure?.status, .abortedByHandler, "status")
                c.expectEqual(try f.context.pendingOperationCount(), 1, "queue kept")
                return nil
            },
            CaseContext.syncCase("a network failure in the middle of a chunk keeps what was sent and queues the rest") {
                f, c in
                let ids = (0..<100).map { "i\($0)" }
                _ = try f.todo.insert(ids.map { SyncFixture.todo($0, "text \($0)") })
                f.remote.inject(RemoteFault(.network) { $0.itemId == "i30" })
                let failure = await c.expectThrowsAsync("push failing at i30", as: PushFailure.self) {
                    try await f.context.push()
                }
                c.expectEqual(failure?.status, .abortedByNetwork, "status")
                // Nothing goes out after i30.
                let arrived = Set(try f.remote.items(in: "todo").map(\.id))
                c.expect(
                    arrived == Set(ids.prefix(30)), "server items: the 30 before i30, got \(arrived.count)")
                c.expectEqual(failure?.result.completedCount, arrived.count, "completed: those the server has")
                c.expectEqual(
                    try f.context.pendingOperations().map(\.itemId), ids.filter { !arrived.contains($0) },
                    "queue after the failure")
                c.expectEqual(try f.context.operationErrors(), [], "no operation error recorded")
                c.expectEqual(
                    try f.todo.lookup(id: "i29")?.version, try f.serverItem("i29")?.version,
                    "a sent item has the server's version")
                try await f.context.push()
                c.expectEqual(try f.remote.items(in: "todo").count, 100, "server items after a new push")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after a new push")
                return nil
            },
            CaseContext.syncCase("an edit of an item later in the chunk being pushed is sent after it") { f, c in
                _ = try f.todo.insert((0..<10).map { SyncFixture.todo("i\($0)", "one") })
                let edit = RecordingPushHandler { operation in
                    if operation.itemId == "i2" { try f.todo.update(SyncFixture.todo("i7", "edited during the push")) }
                }
                let result = try await f.context.push(handler: edit)
                c.expectEqual(
                    Array(edit.order.suffix(2)), ["insert todo/i9", "update todo/i7"],
                    "the edit goes out after the chunk")
                c.expectEqual(result.completedCount, 11, "completed")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue after the push")
                c.expectEqual(try f.serverItem("i7")?["text"], "edited during the push", "edit on the server")
                c.expectEqual(
                    try f.todo.lookup(id: "i7")?.version, try f.serverItem("i7")?.version,
                    "local version matches the server")
                return nil
            },
            CaseContext.syncCase("a server copy the store refuses aborts the push without losing the rest of the chunk")
            { f, c in
                _ = try f.todo.insert((0..<5).map { SyncFixture.todo("i\($0)", "one") })
                let handler = WrongServerCopyHandler(itemId: "i2")
                let failure = await c.expectThrowsAsync("push with a wrong server copy", as: PushFailure.self) {
                    try await f.context.push(handler: handler)
                }
                c.expectEqual(failure?.status, .abortedByStore, "status")
                c.expectEqual(failure?.result.completedCount, 4, "the other outcomes are committed")
                c.expectEqual(
                    try f.context.pendingOperations().map(\.itemId), ["i2"], "the refused operation stays queued")
                c.expectEqual(try f.context.operationErrors(), [], "no operation error recorded")
                // The server had applied the insert, so sending it again meets a 409 carrying a copy
                // that holds the item as sent: done, and that copy is stored.
                let resent = try await f.context.push()
                c.expectEqual(resent.errors, [], "the re-sent insert meets its own copy: no conflict")
                c.expectEqual(resent.completedCount, 1, "the re-sent insert counts as done")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue")
                c.expectEqual(
                    try f.todo.lookup(id: "i2")?.version, try f.serverItem("i2")?.version,
                    "the server's copy is stored")
                return nil
            },
        ])

    static func abortCase(_ name: String, _ failure: RemoteFailure, _ status: PushStatus) -> ConformanceCase {
        CaseContext.syncCase(name) { f, c in
            try f.todo.insert(SyncFixture.todo("a", "one"))
            try f.tag.insert(Item(id: "t", values: ["name": "home"]))
            f.remote.inject(RemoteFault(failure) { $0.table == "tag" })
            let thrown = await c.expectThrowsAsync("push", as: PushFailure.self) { try await f.context.push() }
            c.expectEqual(thrown?.status, status, "status")
            c.expectEqual(thrown?.result.completedCount, 1, "completed before the abort")
            c.expectEqual(try f.context.pendingOperations().map(\.itemId), ["t"], "queue kept")
            c.expectEqual(try f.context.operationErrors().count, 0, "no error recorded")
            try await f.context.push()
            c.expect(try f.serverItem("t", table: "tag") != nil, "pushed after recovery")
            return nil
        }
    }

    static let resolution = ConformanceGroup(
        "resolution", tier: .sync,
        cases: [
            CaseContext.syncCase("cancel and discard drops the operation and the local item") { f, c in
                try await conflictOnA(f)
                let error = try await f.context.push().errors[0]
                try f.context.resolve(error, .cancelAndDiscardItem)
                c.expect(try f.todo.lookup(id: "a") == nil, "local item removed")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue")
                c.expectEqual(try f.context.operationErrors().count, 0, "errors")
                c.expectEqual(try f.serverItem("a")?["text"], "server edit", "server untouched")
                return nil
            },
            CaseContext.syncCase("cancel and take the server item stores the server's copy") { f, c in
                try await conflictOnA(f)
                let error = try await f.context.push().errors[0]
                try f.context.resolve(error, .cancelAndTakeServerItem(nil))
                c.expectEqual(try f.todo.lookup(id: "a")?["text"], "server edit", "local text")
                c.expectEqual(try f.todo.lookup(id: "a")?.version, try f.serverItem("a")?.version, "local version")
                c.expectEqual(try f.context.pendingOperationCount(), 0, "queue")
                return nil
            },
            CaseContext.syncCase("keep and retry with a new item pushes it") { f, c in
                try await conflictOnA(f)
                let error = try await f.context.push().errors[0]
                var retry = try f.todo.lookup(id: "a") ?? Item(id: "a")
                retry["version"] = error.serverItem?["version"] ?? .null
                retry["text"] = "merged"
                try f.context.resolve(error, .keepAndRetry(retry))
                c.expectEqual(try f.context.operationErrors().count, 0, "errors after resolving")
                let result = try await f.context.push()
                c.expect(result.succeeded, "push after retry: \(result.errors)")
                c.expectEqual(try f.serverItem("a")?["text"], "merged", "server text")
                return nil
            },
            CaseContext.syncCase("resolving refuses an operation edited after its error") { f, c in
                try await conflictOnA(f)
                let error = try await f.context.push().errors[0]
                try f.todo.update(SyncFixture.todo("a", "edited again"))
                c.expectThrows("resolve after a new edit", code: .conflict) {
                    try f.context.resolve(error, .cancelAndDiscardItem)
                }
                c.expectEqual(try f.todo.lookup(id: "a")?["text"], "edited again", "local item kept")
                try f.context.resolve(try f.context.operationErrors()[0], .cancelAndTakeServerItem(nil))
                return nil
            },
            CaseContext.syncCase("taking a deleted server item removes the local one") { f, c in
                try f.todo.insert(SyncFixture.todo("a", "one"))
                try await f.context.push()
                try f.remote.service.delete(id: "a", from: "todo", ifMatch: nil)
                try f.todo.update(SyncFixture.todo("a", "two"))
                let error = try await f.context.push().errors[0]
                c.expectEqual(error.status, 404, "update of a server-deleted item")
                try f.context.resolve(error, .cancelAndTakeServerItem(nil))
                c.expect(try f.todo.lookup(id: "a") == nil, "local item removed")
                return nil
            },
        ])

    static let policies = ConformanceGroup(
        "policies", tier: .sync,
        cases: [
            CaseContext.syncCase("client wins overwrites the server on a 412", handler: { ClientWinsPushHandler() }) {
                f, c in
                try await conflictOnA(f)
                let result = try await f.context.push()
                c.expect(result.succeeded, "push succeeded: \(result.errors)")
                c.expectEqual(try f.serverItem("a")?["text"], "local edit", "server text")
                c.expectEqual(try f.todo.lookup(id: "a")?.version, try f.serverItem("a")?.version, "local version")
                return nil
            },
            CaseContext.syncCase("client wins turns a 409 insert into an update", handler: { ClientWinsPushHandler() })
            { f, c in
                _ = try f.remote.service.insert(SyncFixture.todo("a", "other device"), into: "todo")
                try f.todo.insert(SyncFixture.todo("a", "mine"))
                let result = try await f.context.push()
                c.expect(result.succeeded, "push succeeded: \(result.errors)")
                c.expectEqual(try f.serverItem("a")?["text"], "mine", "server text")
                return nil
            },
            CaseContext.syncCase("server wins takes the server item on a 412", handler: { ServerWinsPushHandler() }) {
                f, c in
                try await conflictOnA(f)
                let result = try await f.context.push()
                c.expect(result.succeeded, "push succeeded: \(result.errors)")
                c.expectEqual(try f.todo.lookup(id: "a")?["text"], "server edit", "local text")
                c.expectEqual(try f.serverItem("a")?["text"], "server edit", "server text")
                return nil
            },
            CaseContext.syncCase("without a policy a conflict stays an error") { f, c in
                try await conflictOnA(f)
                let result = try await f.context.push()
                c.expectEqual(result.errors.map(\.itemId), ["a"], "errors")
                c.expectEqual(try f.serverItem("a")?["text"], "server edit", "server text")
                return nil
            },
        ])
}

/// Collects progress reports from any task.
final class Reports: Sendable {
    private let reports = Locked<[SyncProgress]>([])
    func add(_ report: SyncProgress) { reports.withLock { $0.append(report) } }
    var all: [SyncProgress] { reports.withLock { $0 } }
}
