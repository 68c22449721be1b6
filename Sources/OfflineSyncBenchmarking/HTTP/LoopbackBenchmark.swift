import Logging
import NIOCore
import NIOPosix
import OfflineSync
import OfflineSyncService
import OfflineSyncHTTP
import OfflineSyncServer
import Synchronization

/// Measures sync over HTTP on the loopback interface: a `TableServer` in this process over one
/// store, a `SyncContext` with an `HTTPRemote` over another, the real wire protocol in between.
///
/// The figures include everything a device pays: requests and answers, JSON both ways, the
/// server's store, the client's store and queue. The stores are opened by the benchmark and
/// closed by ``Run/finish()``; pass empty stores.
///
/// ```swift
/// let run = try await LoopbackBenchmark.preparePush(operations: 10_000, serverStore: server, clientStore: client)
/// let figures = try await run.measure()   // only the push is timed
/// try await run.finish()                  // stops the server, closes both stores
/// ```
enum LoopbackBenchmark {
    /// One measured run.
    struct Figures: Sendable, Hashable, CustomStringConvertible {
        /// Records pulled or operations pushed.
        var count: Int
        /// HTTP requests the client sent.
        var requests: Int
        /// Wall-clock time of the measured part.
        var duration: Duration

        /// Records or operations per second.
        var perSecond: Double {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return seconds > 0 ? Double(count) / seconds : 0
        }

        var description: String {
            "\(count) in \(duration) over \(requests) requests: \(Int(perSecond.rounded())) per second"
        }
    }

    /// A prepared run: the server listens with its rows in place, the client context is open.
    /// Call ``measure()`` once, then ``finish()``.
    final class Run: Sendable {
        /// Records the pull brings or operations the push sends.
        let count: Int
        private let context: SyncContext
        private let counter: RequestCounter
        private let remote: HTTPRemote
        private let server: TableServer.Running
        private let serverLoop: MultiThreadedEventLoopGroup
        private let serverStore: any LocalStore
        private let work: @Sendable (SyncContext) async throws -> Int

        fileprivate init(
            count: Int, context: SyncContext, counter: RequestCounter, remote: HTTPRemote,
            server: TableServer.Running, serverLoop: MultiThreadedEventLoopGroup, serverStore: any LocalStore,
            work: @escaping @Sendable (SyncContext) async throws -> Int
        ) {
            self.count = count
            self.context = context
            self.counter = counter
            self.remote = remote
            self.server = server
            self.serverLoop = serverLoop
            self.serverStore = serverStore
            self.work = work
        }

        /// Runs the pull or push and times it; throws when it did not move every record.
        func measure() async throws -> Figures {
            let requestsBefore = counter.count
            let clock = ContinuousClock()
            let begin = clock.now
            let moved = try await work(context)
            let duration = clock.now - begin
            guard moved == count else {
                throw OfflineSyncError(.invalidOperation, "the loopback benchmark moved \(moved) of \(count) records")
            }
            return Figures(count: count, requests: counter.count - requestsBefore, duration: duration)
        }

        /// Closes the client context, its HTTP client, the server and the server's store.
        func finish() async throws {
            let closedClient = Result { try context.close() }
            try? await remote.shutdown()
            await server.stop()
            try? await serverLoop.shutdownGracefully()
            let closedServer = Result { try serverStore.close() }
            try closedClient.get()
            try closedServer.get()
        }
    }

    static let table = TableSchema(
        "benchitem",
        columns: [
            Column("text", .string), Column("complete", .bool), Column("priority", .integer), Column("due", .date),
        ])

    /// Prepares a full (incremental, first-time) pull: `records` rows on the server, an empty
    /// client that pulls them with pages of `pageSize`.
    static func preparePull(
        records: Int, pageSize: Int = 1000, serverStore: any LocalStore,
        clientStore: any LocalStore
    ) async throws -> Run {
        try await prepare(
            count: records, serverStore: serverStore, clientStore: clientStore, pageSize: pageSize,
            seed: { try seed(records: records, into: $0) }, setUp: { _ in }
        ) { context in
            try await context.table(table.name).pull(queryId: "benchmark", options: PullOptions(pageSize: pageSize))
                .stored
        }
    }

