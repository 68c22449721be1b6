import Foundation
import Testing

/// One way of damaging a copy of a store's data file.
enum Damage: String, CaseIterable, CustomTestStringConvertible {
    case truncatedToNothing, truncatedInsideTheHeader, truncatedInsideTheFirstPage, truncatedAfterTwoPages
    case truncatedToHalf, truncatedByOnePage, truncatedByOneByte
    case flippedInTheHeader, flippedInTheMiddle, flippedAtTheEnd
    case zeroedSecondPage, zeroedThirdPage, zeroedMiddlePage
    case swappedForAnotherBackendsFile

    var testDescription: String { rawValue }

    static let pageSize = 4096

    /// Applies the damage to `file` in place; `foreign` is a data file of another backend.
    func apply(to file: String, foreign: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let size = bytes.count
        let page = Damage.pageSize
        func flip(_ offsets: [Int]) {
            for offset in offsets where offset >= 0 && offset < size { bytes[offset] ^= 0xA5 }
        }
        func zero(page number: Int) {
            let start = min(number * page, size)
            let end = min(start + page, size)
            for offset in start..<end { bytes[offset] = 0 }
        }
        switch self {
        case .truncatedToNothing: bytes = []
        case .truncatedInsideTheHeader: bytes = Array(bytes.prefix(60))
        case .truncatedInsideTheFirstPage: bytes = Array(bytes.prefix(page / 2))
        case .truncatedAfterTwoPages: bytes = Array(bytes.prefix(2 * page + 100))
        case .truncatedToHalf: bytes = Array(bytes.prefix(size / 2))
        case .truncatedByOnePage: bytes = Array(bytes.prefix(max(size - page, 0)))
        case .truncatedByOneByte: bytes = Array(bytes.prefix(max(size - 1, 0)))
        case .flippedInTheHeader: flip(Array(16..<48) + Array(page + 16..<page + 48))
        case .flippedInTheMiddle: flip(Array(size / 2..<size / 2 + 64))
        case .flippedAtTheEnd: flip(Array(size - 200..<size - 100))
        case .zeroedSecondPage: zero(page: 1)
        case .zeroedThirdPage: zero(page: 2)
        case .zeroedMiddlePage: zero(page: size / page / 2)
        case .swappedForAnotherBackendsFile:
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: foreign)))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }
}

/// A store of a few hundred items, large enough for several pages, overflow pages and a
/// multi-level tree in every backend.
enum DamageFixture {
    static let lines: String = (0..<400).map { number in
        let text = String(repeating: "item \(number) ", count: number % 50 == 0 ? 700 : 1 + number % 20)
        return #"{"id":"item-\#(1000 + number)","text":"\#(text)","priority":\#(number),"complete":\#(number % 3 == 0)}"#
    }.joined(separator: "\n")

    /// The data file of a store URL made by ``Backend/url(_:in:)``.
    static func dataFile(of backend: Backend, _ name: String, in directory: TemporaryDirectory) -> String {
        switch backend {
        case .sqlite: return directory.path(name + ".sqlite")
        case .sqlcipher: return directory.path(name + ".db")
        case .lmdb: return directory.path(name + ".lmdb") + "/data.mdb"
        }
    }

    /// Imports the fixture into a new store `name` and returns its canonical export.
    static func makeStore(_ backend: Backend, _ name: String, in directory: TemporaryDirectory) throws -> String {
        let schema = try directory.write("schema.json", Todo.schema)
        let file = try directory.write("fixture.jsonl", lines)
        let url = backend.url(name, in: directory)
        let imported = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported)")
        let export = try CLI.run(["export", "--store", url, "--table", "todoitem"])
        #expect(export.status == 0, "\(export)")
        return export.stdout
    }
}

