import Foundation
import Logging
import OfflineSync
import OfflineSyncHTTP
import OfflineSyncServer
import OfflineSyncService

/// The demo's real-time step: two devices on one server, each keeping its store in sync with a
/// `Replicator` and the server's change stream; an edit on one appears in the other's observed
/// list with no push or pull call, and the delay is measured.
struct DemoRealtime {
    /// The server of `demo --remote`, or `nil` for a loopback server started for this step.
    let remoteURL: String?
    /// How the devices sign in to `remoteURL`, if it checks tokens.
    let authentication: HTTPAuthentication?

    /// One device of the step.
    private struct Device {
        let context: SyncContext
        let remote: HTTPRemote
        let stream: ChangeStream
        let replicator: Replicator
        let run: Task<Void, any Error>

        init(url: String, authentication: HTTPAuthentication?) throws {
            var configuration = HTTPRemote.Configuration(baseURL: url, authentication: authentication)
            configuration.logger.logLevel = .critical
            remote = try HTTPRemote(configuration: configuration)
            stream = ChangeStream(configuration: configuration)
            context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Demo.todoSchema()])
            replicator = Replicator(
                context: context, pulls: [PullRequest(table: "todoitem", queryId: Demo.queryId)], signal: stream,
                options: .init(pushDelay: .milliseconds(1), pollInterval: .seconds(1)))
            let replicator = self.replicator
            run = Task { try await replicator.run() }
        }

        /// Waits until the device has pulled once, and says how it hears of changes.
        func connected() async -> ReplicatorStatus {
            for await status in replicator.status
            where status.connection == .connected && status.lastSyncedAt["todoitem"] != nil {
                return status
            }
            return replicator.currentStatus
        }

        func close() async {
            run.cancel()
            _ = try? await run.value
            try? context.close()
            try? await stream.shutdown()
            try? await remote.shutdown()
        }
    }

    /// Runs the step, handing each line of narration to `say`.
    func run(say: (String) -> Void) async throws {
        var logger = Logger(label: "offline-sync.demo")
        logger.logLevel = .critical
        var server: TableServer.Running?
        let url: String
        if let remoteURL {
            url = remoteURL
        } else {
            let store = InMemoryStore()
            try store.open(schema: StoreSchema([TableService.served(try Demo.todoSchema())]))
            for (id, text) in DemoServer.starters {
                try store.write { try $0.upsert([Item(id: id, values: ["text": .string(text), "complete": false])], into: "todoitem", origin: .server) }
            }
            let service = try TableService(store: store)
            let running = try await TableServer(service: service, configuration: .init(port: 0, logger: logger)).start()
            server = running
            url = "http://127.0.0.1:\(running.port)"
            say("a loopback server for the two devices: \(url) (TableServer, with its change stream GET /changes)")
        }
        let a = try Device(url: url, authentication: authentication)
        let b = try Device(url: url, authentication: authentication)
        do {
            let (statusA, statusB) = (await a.connected(), await b.connected())
            func how(_ status: ReplicatorStatus) -> String {
                status.changeSource == .polling ? "polling (the server has no change stream)" : "the change stream"
            }
            let tableA: SyncTable = try a.context.table("todoitem")
            let tableB: SyncTable = try b.context.table("todoitem")
            let held = try tableA.read().items.count
            say(
                "device A and device B each run a Replicator: both connected, A through \(how(statusA)), B through \(how(statusB)); each holds \(held) items"
            )
            var iterator = try tableB.observe(Query(table: "todoitem")).makeAsyncIterator()
            _ = try await iterator.next()
            let id = "realtime-" + String(Timestamp.now().millisecondsSince1970)
            let clock = ContinuousClock()
            let start = clock.now
            try tableA.insert(
                Item(id: id, values: ["text": "Call the plumber", "complete": false]))
            say("A adds \"Call the plumber\" — no push, no pull: A's replicator pushes, the server announces it, B's replicator pulls")
            while let result = try await iterator.next() {
                guard result.items.contains(where: { $0.id == id }) else { continue }
                let elapsed = start.duration(to: clock.now)
                let milliseconds = Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000
                    + Double(elapsed.components.seconds) * 1000
                say(
                    "B's observed list now shows \"Call the plumber\" (\(result.items.count) items), \(String(format: "%.1f", milliseconds)) ms after A's insert"
                )
                break
            }
            // The step leaves the server as it found it, so a second run against the same server
            // (demo --remote) seeds nothing twice.
            try tableA.delete(id: id)
            while let result = try await iterator.next() {
                guard !result.items.contains(where: { $0.id == id }) else { continue }
                say("A deletes it again; B's list drops it (\(result.items.count) items), with no pull call either")
                break
            }
        } catch {
            await a.close()
            await b.close()
            await server?.stop()
            throw error
        }
        await a.close()
        await b.close()
        await server?.stop()
    }
}
