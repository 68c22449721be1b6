import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncHTTP
import OfflineSyncPostgres
import OfflineSyncSQLite
import Synchronization
import OfflineSyncTestSupport
import Testing

/// The scale-out test: three `offline-sync serve` processes over one PostgreSQL schema (the
/// cluster this test process started), eight writing and four pulling clients (real
/// ``OfflineSyncHTTP/HTTPRemote`` and ``OfflineSync/SyncContext`` over their own SQLite stores)
/// sending each request to one of the processes at random, one process killed with SIGKILL half
/// way. At the end every client's store equals the server's table: nothing lost, nothing
/// skipped, nothing applied twice. `scripts/scale-out-test N` runs it N times in a row; the seed of
/// a run is in its failure messages and `OFFLINE_SYNC_SCALE_OUT_SEED` repeats it.
@Suite("scale-out over PostgreSQL", .serialized, .tags(.slow), .skippedInFastRuns)
struct ScaleOutTests {
    static let table = TableSchema(
        "item", columns: [Column("text", .string), Column("ops", .string), Column("owner", .string)])
    static let sharedRows = ["shared-0", "shared-1", "shared-2"]
    static let writerCount = 8
    static let pullerCount = 4
    static let operationsPerWriter = 30

    /// What a writer did: the state it last gave its own rows, and its edits of the shared rows the
    /// server acknowledged (answered, or found applied after a lost answer).
    struct WriterLog: Sendable {
        var own: [String: (text: String, deleted: Bool)] = [:]
        var confirmedShared: [String: Set<String>] = [:]
        var issuedShared: Set<String> = []
    }

    final class Client: Sendable {
        let name: String
        let remote: FailoverRemote
        let context: SyncContext
        let items: SyncTable

        init(_ name: String, urls: [String], directory: ScratchDirectory, seed: UInt64) throws {
            self.name = name
            remote = try FailoverRemote(urls: urls, seed: seed, name: name)
            context = try SyncContext(
                store: SQLiteStore(path: directory.path(name + ".sqlite")), remote: remote,
                tables: [ScaleOutTests.table])
            items = try context.table("item")
        }