@Suite("damaged stores end in a clear error or the right data, never in a signal")
struct DamagedStoreTests {
    @Test(arguments: Backend.available, Damage.allCases)
    func everyCommandOnADamagedStoreEndsCleanly(backend: Backend, damage: Damage) throws {
        let directory = try TemporaryDirectory()
        let pristine = try DamageFixture.makeStore(backend, "store", in: directory)
        let other: Backend = backend == .lmdb ? .sqlite : .lmdb
        _ = try DamageFixture.makeStore(other, "foreign", in: directory)
        let file = DamageFixture.dataFile(of: backend, "store", in: directory)
        try damage.apply(to: file, foreign: DamageFixture.dataFile(of: other, "foreign", in: directory))
        let url = backend.url("store", in: directory)
        let location = backend == .lmdb ? directory.path("store.lmdb") : file
        let more = try directory.write("more.jsonl", #"{"id":"new-1","text":"after the damage"}"#)

        let commands: [(name: String, arguments: [String])] = [
            ("open and query", ["query", "--store", url, "--table", "todoitem", "--top", "3", "--format", "jsonl"]),
            ("inspect", ["inspect", "--store", url]),
            ("export", ["export", "--store", url, "--table", "todoitem"]),
            ("import", ["import", "--store", url, "--table", "todoitem", "--file", more]),
        ]
        for command in commands {
            let result = try CLI.run(command.arguments)
            #expect(!result.signalled, "\(command.name) on a store \(damage) was killed by a signal: \(result)")
            guard !result.signalled else { continue }
            if result.status == 0 {
                if command.name == "export" && backend == .sqlcipher {
                    // Every page of an SQLCipher file carries a MAC: what reads back is what was written.
                    #expect(result.stdout == pristine, "export of a store \(damage) succeeded with other data")
                }
            } else {
                #expect(
                    result.stderr.contains(location),
                    "\(command.name) on a store \(damage) failed without naming \(location): \(result)")
                #expect(
                    result.stderr.contains("restore") || result.stderr.contains("delete"),
                    "\(command.name) on a store \(damage) failed without saying what to do: \(result)")
            }
        }
    }

    @Test(arguments: Backend.available.filter { $0 != .lmdb }, [1, 99, 511])
    func everyCommandRefusesAFileTooShortForADatabaseAndLeavesItUntouched(backend: Backend, size: Int) throws {
        let directory = try TemporaryDirectory()
        _ = try DamageFixture.makeStore(backend, "store", in: directory)
        let file = DamageFixture.dataFile(of: backend, "store", in: directory)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file)).prefix(size)
        try bytes.write(to: URL(fileURLWithPath: file))
        let url = backend.url("store", in: directory)
        let schema = try directory.write("schema.json", Todo.schema)
        let more = try directory.write("more.jsonl", #"{"id":"new-1","text":"after the damage"}"#)
        let target = backend.url("copy", in: directory)

        let commands: [[String]] = [
            ["inspect", "--store", url],
            ["query", "--store", url, "--table", "todoitem"],
            ["export", "--store", url, "--table", "todoitem"],
            ["import", "--store", url, "--table", "todoitem", "--file", more, "--schema", schema],
            ["migrate", "--from", url, "--to", target],
        ]
        for arguments in commands {
            let result = try CLI.run(arguments)
            #expect(result.status == 1 && !result.signalled, "\(arguments[0]) on \(size) bytes: \(result)")
            #expect(result.stderr.contains(file), "\(arguments[0]) did not name the file: \(result)")
            #expect(result.stderr.contains("\(size) byte"), "\(arguments[0]) did not say why: \(result)")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: file)) == bytes, "\(arguments[0]) changed the \(size)-byte file")
        }
    }

    @Test func everyCommandLeavesAPlainFileWithoutTheSQLiteHeaderUntouched() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("noise.sqlite")
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 3) })
        try bytes.write(to: URL(fileURLWithPath: file))
        let schema = try directory.write("schema.json", Todo.schema)
        let more = try directory.write("more.jsonl", #"{"id":"new-1","text":"after the damage"}"#)
        let url = "sqlite:" + file

        let commands: [[String]] = [
            ["inspect", "--store", url],
            ["query", "--store", url, "--table", "todoitem"],
            ["export", "--store", url, "--table", "todoitem"],
            ["import", "--store", url, "--table", "todoitem", "--file", more, "--schema", schema],
        ]
        for arguments in commands {
            let result = try CLI.run(arguments)
            #expect(result.status == 1 && !result.signalled, "\(arguments[0]): \(result)")
            #expect(result.stderr.contains("not a database"), "\(arguments[0]): \(result)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == bytes, "\(arguments[0]) changed the file")
            #expect(!FileManager.default.fileExists(atPath: file + "-wal"), "\(arguments[0]) left a WAL")
        }
    }

    @Test(arguments: Backend.available)
    func anUndamagedCopyReadsBackEveryItem(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let pristine = try DamageFixture.makeStore(backend, "store", in: directory)
        #expect(pristine.split(separator: "\n").count == 400)
        let export = try CLI.run(["export", "--store", backend.url("store", in: directory), "--table", "todoitem"])
        #expect(export.stdout == pristine, "\(export)")
    }
}
