import Observation
import OfflineSync
import OfflineSyncService
import Testing

/// ``LiveQuery``: typed results kept up to date on the main actor, seen through the Observation
/// framework's own tracking, as SwiftUI sees them.
@MainActor
@Suite struct LiveQueryTests {
    struct TodoItem: SyncModel, Equatable {
        static let tableName = "todo"
        var id: String
        var text: String
        var complete: Bool
    }

    static func table() throws -> ModelTable<TodoItem> {
        let schema = try TableSchema(TodoItem.self)
        let context = try SyncContext(
            store: InMemoryStore(), remote: try InMemoryRemote(tables: [schema]), tables: [schema])
        return try context.table(TodoItem.self)
    }

    /// Waits until a property `read` reads changes (`withObservationTracking`'s `onChange`),
    /// after `change` ran; the change is made once the tracking is in place.
    func nextChange(of read: @escaping @MainActor () -> Void, after change: () throws -> Void = {}) async rethrows {
        let (changed, signal) = AsyncStream<Void>.makeStream()
        withObservationTracking {
            read()
        } onChange: {
            signal.yield()
            signal.finish()
        }
        try change()
        var iterator = changed.makeAsyncIterator()
        await iterator.next()
    }

    @Test func theFirstResultAndEachCommittedChangeReachTheModelsOnTheMainActor() async throws {
        let todos = try Self.table()
        try todos.insert(TodoItem(id: "a", text: "Buy milk", complete: false))
        let live = try LiveQuery(todos, .filter(\.complete == false).order(by: \.text))
        #expect(!live.isLoaded)
        try await nextChange(of: { _ = live.models })
        #expect(live.isLoaded)
        #expect(live.models.map(\.text) == ["Buy milk"])

        try await nextChange(of: { _ = live.models }) {
            try todos.insert(TodoItem(id: "b", text: "Call Bob", complete: false))
        }
        #expect(live.models.map(\.text) == ["Buy milk", "Call Bob"])
        #expect(live.count == 2)

        try await nextChange(of: { _ = live.models }) {
            try todos.update(TodoItem(id: "a", text: "Buy milk", complete: true))
        }
        #expect(live.models.map(\.id) == ["b"])
    }

    @Test func aTransactionAcrossSeveralEditsIsOneChange() async throws {
        let todos = try Self.table()
        let live = try LiveQuery(todos)
        try await nextChange(of: { _ = live.isLoaded })
        try await nextChange(of: { _ = live.models }) {
            try todos.untyped.context.write { tx in
                for index in 0..<20 { try tx.insert(TodoItem(id: "t\(index)", text: "\(index)", complete: false)) }
            }
        }
        #expect(live.models.count == 20, "the first change after the commit carries the whole transaction")
    }

    @Test func anUnreadableRowEndsTheQueryWithAnErrorUnlessTheTableSkipsIt() async throws {
        let todos = try Self.table()
        try todos.untyped.insert(Item(id: "bad", values: ["text": "no complete"]))
        let failing = try LiveQuery(todos)
        try await nextChange(of: { _ = failing.error })
        #expect((failing.error as? OfflineSyncError)?.message.contains("item 'bad'") == true)

        var skipping = todos
        skipping.undecodableRows = .skip { _ in }
        let live = try LiveQuery(skipping)
        try await nextChange(of: { _ = live.isLoaded })
        #expect(live.models.isEmpty)
        #expect(live.error == nil)
    }

    @Test func cancellingOrReleasingTheQueryUnregistersItsObserver() async throws {
        let todos = try Self.table()
        let context = todos.untyped.context
        var live: LiveQuery<TodoItem>? = try LiveQuery(todos)
        try await nextChange(of: { _ = live?.isLoaded })
        #expect(context.observationCounts.observers == 1)
        live = nil
        // The observer's task ends on its own executor: wait for it without timing anything.
        while context.observationCounts.observers > 0 { await Task.yield() }
        let kept = try LiveQuery(todos)
        try await nextChange(of: { _ = kept.isLoaded })
        kept.cancel()
        while context.observationCounts.observers > 0 { await Task.yield() }
        try todos.insert(TodoItem(id: "a", text: "after", complete: false))
        #expect(kept.models.isEmpty, "a cancelled query keeps its last result")
    }
}
