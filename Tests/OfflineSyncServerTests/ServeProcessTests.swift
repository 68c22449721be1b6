import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncLMDB
import OfflineSyncSQLite
import Synchronization
import Testing

/// `offline-sync serve` as a real process: killed with SIGKILL in the middle of a push and
/// started again over the same SQLite file, the client resumes and nothing is lost or applied twice.
@Suite("offline-sync serve process")
struct ServeProcessTests {
    @Test(
        "killed mid-push and restarted: the client resumes, nothing lost, nothing applied twice",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func killedMidPush() async throws {
        let directory = try TemporaryDirectory()
        let serverStore = "sqlite:" + directory.path("server.sqlite")
        var server = try ServeProcess(store: serverStore, port: 0)
        let port = server.port
        let device = try Device.make("device", store: SQLiteStore(path: directory.path("device.sqlite")), port: port)
        let count = 2_000
        _ = try device.todo.insert((0..<count).map { Device.todo(String(format: "k%04d", $0), "kept \($0)") })

        let push = Task { try await device.context.push() }
        for _ in 0..<2000 where try device.context.pendingOperationCount() > count - 100 {
            try await Task.sleep(for: .milliseconds(2))
        }
        server.kill()
        let first = await push.result
        #expect((try? first.get()) == nil, "the push stops when the server dies")
        let pending = try device.context.pendingOperationCount()
        #expect(pending > 0 && pending < count)

        server = try ServeProcess(store: serverStore, port: port)
        // An insert whose answer was lost meets its own copy on the server: done, not a conflict.
        let result = try await device.context.push()
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(try device.context.pendingOperationCount() == 0)

        let answer = try await send(
            "GET", "/tables/todoitem?$top=1000&$inlinecount=allpages&__includeDeleted=true", port: port,
            headers: [("ZUMO-API-VERSION", "2.0.0")])
        let page = answer.json as? [String: Any]
        #expect(page?["count"] as? Int == count, "each item exactly once on the server")
        let served = (page?["results"] as? [[String: Any]]) ?? []
        #expect(
            served.allSatisfy { ($0["createdAt"] as? String) == ($0["updatedAt"] as? String) },
            "every item written once")
        let local = try device.items()
        #expect(local.count == count)
        for item in served {
            let id = item["id"] as? String ?? ""
            #expect(local[id]?.version == item["version"] as? String, "'\(id)' at the server's version")
        }
        try await device.close()
        server.kill()
    }

