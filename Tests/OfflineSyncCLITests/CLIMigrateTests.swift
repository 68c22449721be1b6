import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("offline-sync migrate")
struct CLIMigrateTests {
    static let pairs: [(Backend, Backend)] = Backend.available.flatMap { from in
        Backend.available.filter { $0 != from }.map { (from, $0) }
    }

    @Test(arguments: pairs)
    func migrationKeepsEveryItem(from: Backend, to: Backend) throws {
        let directory = try TemporaryDirectory()
        let source = from.url("source", in: directory)
        let destination = to.url("destination", in: directory)
        try Todo.importFixtures(into: source, in: directory)
        let result = try CLI.run(["migrate", "--from", source, "--to", destination])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("3 items"), "\(result)")
        let export = try CLI.run(["export", "--store", destination, "--table", "todoitem"])
        #expect(export.stdout == Todo.exported, "\(export)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix(".offline-sync-")
        }
        #expect(leftovers.isEmpty)
    }

    @Test func anUnusableDestinationIsNamedWithTheReasonInPlainWords() throws {
        let directory = try TemporaryDirectory()
        let source = Backend.sqlite.url("source", in: directory)
        try Todo.importFixtures(into: source, in: directory)
        let file = directory.path("source.sqlite")
        let schema = try directory.write("schema.json", Todo.schema)
        let lines = try directory.write("todo.jsonl", Todo.lines)

        let cases: [(destination: String, reason: String)] = [
            (file + "/x.sqlite", "cannot create the store at \(file)/x.sqlite: \(file) is a file, not a directory"),
            (file + "/deeper/x.sqlite", "\(file) is a file, not a directory"),
            ("/proc/x.sqlite", "/proc"),
        ]
        for (destination, reason) in cases {
            for arguments in [
                ["migrate", "--from", source, "--to", "sqlite:" + destination],
                ["import", "--store", "sqlite:" + destination, "--table", "todoitem", "--file", lines, "--schema", schema],
            ] {
                let result = try CLI.run(arguments)
                #expect(result.status == 1, "\(arguments[0]) to \(destination): \(result)")
                #expect(
                    result.stderr.contains(destination) && result.stderr.contains(reason),
                    "\(arguments[0]) to \(destination): \(result)")
                #expect(!result.stderr.contains("Domain="), "\(arguments[0]) to \(destination): \(result)")
            }
        }
        #expect(try CLI.run(["export", "--store", source, "--table", "todoitem"]).stdout == Todo.exported)
    }

    @Test func aScratchDirectoryLeftByAKilledMigrateIsRemovedByTheNextOne() throws {
        let directory = try TemporaryDirectory()
        let source = Backend.sqlite.url("source", in: directory)
        try Todo.importFixtures(into: source, in: directory)
        func scratch(lock: String?) throws -> String {
            let path = directory.path(".offline-sync-migrate-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: path + "/1", withIntermediateDirectories: true)
            try Data("half a store".utf8).write(to: URL(fileURLWithPath: path + "/1/destination.sqlite"))
            if let lock { try Data(lock.utf8).write(to: URL(fileURLWithPath: path + "/in-use.lock")) }
            return path
        }
        // What a migrate killed with -9 leaves: its lock file marked, and no process holding it.
        let abandoned = try scratch(lock: "in use\n")
        // A migrate still running: this process holds the lock.
        let running = try scratch(lock: "in use\n")
        let held = open(running + "/in-use.lock", O_RDONLY)
        #expect(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        defer { close(held) }
        // Not provably made by migrate: no lock file.
        let unknown = try scratch(lock: nil)

        let result = try CLI.run(["migrate", "--from", source, "--to", Backend.sqlite.url("destination", in: directory)])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: abandoned), "the abandoned scratch directory is still there")
        #expect(FileManager.default.fileExists(atPath: running + "/1/destination.sqlite"), "a running one was removed")
        #expect(FileManager.default.fileExists(atPath: unknown + "/1/destination.sqlite"), "an unknown one was removed")
    }

    @Test(arguments: Backend.available)
    func existingDestinationIsRefusedAndLeftAlone(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let source = backend.url("source", in: directory)
        let destination = backend.url("destination", in: directory)
        try Todo.importFixtures(into: source, in: directory)
        try Todo.importFixtures(into: destination, in: directory)
        let result = try CLI.run(["migrate", "--from", source, "--to", destination])
        #expect(result.status == 1)
        #expect(result.stderr.contains("already exists"), "\(result)")
        #expect(try CLI.run(["export", "--store", destination, "--table", "todoitem"]).stdout == Todo.exported)
    }

    @Test(arguments: Backend.available)
    func failedMigrationLeavesNoDestination(backend: Backend) throws {
        guard Backend.available.contains(.lmdb) else { return }
        let directory = try TemporaryDirectory()
        let source = backend.url("source", in: directory)
        let schema = try directory.write("schema.json", Todo.schema)
        let text = String(repeating: "x", count: 200)
        let lines = (0..<2000).map { "{\"id\":\"item\($0)\",\"text\":\"\(text)\"}" }.joined(separator: "\n")
        let file = try directory.write("many.jsonl", lines)
        let load = try CLI.run(["import", "--store", source, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(load.status == 0, "\(load)")

        let tooSmall = "lmdb:\(directory.path("small.lmdb"))?map-size=64KiB&max-map-size=64KiB"
        let result = try CLI.run(["migrate", "--from", source, "--to", tooSmall])
        #expect(result.status == 1, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("small.lmdb")))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix(".offline-sync-") || $0.hasPrefix("small")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