    /// Prepares a push: `operations` inserts queued on the client (not timed), an empty server,
    /// a remote that sends each chunk of the push as one batch when `batched`, one request per
    /// write otherwise.
    static func preparePush(
        operations: Int, batched: Bool = false, serverStore: any LocalStore,
        clientStore: any LocalStore
    ) async throws -> Run {
        try await prepare(
            count: operations, serverStore: serverStore, clientStore: clientStore, pageSize: 50,
            batched: batched, seed: { _ in },
            setUp: { context in
                let items = (0..<operations).map { index in
                    Item(
                        id: "p\(index)",
                        values: [
                            "text": .string("pushed item \(index)"), "complete": .bool(false),
                            "priority": .int(Int64(index % 5)),
                        ])
                }
                _ = try context.table(table.name).insert(items)
            }
        ) { context in
            let result = try await context.push()
            guard result.succeeded else {
                throw OfflineSyncError(
                    .invalidOperation,
                    "the push benchmark completed \(result.completedCount) of \(operations) operations: \(result.errors.first.map { "\($0)" } ?? "")"
                )
            }
            return result.completedCount
        }
    }

    private static func seed(records: Int, into serverStore: any LocalStore) throws {
        let start = Timestamp(year: 2026, month: 1, day: 1) ?? .epoch
        var batch: [Item] = []
        for index in 0..<records {
            let stamp = Timestamp(millisecondsSince1970: start.millisecondsSince1970 + Int64(index))
            batch.append(
                Item(
                    id: "r\(index)",
                    values: [
                        "text": .string("record number \(index) of the pull benchmark"),
                        "complete": .bool(index % 3 == 0),
                        "priority": .int(Int64(index % 5)), "due": .date(stamp),
                        "createdAt": .date(stamp), "updatedAt": .date(stamp), "version": .string("v\(index)"),
                        "deleted": .bool(false),
                    ]))
            if batch.count == 5000 || index == records - 1 {
                try serverStore.upsert(batch, into: table.name)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Opens and seeds `serverStore`, starts a server over it and a context over `clientStore`,
    /// runs `setUp` on the context, and returns the run whose measured part is `work`. On failure
    /// everything started is stopped again.
    private static func prepare(
        count: Int, serverStore: any LocalStore, clientStore: any LocalStore, pageSize: Int,
        batched: Bool = false, seed: (any LocalStore) throws -> Void, setUp: (SyncContext) throws -> Void,
        work: @escaping @Sendable (SyncContext) async throws -> Int
    ) async throws -> Run {
        var logger = Logger(label: "offline-sync.bench")
        logger.logLevel = .warning
        var server: TableServer.Running?
        var remote: HTTPRemote?
        // The server gets an event loop of its own: its connection never shares a thread with
        // the client's, as a server in another process would not.
        let serverLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try serverStore.open(schema: StoreSchema([table]))
            try seed(serverStore)
            let service = try TableService(store: serverStore, options: .init(maximumPageSize: max(50, pageSize)))
            var serverConfiguration = TableServer.Configuration(port: 0, logger: logger)
            serverConfiguration.eventLoopGroup = serverLoop
            let running = try await TableServer(service: service, configuration: serverConfiguration).start()
            server = running
            var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(running.port)")
            configuration.logger = logger
            configuration.batchWrites = batched ? .always : .never
            let client = try HTTPRemote(configuration: configuration)
            remote = client
            let counter = RequestCounter(client)
            let context = try SyncContext(store: clientStore, remote: counter, tables: [table])
            do {
                try setUp(context)
            } catch {
                try? context.close()
                throw error
            }
            return Run(
                count: count, context: context, counter: counter, remote: client, server: running,
                serverLoop: serverLoop, serverStore: serverStore, work: work)
        } catch {
            try? await remote?.shutdown()
            await server?.stop()
            try? await serverLoop.shutdownGracefully()
            try? serverStore.close()
            throw error
        }
    }
}

/// Counts the calls a sync context makes to its remote (one HTTP request each).
final class RequestCounter: RemoteService {
    private let remote: any RemoteService
    private let calls = Atomic<Int>(0)

    init(_ remote: any RemoteService) {
        self.remote = remote
    }

    var count: Int { calls.load(ordering: .relaxed) }

    private func counted() { calls.add(1, ordering: .relaxed) }

    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        counted()
        return try await remote.readPage(query, includeDeleted: includeDeleted)
    }

    func insert(_ item: Item, into table: String) async throws -> Item {
        counted()
        return try await remote.insert(item, into: table)
    }

    func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        counted()
        return try await remote.update(item, in: table, ifMatch: version)
    }

    func delete(id: String, from table: String, ifMatch version: String?) async throws {
        counted()
        try await remote.delete(id: id, from: table, ifMatch: version)
    }

    func lookup(id: String, in table: String) async throws -> Item? {
        counted()
        return try await remote.lookup(id: id, in: table)
    }

    func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        calls.add(writes.count, ordering: .relaxed)
        return await remote.send(writes)
    }
}