    @Test(
        "serve over an LMDB store whose data file another process truncates stops with a message and status 74, not a signal",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func truncatedMappedFileStopsCleanly() async throws {
        let directory = try TemporaryDirectory()
        let store = "lmdb:" + directory.path("store.lmdb")
        let title = String(repeating: "x", count: 100)
        try ServeCommand.importNotes((0..<20_000).map { ("i\(100_000 + $0)", title) }, into: store, in: directory)

        let server = try ServeProcess(store: store, port: 0, keepingErrors: true)
        // What a backup tool or a careless script does to the file under the server: cut it to
        // four pages, so the pages a read of the later rows touches are past its end.
        #expect(truncate(directory.path("store.lmdb/data.mdb"), 16_384) == 0)
        _ = try? await send(
            "GET", "/tables/notes?$top=5&$skip=15000", port: server.port, headers: [("ZUMO-API-VERSION", "2.0.0")])
        #expect(try await server.ends(within: 30), "serve went on over the truncated file")
        let stderr = String(decoding: try #require(server.errors).fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(server.process.terminationReason == .exit, "ended by a signal: \(stderr)")
        #expect(server.process.terminationStatus == 74, "\(stderr)")
        #expect(stderr.contains("a memory-mapped store file failed") && stderr.contains("offline-sync inspect"), "\(stderr)")
    }

    @Test(
        "serve whose store file another file replaces answers 503 and stops; the new file gets none of its writes",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ["sqlite", "lmdb"])
    func replacedStoreFileStopsTheServer(backend: String) async throws {
        let directory = try TemporaryDirectory()
        let store = backend + ":" + directory.path("store")
        let other = backend + ":" + directory.path("other")
        try ServeCommand.importNotes([("first", "t")], into: store, in: directory)
        try ServeCommand.importNotes([("other", "t")], into: other, in: directory)
        let server = try ServeProcess(store: store, port: 0, keepingErrors: true)
        func post(_ id: String) async throws -> Int {
            try await send(
                "POST", "/tables/notes", port: server.port,
                headers: [("ZUMO-API-VERSION", "2.0.0"), ("Content-Type", "application/json")],
                body: Array(#"{"id":"\#(id)","title":"t"}"#.utf8)
            ).status
        }
        #expect(try await post("before") == 201)
        // A restore from a backup: the served file moved aside, another moved over its path.
        let (path, aside, replacement) =
            backend == "lmdb"
            ? (directory.path("store/data.mdb"), directory.path("aside.mdb"), directory.path("other/data.mdb"))
            : (directory.path("store"), directory.path("aside"), directory.path("other"))
        try FileManager.default.moveItem(atPath: path, toPath: aside)
        try FileManager.default.moveItem(atPath: replacement, toPath: path)
        #expect(try await post("after") == 503)
        #expect(try await server.ends(within: 30), "serve went on over the replaced file")
        let stderr = String(
            decoding: try #require(server.errors).fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(server.process.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("was replaced by another file") && stderr.contains("start offline-sync serve again"))

        let export = try ServeCommand.run(["export", "--store", store, "--table", "notes"])
        #expect(export.status == 0, "\(export.error)")
        let exported = export.output
        #expect(exported.contains(#""id":"other""#) && !exported.contains("before") && !exported.contains("after"),
            "the file now at the path holds only its own rows: \(exported)")
    }

    /// Runs `offline-sync` with `arguments` until its first line of standard output (then
    /// terminates it) or its exit; answers that line and its standard error.
    static func firstLine(_ arguments: [String]) throws -> (output: String, error: String) {
        let process = Process()
        process.executableURL = ServeCommand.executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return (line, String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test(
        "serve over a file store syncs every commit to disk unless told otherwise, and warns of a weaker sync= it is given",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ["sqlite", "lmdb"])
    func durableByDefault(backend: String) async throws {
        SQLiteStore.register()
        LMDBStore.register()
        let directory = try TemporaryDirectory()
        let store = backend + ":" + directory.path("store")
        /// The store URL the server says it serves, and its standard error.
        func served(_ arguments: [String]) async throws -> (url: String, error: String) {
            let (output, error) = try await onOwnThread {
                try Self.firstLine(["serve", "--port", "0"] + arguments)
            }
            let url = output.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            #expect(output.hasPrefix("serving \(backend):"), "\(output) \(error)")
            return (url, error)
        }
        let byDefault = try await served(["--store", store])
        #expect(byDefault.url == store + "?sync=full", "\(byDefault)")
        #expect(!byDefault.error.contains("warning"), "\(byDefault.error)")
        // The URL it printed opens the store with commits synced to disk.
        let opened = try StoreRegistry.shared.makeStore(byDefault.url)
        try opened.open(schema: StoreSchema([]))
        let sync = opened.info.properties.first { ["synchronous", "sync", "durability"].contains($0.name) }
        #expect(sync?.value == "full", "\(opened.info)")
        try opened.close()

        let relaxed = try await served(["--store", store, "--durability", "store"])
        #expect(relaxed.url == store, "\(relaxed)")
        let weaker = backend == "sqlite" ? "normal" : "none"
        let told = try await served(["--store", store + "?sync=" + weaker])
        #expect(told.url == store + "?sync=" + weaker, "\(told)")
        #expect(
            told.error.contains("sync=\(weaker) is weaker than a commit synced to disk"), "\(told.error)")
    }

    @Test(
        "serve on an IPv6 address prints its URL with the address in brackets",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func ipv6URL() async throws {
        let (output, error) = try await onOwnThread {
            try Self.firstLine(["serve", "--store", "memory:", "--host", "::1", "--port", "0"])
        }
        #expect(output.contains("http://[::1]:"), "\(output) \(error)")
    }

    @Test(
        "serve on a port in use says so in words and names --port",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func portInUse() async throws {
        try await withTableServer { port in
            let (output, error) = try await onOwnThread {
                try Self.firstLine(["serve", "--store", "memory:", "--port", String(port)])
            }
            #expect(output.isEmpty)
            #expect(
                error.contains("cannot listen on 127.0.0.1:\(port): the address is already in use")
                    && error.contains("--port"), "\(error)")
            #expect(!error.contains("errno"), "\(error)")
        }
    }
}