        /// Pulls everything new, retrying after failures (a killed process answers nothing).
        func pull(pageSize: Int) async throws {
            var lastError: (any Error)?
            for _ in 0..<20 {
                do {
                    try await items.pull(queryId: "all", options: PullOptions(pageSize: pageSize))
                    return
                } catch {
                    lastError = error
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            throw lastError!
        }

        /// The live local rows: id → text, ops, version.
        func snapshot() throws -> [String: [String]] {
            var rows: [String: [String]] = [:]
            for item in try items.read().items {
                rows[item.id] = ScaleOutTests.fields(item)
            }
            return rows
        }

        func close() async {
            try? context.close()
            await remote.shutdown()
        }
    }

    static func fields(_ item: Item) -> [String] {
        [item["text"].stringValue ?? "-", item["ops"].stringValue ?? "-", item.version ?? "-"]
    }

    static func ops(_ item: Item?) -> [String] {
        (item?["ops"].stringValue ?? "").split(separator: ",").map(String.init)
    }

    @Test(
        "3 serve processes, 8 writers, 4 pullers, one process SIGKILLed: every client ends equal to the server",
        .enabled(if: OfflineSyncTool.isBuilt), .timeLimit(.minutes(3)))
    func scaleOut() async throws {
        let seed =
            ProcessInfo.processInfo.environment["OFFLINE_SYNC_SCALE_OUT_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(Int64.max))
        let server = try PostgresTestServer.require()
        let settings = server.freshSettings()
        let setup = PostgresStore(settings: settings)
        try setup.open(schema: StoreSchema([TableService.served(Self.table)]))
        try setup.close()
        defer { try? PostgresStore.dropSchema(settings) }

        let directory = try ScratchDirectory()
        let url = "postgres://postgres@127.0.0.1:\(server.port)/postgres?schema=\(settings.schema)"
        let processes = try (0..<3).map {
            try ServeProcess(
                store: url, arguments: ["--page-size", "50"],
                log: directory.url.appendingPathComponent("serve\($0).log"))
        }
        defer { processes.forEach { $0.kill() } }
        let urls = processes.map(\.baseURL)

        var random = SplitMix64(seed: seed)
        let writers = try (0..<Self.writerCount).map {
            try Client("w\($0)", urls: urls, directory: directory, seed: random.next())
        }
        let pullers = try (0..<Self.pullerCount).map {
            try Client("p\($0)", urls: urls, directory: directory, seed: random.next())
        }
        do {
            try await run(
                seed: seed, random: &random, settings: settings, processes: processes, writers: writers,
                pullers: pullers)
        } catch {
            for client in writers + pullers { await client.close() }
            throw error
        }
        for client in writers + pullers { await client.close() }
    }

    private func run(
        seed: UInt64, random: inout SplitMix64, settings: PostgresConnectionSettings, processes: [ServeProcess],
        writers: [Client], pullers: [Client]
    ) async throws {
        // The shared rows, created by the first writer; every writer pulls them.
        _ = try writers[0].items.insert(
            Self.sharedRows.map { Item(id: $0, values: ["text": .string($0), "ops": .string("")]) })
        try await Self.pushAll(writers[0])
        for writer in writers { try await writer.pull(pageSize: 50) }

        let completed = Locked(0)
        let writersDone = Locked(false)
        let total = Self.writerCount * Self.operationsPerWriter
        let victim = processes[1]
        let killer = Task {
            while completed.value < total / 2 { try await Task.sleep(for: .milliseconds(5)) }
            victim.kill()
        }
        let pulling = pullers.map { puller in
            Task {
                var pulls = 0
                while !writersDone.value {
                    try? await puller.pull(pageSize: 7)
                    pulls += 1
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return pulls
            }
        }
        let seeds = writers.map { _ in random.next() }
        let logs = try await withThrowingTaskGroup(of: WriterLog.self) { group in
            for (index, writer) in writers.enumerated() {
                let writerSeed = seeds[index]
                group.addTask {
                    try await Self.write(
                        writer, index: index, seed: writerSeed, completed: completed)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        writersDone.update { $0 = true }
        try await killer.value
        for task in pulling { _ = await task.value }
        #expect(!victim.process.isRunning, "seed \(seed): the victim process was killed")

        // Every client catches up through the surviving processes.
        for client in writers + pullers { try await client.pull(pageSize: 7) }

        // The server's table, read straight from PostgreSQL.
        let check = PostgresStore(settings: settings)
        try check.open(schema: StoreSchema([]))
        defer { try? check.close() }
        let all = try check.read(Query(table: "item", top: 100_000)).items
        let stamps = all.compactMap { $0.updatedAt?.millisecondsSince1970 }
        #expect(
            stamps.count == all.count && Set(stamps).count == stamps.count, "seed \(seed): updatedAt unique per row")
        #expect(Set(all.compactMap(\.version)).count == all.count, "seed \(seed): versions unique")
        var live: [String: [String]] = [:]
        for item in all where !item.isDeleted { live[item.id] = Self.fields(item) }
        let byId = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

        // Nothing skipped, nothing applied twice, on any client.
        for client in writers + pullers {
            let local = try client.snapshot()
            #expect(
                local == live,
                "seed \(seed): \(client.name) differs from the server: missing \(Set(live.keys).subtracting(local.keys).sorted().prefix(5)), extra \(Set(local.keys).subtracting(live.keys).sorted().prefix(5)), different \(live.keys.filter { local[$0] != nil && local[$0] != live[$0] }.sorted().prefix(5))"
            )
            #expect(try client.context.pendingOperationCount() == 0, "seed \(seed): \(client.name) pushed everything")
        }
        // Nothing lost: each writer's own rows are as it left them.
        for (index, log) in logs.enumerated() {
            for (id, state) in log.own {
                let stored = byId[id]
                #expect(stored != nil, "seed \(seed): w\(index)'s row \(id) reached the server")
                #expect(stored?.isDeleted == state.deleted, "seed \(seed): \(id) deleted \(state.deleted)")
                if !state.deleted { #expect(stored?["text"].stringValue == state.text, "seed \(seed): \(id) text") }
            }
        }
        // The shared rows: every acknowledged edit is in the chain once; every edit in it was made
        // by a writer; nothing is in it twice (If-Match held across processes: no lost update).
        for row in Self.sharedRows {
            let chain = Self.ops(byId[row])
            let confirmed = logs.reduce(into: Set<String>()) { $0.formUnion($1.confirmedShared[row] ?? []) }
            let issued = logs.reduce(into: Set<String>()) { $0.formUnion($1.issuedShared) }
            #expect(Set(chain).count == chain.count, "seed \(seed): \(row) has an edit applied twice: \(chain)")
            #expect(
                Set(chain) == confirmed, "seed \(seed): \(row) chain \(chain) vs acknowledged \(confirmed.sorted())")
            #expect(Set(chain).isSubset(of: issued), "seed \(seed): \(row) holds edits no writer made")
        }
        let failovers = (writers + pullers).reduce(0) { $0 + $1.remote.failures }
        #expect(failovers > 0, "seed \(seed): some requests met the killed process and went elsewhere")
        for process in processes where process !== victim { #expect(process.process.isRunning) }
    }

    /// One writer's operations: inserts, updates and deletes of its own rows, edits of the shared
    /// rows with If-Match (each appends its id to the row's `ops`), each followed by a push.
    static func write(_ writer: Client, index: Int, seed: UInt64, completed: Locked<Int>) async throws -> WriterLog {
        var random = SplitMix64(seed: seed)
        var log = WriterLog()
        for step in 0..<operationsPerWriter {
            let liveOwn = log.own.filter { !$0.value.deleted }.keys.sorted()
            let roll = random.next() % 100
            if roll < 30 || liveOwn.isEmpty {
                let id = "w\(index)-\(step)"
                let text = "w\(index) insert \(step)"
                _ = try writer.items.insert(
                    Item(id: id, values: ["text": .string(text), "ops": .string(""), "owner": .string("w\(index)")]))
                log.own[id] = (text, false)
            } else if roll < 55 {
                let id = liveOwn[Int(random.next() % UInt64(liveOwn.count))]
                guard var item = try writer.items.lookup(id: id) else {
                    throw TestServerError("\(id) vanished locally")
                }
                let text = "w\(index) update \(step)"
                item["text"] = .string(text)
                try writer.items.update(item)
                log.own[id] = (text, false)
            } else if roll < 65 {
                let id = liveOwn[Int(random.next() % UInt64(liveOwn.count))]
                try writer.items.delete(id: id)
                log.own[id]?.deleted = true
            } else {
                let row = sharedRows[Int(random.next() % UInt64(sharedRows.count))]
                guard var item = try writer.items.lookup(id: row) else {
                    throw TestServerError("\(row) missing locally")
                }
                let op = "w\(index).\(step)"
                item["ops"] = .string((ops(item) + [op]).joined(separator: ","))
                try writer.items.update(item)
                log.issuedShared.insert(op)
                if try await pushUntilDone(writer, log: &log, pending: (row, op)) {
                    log.confirmedShared[row, default: []].insert(op)
                }
                completed.update { $0 += 1 }
                if random.next() % 3 == 0 { try await writer.pull(pageSize: 7) }
                continue
            }
            _ = try await pushUntilDone(writer, log: &log, pending: nil)
            completed.update { $0 += 1 }
            if random.next() % 4 == 0 { try await writer.pull(pageSize: 7) }
        }
        return log
    }

    /// Pushes until the queue is empty, through whichever processes answer. Conflicts: an own row
    /// whose write already arrived (its answer was lost) takes the server's copy, otherwise the
    /// writer wins with the server's version; a shared row takes the server's copy, and the edit
    /// counts as applied when the server's chain holds it. Answers whether `pending` was applied.
    @discardableResult
    static func pushUntilDone(
        _ writer: Client, log: inout WriterLog, pending: (row: String, op: String)?
    ) async throws -> Bool {
        var applied = true
        var lastError: (any Error)?
        for _ in 0..<100 {
            let result: PushResult
            do {
                result = try await writer.context.push()
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            for error in result.errors {
                let server = error.serverItem
                if sharedRows.contains(error.itemId) {
                    if let pending, pending.row == error.itemId {
                        applied = ops(server).contains(pending.op)
                    }
                    try writer.context.resolve(error, .cancelAndTakeServerItem(nil))
                    continue
                }
                let local = try writer.items.lookup(id: error.itemId)
                switch (error.kind, error.status) {
                case (.insert, 409) where server?["text"] == local?["text"],
                    (.update, 412) where server?["text"] == local?["text"]:
                    try writer.context.resolve(error, .cancelAndTakeServerItem(nil))
                case (.delete, 412) where server?.isDeleted == true:
                    try writer.context.resolve(error, .cancelAndTakeServerItem(nil))
                case (.update, 412), (.delete, 412):
                    guard var retry = local ?? server else {
                        throw TestServerError("\(writer.name): \(error)")
                    }
                    retry[SystemProperty.version.rawValue] = server?[SystemProperty.version.rawValue] ?? .null
                    try writer.context.resolve(error, .keepAndRetry(retry))
                default:
                    throw TestServerError("\(writer.name): unexpected push error \(error)")
                }
            }
            if try writer.context.pendingOperationCount() == 0 { return applied }
        }
        throw TestServerError(
            "\(writer.name) could not push in 100 attempts; the last failure: \(lastError.map { "\($0)" } ?? "none")")
    }

    static func pushAll(_ writer: Client) async throws {
        var log = WriterLog()
        try await pushUntilDone(writer, log: &log, pending: nil)
    }
}
