import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncTestSupport
import Synchronization
import Testing

/// A push stores one chunk's outcomes and begins the next chunk while a chunk is on its way, and
/// a pull asks for the next page before it stores the one it holds: each test holds one side
/// until the other shows the work it overlaps with, which a push or pull doing one thing at a
/// time would never show.
@Suite struct OverlappedSyncTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    static func todo(_ index: Int) -> Item {
        Item(id: String(format: "t%04d", index), values: ["text": .string("note \(index)")])
    }

    /// A remote that forwards to an `InMemoryRemote`, and holds one call until `ready` is true
    /// (or 20 s have passed, when it gives up and records it).
    final class WaitingRemote: ForwardingRemote {
        let remote: InMemoryRemote
        var base: any RemoteService { remote }
        private let state = Mutex<(sends: Int, reads: Int, gaveUp: Bool)>((0, 0, false))
        private let heldSend: Int?
        private let heldRead: Int?
        let ready = Mutex<(@Sendable () -> Bool)?>(nil)

        init(_ remote: InMemoryRemote, holdingSend: Int? = nil, holdingRead: Int? = nil) {
            self.remote = remote
            heldSend = holdingSend
            heldRead = holdingRead
        }

        var gaveUp: Bool { state.withLock { $0.gaveUp } }
        var reads: Int { state.withLock { $0.reads } }
        var sends: Int { state.withLock { $0.sends } }

        private func wait() async {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                if ready.withLock({ $0 })?() == true { return }
                try? await Task.sleep(for: .milliseconds(5))
            }
            state.withLock { $0.gaveUp = true }
        }

        func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
            let call = state.withLock { state in
                state.sends += 1
                return state.sends
            }
            if call == heldSend { await wait() }
            return await remote.send(writes)
        }

        func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
            let call = state.withLock { state in
                state.reads += 1
                return state.reads
            }
            if call == heldRead { await wait() }
            return try await remote.readPage(query, includeDeleted: includeDeleted)
        }
    }

    /// Expects an empty queue, `count` items on the server and each at the server's version in
    /// the context's store, then closes the context.
    static func expectPushed(_ count: Int, context: SyncContext, remote: InMemoryRemote) throws {
        #expect(try context.pendingOperationCount() == 0)
        let server = try remote.items(in: "todo", includeDeleted: true)
        #expect(server.count == count)
        let table = try context.table("todo")
        for item in server {
            #expect(try table.lookup(id: item.id)?.version == item.version, "'\(item.id)' at the server's version")
        }
        try context.close()
    }

    @Test("a push commits a chunk's outcomes and begins the next chunk while a chunk is on its way")
    func pushOverlapsStoreWorkAndSend() async throws {
        let remote = WaitingRemote(try InMemoryRemote(tables: [Self.todo]), holdingSend: 2)
        let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Self.todo])
        let table = try context.table("todo")
        _ = try table.insert((0..<150).map(Self.todo))
        // The second chunk's send waits until the first chunk's outcomes are committed and the
        // third chunk is begun (marked attempted): what is queued then is the second and third.
        remote.ready.withLock {
            $0 = {
                guard let queued = try? context.pendingOperations() else { return false }
                return queued.count == 150 - 64 && queued.allSatisfy { $0.state == .attempted }
            }
        }
        let result = try await context.push()
        #expect(!remote.gaveUp, "the first chunk was committed and the third begun while the second was on its way")
        #expect(result.succeeded && result.completedCount == 150, "\(result)")
        try Self.expectPushed(150, context: context, remote: remote.remote)
    }

    @Test("after the first chunk's answer, four chunks are on their way at once")
    func pushKeepsFourChunksOnTheirWay() async throws {
        let remote = WaitingRemote(try InMemoryRemote(tables: [Self.todo]), holdingSend: 2)
        let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Self.todo])
        let table = try context.table("todo")
        _ = try table.insert((0..<300).map(Self.todo))
        // The second chunk's send waits until the fifth chunk's has been made.
        remote.ready.withLock { $0 = { remote.sends >= 5 } }
        let result = try await context.push()
        #expect(!remote.gaveUp, "the third, fourth and fifth chunks were sent while the second was on its way")
        #expect(result.succeeded && result.completedCount == 300, "\(result)")
        #expect(remote.sends == 5)
        try Self.expectPushed(300, context: context, remote: remote.remote)
    }

    @Test("a push reports each operation once, counting up to the queue's length")
    func pushProgressCountsEveryOperationOnce() async throws {
        let memory = try InMemoryRemote(tables: [Self.todo])
        let context = try SyncContext(store: InMemoryStore(), remote: memory, tables: [Self.todo])
        _ = try context.table("todo").insert((0..<150).map(Self.todo))
        let reports = Mutex<[SyncProgress]>([])
        let result = try await context.push(progress: { progress in reports.withLock { $0.append(progress) } })
        #expect(result.completedCount == 150)
        let seen = reports.withLock { $0 }
        #expect(seen.map(\.completed) == Array(1...150))
        #expect(seen.allSatisfy { $0.phase == .push && $0.total == 150 && $0.table == "todo" })
        try context.close()
    }

    @Test("a push stopped by the network leaves the chunk on its way beside it queued and free to edit")
    func stoppedPushReleasesTheNextChunk() async throws {
        let memory = try InMemoryRemote(tables: [Self.todo])
        let context = try SyncContext(store: InMemoryStore(), remote: memory, tables: [Self.todo])
        let table = try context.table("todo")
        _ = try table.insert((0..<200).map(Self.todo))
        // The network goes down at the third chunk's (128–191) 23rd write; the fourth (192–199)
        // was sent while the third was on its way, and gets no answer either.
        memory.inject(RemoteFault(.network, times: nil) { ($0.itemId ?? "") >= "t0150" })
        let failure = try await #require(throws: PushFailure.self) { try await context.push() }
        #expect(failure.result.status == .abortedByNetwork)
        #expect(failure.result.completedCount == 150)
        #expect(try context.pendingOperationCount() == 50)

        // Operations left in flight would put these edits in a second queue slot.
        for index in [160, 195] {
            var item = try #require(try table.lookup(id: Self.todo(index).id))
            item["text"] = .string("edited \(index)")
            try table.update(item)
        }
        #expect(try context.pendingOperationCount() == 50, "each edit folded into its queued insert")

        memory.clearFaults()
        let resumed = try await context.push()
        #expect(resumed.succeeded && resumed.completedCount == 50, "\(resumed)")
        #expect(try context.pendingOperationCount() == 0)
        for index in [160, 195] {
            #expect(try memory.service.lookup(id: Self.todo(index).id, in: "todo")?["text"] == .string("edited \(index)"))
        }
        #expect(try memory.items(in: "todo", includeDeleted: true).count == 200)
        try context.close()
    }

    /// The first page's commit waits (blocking its thread, as a store does) until the second page
    /// is asked for. The pull runs on threads of its own (``ThreadsExecutor``), so the request
    /// does not wait for a thread of Swift's cooperative pool, which other tests may hold.
    @Test("a pull asks for the next page before it stores the one it holds", arguments: ["all", nil])
    func pullOverlapsReadAndStore(queryId: String?) async throws {
        let memory = try InMemoryRemote(tables: [Self.todo])
        let stamp = Timestamp(year: 2026, month: 1, day: 1)!
        let rows = (0..<250).map { index in
            var item = Self.todo(index)
            let updated = Timestamp(millisecondsSince1970: stamp.millisecondsSince1970 + Int64(index))
            item["updatedAt"] = .date(updated)
            item["createdAt"] = .date(updated)
            item["version"] = "v"
            item["deleted"] = false
            return item
        }
        try memory.service.store.upsert(rows, into: "todo")
        let remote = WaitingRemote(memory)
        let store = FirstWriteWaits(inner: InMemoryStore()) { remote.reads >= 2 }
        let context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        let table = try context.table("todo")
        store.armed.withLock { $0 = true }
        let result = try await withTaskExecutorPreference(ThreadsExecutor()) {
            try await table.pull(queryId: queryId, options: PullOptions(pageSize: 50))
        }
        #expect(!store.gaveUp, "the second page was asked for before the first was stored")
        #expect(result.received == 250 && result.requests == 6, "\(result)")
        #expect(try table.read().items.count == 250)
        if queryId != nil {
            #expect(try table.deltaToken(queryId: "all")?.itemId == "t0249")
        }
        try context.close()
    }

    /// A store whose first write transaction after it is armed waits, up to 20 s, until
    /// `condition` holds.
    final class FirstWriteWaits: ForwardingStore, @unchecked Sendable {
        let inner: any LocalStore
        let armed = Mutex(false)
        private let waited = Mutex(false)
        private let condition: @Sendable () -> Bool
        private(set) var gaveUp = false

        init(inner: any LocalStore, until condition: @escaping @Sendable () -> Bool) {
            self.inner = inner
            self.condition = condition
        }

        func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
            if armed.withLock({ armed in
                defer { armed = false }
                return armed
            }) {
                let deadline = Date().addingTimeInterval(20)
                while !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
                gaveUp = !condition()
            }
            return try inner.write(body)
        }
    }

    /// Runs tasks on threads of a concurrent dispatch queue, which starts another thread when
    /// one blocks; child tasks (`async let`) inherit it.
    final class ThreadsExecutor: TaskExecutor {
        private let queue = DispatchQueue(label: "OverlappedSyncTests", attributes: .concurrent)

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }
}
