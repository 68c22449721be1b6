import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import OfflineSyncHTTP
import OfflineSyncSQLite
import OfflineSyncServer
import Synchronization
import Testing

/// Two devices sync through one reference server over loopback HTTP.
@Suite("End to end over HTTP")
struct EndToEndTests {
    /// A server store holding the todo table, and the service over it.
    static func service(_ store: any LocalStore = InMemoryStore()) throws -> TableService {
        try store.open(schema: StoreSchema([Device.todoSchema]))
        return try TableService(store: store)
    }

    /// A fresh SQLite file in the directory.
    static func sqliteStore(_ name: String, in directory: TemporaryDirectory) -> SQLiteStore {
        SQLiteStore(path: directory.path(name + ".sqlite"))
    }

    @Test(
        "the offline tutorial: pull, offline edits, restart, push, pull on the other device (memory and SQLite devices, SQLite server)"
    )
    func tutorial() async throws {
        let directory = try TemporaryDirectory()
        let serverStore = Self.sqliteStore("server", in: directory)
        let bobStore = Self.sqliteStore("bob", in: directory)
        let service = try Self.service(serverStore)
        var server = try await RunningServer.start(service)
        let port = server.port
        let alice = try Device.make("alice", store: InMemoryStore(), port: port)
        var bob = try Device.make("bob", store: bobStore, port: port)

        _ = try alice.todo.insert(
            ["buy milk", "walk dog", "call mom"].enumerated().map { Device.todo("item\($0)", $1) })
        #expect(try await alice.context.push().succeeded)
        #expect(try await bob.pullAll().received == 3)

        await server.stop()
        let added = try bob.todo.insert([Device.todo("", "offline one"), Device.todo("", "offline two")])
        var walked = try #require(try bob.todo.lookup(id: "item1"))
        walked["complete"] = true
        try bob.todo.update(walked)
        await #expect(throws: PushFailure.self) { try await bob.context.push() }
        #expect(try bob.context.pendingOperationCount() == 3)

        bob = try bob.restarted()
        #expect(try bob.context.pendingOperationCount() == 3, "the queue survives the restart")
        server = try await RunningServer.start(service, port: port)
        let pushed = try await bob.context.push()
        #expect(pushed.succeeded, "\(pushed.errors)")
        #expect(try bob.context.pendingOperationCount() == 0)

        try await alice.pullAll()
        let seen = try alice.items()
        #expect(seen.count == 5)
        #expect(seen["item1"]?["complete"] == true)
        for item in added { #expect(seen[item.id]?["text"] == item["text"]) }
        let local = try bob.items()
        for (id, item) in seen {
            #expect(local[id]?.version == item.version, "both devices hold '\(id)' at the server's version")
        }

        try await Self.shutDown(alice, bob, server: server)
    }

    /// Closes the devices, then stops the server.
    static func shutDown(_ devices: Device..., server: TableServer.Running) async throws {
        for device in devices { try await device.close() }
        await server.stop()
    }

    /// Alice and Bob both edit `shared`; Alice pushes first, so Bob's push meets a 412.
    func conflict(bobHandler: any PushHandler, in directory: TemporaryDirectory) async throws -> (
        alice: Device, bob: Device, push: PushResult, server: TableServer.Running
    ) {
        let server = try await RunningServer.start(try Self.service())
        let alice = try Device.make("alice", store: InMemoryStore(), port: server.port)
        let bob = try Device.make(
            "bob", store: Self.sqliteStore("bob", in: directory), port: server.port, handler: bobHandler)
        _ = try alice.todo.insert(Device.todo("shared", "original"))
        try await alice.context.push()
        try await bob.pullAll()

        var mine = try #require(try alice.todo.lookup(id: "shared"))
        mine["text"] = "alice's edit"
        try alice.todo.update(mine)
        try await alice.context.push()

        var theirs = try #require(try bob.todo.lookup(id: "shared"))
        theirs["text"] = "bob's edit"
        try bob.todo.update(theirs)
        let push = try await bob.context.push()
        return (alice, bob, push, server)
    }

    @Test("a conflict with the default handler is recorded with the server's item and resolved by retrying")
    func conflictRecorded() async throws {
        let directory = try TemporaryDirectory()
        let (alice, bob, push, server) = try await conflict(bobHandler: DefaultPushHandler(), in: directory)
        let error = try #require(push.errors.first)
        #expect(push.errors.count == 1)
        #expect(error.serverItem?["text"] == "alice's edit")
        var retried = try #require(try bob.todo.lookup(id: "shared"))
        retried["version"] = error.serverItem?["version"] ?? .null
        try bob.context.resolve(error, .keepAndRetry(retried))
        #expect(try await bob.context.push().succeeded)
        try await alice.pullAll()
        #expect(try alice.todo.lookup(id: "shared")?["text"] == "bob's edit")
        try await Self.shutDown(alice, bob, server: server)
    }

    @Test("client wins: the second device's edit overwrites the server")
    func clientWins() async throws {
        let directory = try TemporaryDirectory()
        let (alice, bob, push, server) = try await conflict(bobHandler: ClientWinsPushHandler(), in: directory)
        #expect(push.succeeded, "\(push.errors)")
        try await alice.pullAll()
        #expect(try alice.todo.lookup(id: "shared")?["text"] == "bob's edit")
        #expect(try bob.todo.lookup(id: "shared")?.version == alice.todo.lookup(id: "shared")?.version)
        try await Self.shutDown(alice, bob, server: server)
    }

    @Test("server wins: the second device takes the server's copy")
    func serverWins() async throws {
        let directory = try TemporaryDirectory()
        let (alice, bob, push, server) = try await conflict(bobHandler: ServerWinsPushHandler(), in: directory)
        #expect(push.succeeded, "\(push.errors)")
        #expect(try bob.todo.lookup(id: "shared")?["text"] == "alice's edit")
        #expect(try bob.context.pendingOperationCount() == 0)
        try await alice.pullAll()
        #expect(try alice.todo.lookup(id: "shared")?["text"] == "alice's edit")
        try await Self.shutDown(alice, bob, server: server)
    }

    /// Batched, the whole batch whose answer was lost was applied: its writes, sent again, meet
    /// their own copies, as the one write does when sent one at a time.
    @Test(
        "the server crashes in the middle of a push: the client resumes, nothing lost, nothing applied twice",
        arguments: [HTTPRemote.BatchWrites.never, .always])
    func serverCrashMidPush(batchWrites: HTTPRemote.BatchWrites) async throws {
        let service = try Self.service()
        let server = try await CrashingServer.start(service)
        let device = try Device.make("device", store: InMemoryStore(), port: server.port, batchWrites: batchWrites)
        let count = 200
        _ = try device.todo.insert((0..<count).map { Device.todo(String(format: "n%04d", $0), "note \($0)") })

        // One request per write: 80 answered, the 81st applied without its answer. Batched (a chunk
        // of 64 per request): the first batch answered, the second applied without its answer.
        let batched = batchWrites == .always
        let answered = batched ? 64 : 80
        let applied = batched ? 128 : 81
        server.crash(afterAnswering: batched ? 1 : 80)
        await #expect(throws: PushFailure.self) { try await device.context.push() }
        #expect(server.isDown)
        let all = Query(table: "todoitem", top: count * 2)
        #expect(try service.store.read(all).items.count == applied, "the answered inserts and those whose answer was lost")
        #expect(try device.context.pendingOperationCount() == count - answered, "the unanswered inserts stay queued")

        server.restart()
        let resumed = try await device.context.push()
        // An applied insert, sent again, meets its own copy on the server (409): done, not a conflict.
        #expect(resumed.completedCount == count - answered)
        #expect(resumed.errors.isEmpty, "\(resumed.errors)")
        #expect(try device.context.pendingOperationCount() == 0)
        let lost = String(format: "n%04d", answered)
        #expect(try device.todo.lookup(id: lost)?.version == (try service.lookup(id: lost, in: "todoitem"))?.version)

        let serverItems = try service.store.read(all).items
        #expect(serverItems.count == count, "each item exactly once on the server")
        let local = try device.items()
        #expect(local.count == count, "nothing lost on the device")
        for item in serverItems {
            #expect(
                local[item.id]?.version == item.version && local[item.id]?["text"] == item["text"],
                "'\(item.id)' matches the server")
        }
        #expect(serverItems.allSatisfy { $0.createdAt == $0.updatedAt }, "every server item was written once")
        try await device.close()
        await server.stop()
    }
}
