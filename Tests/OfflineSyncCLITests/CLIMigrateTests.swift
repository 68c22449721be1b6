import Foundation
import Testing

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
