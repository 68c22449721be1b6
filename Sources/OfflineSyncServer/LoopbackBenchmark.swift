import Logging
import OfflineSync
import OfflineSyncHTTP
import Synchronization

/// Measures sync over HTTP on the loopback interface: a ``TableServer`` in this process over one
/// store, a `SyncContext` with an `HTTPRemote` over another, the real wire protocol in between.
///
/// The figures include everything a device pays: requests and answers, JSON both ways, the
/// server's store, the client's store and queue. The stores are opened by the benchmark and
/// closed at the end; pass empty stores.
public enum LoopbackBenchmark {
    /// One measured run.
    public struct Figures: Sendable, Hashable, CustomStringConvertible {
        /// Records pulled or operations pushed.
        public var count: Int
        /// HTTP requests the client sent.
        public var requests: Int
        /// Wall-clock time of the measured part.
        public var duration: Duration

        /// Records or operations per second.
        public var perSecond: Double {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return seconds > 0 ? Double(count) / seconds : 0
        }

        public var description: String {
            "\(count) in \(duration) over \(requests) requests: \(Int(perSecond.rounded())) per second"
        }
    }

    static let table = TableSchema("benchitem", columns: [
        Column("text", .string), Column("complete", .bool), Column("priority", .integer), Column("due", .date),
    ])

    /// A full (incremental, first-time) pull of `records` records with pages of `pageSize`.
    public static func pull(records: Int, pageSize: Int = 1000, serverStore: any LocalStore,
                            clientStore: any LocalStore) async throws -> Figures {
        try serverStore.open(schema: StoreSchema([table]))
        let start = Timestamp(year: 2026, month: 1, day: 1) ?? .epoch
        var batch: [Item] = []
        for index in 0..<records {
            let stamp = Timestamp(millisecondsSince1970: start.millisecondsSince1970 + Int64(index))
            batch.append(Item(id: "r\(index)", values: [
                "text": .string("record number \(index) of the pull benchmark"), "complete": .bool(index % 3 == 0),
                "priority": .int(Int64(index % 5)), "due": .date(stamp),
                "createdAt": .date(stamp), "updatedAt": .date(stamp), "version": .string("v\(index)"), "deleted": .bool(false),
            ]))
            if batch.count == 5000 || index == records - 1 {
                try serverStore.upsert(batch, into: table.name)
                batch.removeAll(keepingCapacity: true)
            }
        }
        return try await withClient(serverStore: serverStore, clientStore: clientStore, pageSize: pageSize) { context, counter in
            let clock = ContinuousClock()
            let begin = clock.now
            let result = try await context.table(table.name).pull(queryId: "benchmark", options: PullOptions(pageSize: pageSize))
            let duration = clock.now - begin
            guard result.stored == records else {
                throw OfflineSyncError(.invalidOperation, "the pull benchmark stored \(result.stored) of \(records) records")
            }
            return Figures(count: records, requests: counter.count, duration: duration)
        }
    }

    /// A push of `operations` queued inserts.
    public static func push(operations: Int, serverStore: any LocalStore, clientStore: any LocalStore) async throws -> Figures {
        try serverStore.open(schema: StoreSchema([table]))
        return try await withClient(serverStore: serverStore, clientStore: clientStore, pageSize: 50) { context, counter in
            let items = (0..<operations).map { index in
                Item(id: "p\(index)", values: ["text": .string("pushed item \(index)"), "complete": .bool(false), "priority": .int(Int64(index % 5))])
            }
            _ = try context.table(table.name).insert(items)
            let clock = ContinuousClock()
            let begin = clock.now
            let result = try await context.push()
            let duration = clock.now - begin
            guard result.succeeded, result.completedCount == operations else {
                throw OfflineSyncError(.invalidOperation, "the push benchmark completed \(result.completedCount) of \(operations) operations: \(result.errors.first.map { "\($0)" } ?? "")")
            }
            return Figures(count: operations, requests: counter.count, duration: duration)
        }
    }

    /// Runs a server over `serverStore` and a context over `clientStore`, calls `body`, stops both.
    private static func withClient(serverStore: any LocalStore, clientStore: any LocalStore, pageSize: Int,
                                   _ body: (SyncContext, RequestCounter) async throws -> Figures) async throws -> Figures {
        let service = try TableService(store: serverStore, options: .init(maximumPageSize: max(50, pageSize)))
        var logger = Logger(label: "offline-sync.bench")
        logger.logLevel = .warning
        let server = try await TableServer(service: service, configuration: .init(port: 0, logger: logger)).start()
        let port = server.port
        var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(port)")
        configuration.logger = logger
        let remote = try HTTPRemote(configuration: configuration)
        let counter = RequestCounter(remote)
        do {
            let context = try SyncContext(store: clientStore, remote: counter, tables: [table])
            let figures = try await body(context, counter)
            try context.close()
            try await remote.shutdown()
            await server.stop()
            try serverStore.close()
            return figures
        } catch {
            try? await remote.shutdown()
            await server.stop()
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
}
