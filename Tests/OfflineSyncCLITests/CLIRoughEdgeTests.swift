import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a new user meets when a command line is a little wrong, or when a command does more or
/// less than it says: each message names the mistake and the way out, through the real binary.
@Suite("offline-sync: rough edges a new user meets")
struct CLIRoughEdgeTests {
    // MARK: Command line

    @Test func misspeltSubcommandIsNamedWithTheNearestOne() throws {
        let result = try CLI.run(["inspekt", "--store", "memory:"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("unknown subcommand 'inspekt'; did you mean 'inspect'?"), "\(result)")
        #expect(!result.stderr.contains("Unknown option"), "\(result)")
        #expect(result.stderr.contains("offline-sync --help"), "\(result)")
    }

    @Test func unknownSubcommandFarFromEveryNameListsThemAll() throws {
        let result = try CLI.run(["frobnicate", "--store", "memory:"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("unknown subcommand 'frobnicate'; the subcommands are demo, conformance, inspect"), "\(result)")
        #expect(!result.stderr.contains("did you mean"), "\(result)")
    }

    @Test func negativeTopAndSkipAreRefusedWithTheRule() throws {
        let top = try CLI.run(["query", "--store", "memory:", "--table", "todoitem", "--top", "-1"])
        #expect(top.status == 64, "\(top)")
        #expect(top.stderr.contains("--top must be 0 or more, got -1"), "\(top)")
        #expect(!top.stderr.contains("Missing value"), "\(top)")
        let skip = try CLI.run(["query", "--store", "memory:", "--table", "todoitem", "--skip", "-3"])
        #expect(skip.status == 64, "\(skip)")
        #expect(skip.stderr.contains("--skip must be 0 or more, got -3"), "\(skip)")
    }

    @Test func negativeNumberForAnyOtherOptionIsNamedAsSuch() throws {
        for (arguments, option) in [
            (["bench", "--records", "-5"], "--records"),
            (["serve", "--store", "memory:", "--port", "-1"], "--port"),
            (["sync", "--store", "memory:", "--remote", "http://127.0.0.1:1", "--table", "t", "--page-size", "-2"], "--page-size"),
        ] {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.contains("\(option) takes no negative number, got \(arguments.last!)"), "\(result)")
            #expect(!result.stderr.contains("Missing value"), "\(result)")
        }
    }

    @Test func negativeConformanceStepsAreRefusedWithTheRule() throws {
        let result = try CLI.run(["conformance", "--store", "memory:", "--tier", "random", "--steps", "-5"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("--steps must be 0 or more, got -5"), "\(result)")
    }

    @Test func rekeyWithoutStoreIsRefusedInsteadOfUsingTheDefault() throws {
        let directory = try TemporaryDirectory()
        let store = "sqlcipher:\(directory.path("app.db"))?key-env=\(CLI.keyVariable)"
        let result = try CLI.run(
            ["rekey", "--new-key-env", "NEW_STORE_KEY"], in: directory.url,
            environment: ["OFFLINE_SYNC_STORE": store, "NEW_STORE_KEY": String(repeating: "ab", count: 32)])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("Missing expected argument '--store <url>'"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("app.db")))
        let help = try CLI.run(["rekey", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("required: rekey never falls back to $OFFLINE_SYNC_STORE"), "\(help)")
    }

    // MARK: Stores

    @Test func unknownSchemeListsTheSchemesOfTheToolNotAnAPI() throws {
        let result = try CLI.run(["inspect", "--store", "oracle:/tmp/db"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("unknown store scheme 'oracle' in --store"), "\(result)")
        #expect(result.stderr.contains("knows memory:, sqlite:"), "\(result)")
        #expect(result.stderr.contains("'offline-sync --help' shows the URL form of each"), "\(result)")
        #expect(!result.stderr.contains("BuiltInStores"), "\(result)")
        let migrate = try CLI.run(["migrate", "--from", "memory:", "--to", "Rocks:/tmp/x.rocks"])
        #expect(migrate.status == 1, "\(migrate)")
        #expect(migrate.stderr.contains("unknown store scheme 'rocks' in --to"), "\(migrate)")
        #expect(!migrate.stderr.contains("BuiltInStores"), "\(migrate)")
        let fromEnvironment = try CLI.run(["inspect"], environment: ["OFFLINE_SYNC_STORE": "oracle:/tmp/db"])
        #expect(fromEnvironment.stderr.contains("unknown store scheme 'oracle' in $OFFLINE_SYNC_STORE"), "\(fromEnvironment)")
    }

    /// A store of `count` todo items made with `import`, at `sqlite:DIRECTORY/source.sqlite`.
    static func importedStore(_ count: Int, in directory: TemporaryDirectory) throws -> String {
        let schema = try directory.write(
            "schema.json",
            #"{"name": "todoitem", "columns": [{"name": "text", "type": "string"}, {"name": "complete", "type": "bool"}]}"#)
        let lines = (0..<count).map { #"{"id": "i\#($0)", "text": "item \#($0)", "complete": false}"# }
        let file = try directory.write("items.jsonl", lines.joined(separator: "\n"))
        let store = "sqlite:" + directory.path("source.sqlite")
        let imported = try CLI.run(["import", "--store", store, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported)")
        return store
    }

    @Test func migrateIntoMemoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.importedStore(3, in: directory)
        let result = try CLI.run(["migrate", "--from", store, "--to", "memory:"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("--to memory: keeps nothing after the command ends"), "\(result)")
        #expect(result.stderr.contains("sqlite:PATH"), "\(result)")
        #expect(!result.stdout.contains("migrated"), "\(result)")
    }

    @Test func migrateDrawsProgressOnATerminalOnly() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.importedStore(3_000, in: directory)
        let onTerminal = try Terminal.run(["migrate", "--from", store, "--to", "sqlite:" + directory.path("copy.sqlite")])
        #expect(onTerminal.status == 0, "\(onTerminal)")
        #expect(onTerminal.stdout.contains("3000 items"), "\(onTerminal)")
        #expect(onTerminal.terminal.contains("migrating ["), "\(onTerminal)")
        #expect(onTerminal.terminal.contains("] 100% "), "\(onTerminal)")
        let piped = try CLI.run(["migrate", "--from", store, "--to", "sqlite:" + directory.path("again.sqlite")])
        #expect(piped.status == 0, "\(piped)")
        #expect(!piped.stderr.contains("migrating"), "no bar when standard error is not a terminal: \(piped)")
    }

    @Test func conformanceWithoutStoreLeavesNoDirectoryBehind() throws {
        let directory = try TemporaryDirectory()
        let result = try CLI.run(["conformance", "--tier", "store", "--filter", "missing"], in: directory.url)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("0 failed"), "\(result)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(left.isEmpty, "conformance left \(left) in the working directory")
    }

    // MARK: Output

    @Test func syncCountsAgreeWithTheirNouns() async throws {
        let directory = try TemporaryDirectory()
        let server = try CLIDemoRemoteTests.ServeProcess(store: "sqlite:" + directory.path("server.sqlite"))
        defer { server.stop() }
        let status = try await CLISyncTests.request(
            "POST", "/tables/todoitem", port: server.port, body: #"{"id": "only", "text": "one", "complete": false}"#)
        #expect(status == 201)
        let store = "sqlite:" + directory.path("device.sqlite")
        let arguments = [
            "sync", "--store", store, "--remote", "http://127.0.0.1:\(server.port)", "--table", "todoitem",
            "--query-id", "all",
        ]
        let first = try CLI.run(arguments)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("pulled 1 record of todoitem in "), "\(first)")
        #expect(Self.nounsAgree(first.stdout), "\(first)")
        let again = try CLI.run(arguments)
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("pulled 0 records of todoitem in "), "\(again)")
        #expect(Self.nounsAgree(again.stdout), "\(again)")
    }

    /// `true` when every "N request(s)" and "N record(s)" in `text` is singular exactly for 1.
    static func nounsAgree(_ text: String) -> Bool {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ":" || $0 == "," }).map(String.init)
        for (number, noun) in zip(words, words.dropFirst()) {
            guard let count = Int(number), ["request", "requests", "record", "records"].contains(noun) else { continue }
            if (count == 1) != !noun.hasSuffix("s") { return false }
        }
        return true
    }

    @Test func httpsAgainstAPlainServerSaysSoInOneLineWithoutInternals() throws {
        let directory = try TemporaryDirectory()
        let server = try CLIDemoRemoteTests.ServeProcess(store: "memory:")
        defer { server.stop() }
        let result = try CLI.run([
            "sync", "--store", "sqlite:" + directory.path("device.sqlite"), "--remote",
            "https://127.0.0.1:\(server.port)", "--table", "todoitem",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("did not answer TLS"), "\(result)")
        #expect(result.stderr.contains("did you mean http://127.0.0.1:\(server.port)?"), "\(result)")
        for leak in ["BoringSSL", "OPENSSL_internal", "WRONG_VERSION_NUMBER", ".build/", "/checkouts/", ".cc:"] {
            #expect(!result.stderr.contains(leak), "\(leak) in \(result)")
        }
        let errorLines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        #expect(errorLines.count == 1, "\(result)")
        #expect(errorLines.first?.contains("did not answer TLS") == true, "\(result)")
        // A plain server's answer to TLS cannot change: HTTPRemote does not retry it (and log
        // each retry), so the error is the only line about it.
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("TLS") }
        #expect(lines.count == 1, "\(result)")
        #expect(!result.stderr.contains("retrying"), "\(result)")
    }

    // MARK: Help

    /// Every subcommand the top-level help lists.
    static func subcommands() throws -> [String] {
        let help = try CLI.run(["--help"]).stdout
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        // The section ends at its first blank line.
        let section = help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return section.compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
    }

    /// The lines of `help`'s "Example:"/"Examples:" blocks, up to the next blank line.
    static func exampleLines(_ help: String) -> [Substring] {
        var lines: [Substring] = []
        var inside = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Example") && line.hasSuffix(":") {
                inside = true
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                inside = false
            } else if inside {
                lines.append(line)
            }
        }
        return lines
    }

    @Test func helpExamplesContinueOnlyAfterABackslash() throws {
        let subcommands = try Self.subcommands()
        #expect(subcommands.count >= 10, "\(subcommands)")
        for command in [[]] + subcommands.filter { $0 != "help" }.map({ [$0] }) {
            // The width ArgumentParser wraps to when the output is not a terminal.
            let help = try CLI.run(command + ["--help"], environment: ["COLUMNS": "80"])
            #expect(help.status == 0, "\(help)")
            let lines = Self.exampleLines(help.stdout)
            #expect(!lines.isEmpty || command == ["help"], "no examples in \(command) --help")
            var continues = false
            for line in lines {
                let indent = line.prefix { $0 == " " }.count
                if continues {
                    #expect(indent > 2, "\(command) --help: a continued example line should be indented: '\(line)'")
                } else {
                    #expect(indent == 2, "\(command) --help: an example line continues without '\\': '\(line)'")
                }
                #expect(!line.hasSuffix("\\") || line.hasSuffix(" \\"), "\(command) --help: '\(line)'")
                continues = line.hasSuffix(" \\")
            }
            #expect(!continues, "\(command) --help: the last example line ends with '\\'")
        }
    }

    @Test func benchHelpListsEveryScenario() throws {
        let help = try CLI.run(["bench", "--help"], environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help)")
        // The list of known scenarios, as an unknown one is answered with it.
        let unknown = try CLI.run(["bench", "--scenarios", "no-such-scenario"])
        #expect(unknown.status == 1, "\(unknown)")
        guard let range = unknown.stderr.range(of: "known scenarios: ") else {
            Issue.record("no list of scenarios in \(unknown)")
            return
        }
        let ids = unknown.stderr[range.upperBound...].split(separator: "\n")[0].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(ids.count >= 10, "\(ids)")
        let words = Set(help.stdout.split(whereSeparator: { " \n,.()".contains($0) }).map(String.init))
        for id in ids {
            #expect(words.contains(id), "bench --help does not list the scenario '\(id)'")
        }
    }

    @Test func queryHelpExamplesRunOnAFreshDirectory() throws {
        let help = try CLI.run(["query", "--help"], environment: ["COLUMNS": "80"])
        let script = Self.exampleLines(help.stdout).map { $0.dropFirst(2) }.joined(separator: "\n")
        #expect(script.contains("offline-sync query"), "\(help)")
        let directory = try TemporaryDirectory()
        let path = CLI.executable.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = path
        environment.removeValue(forKey: "OFFLINE_SYNC_STORE")
        let result = try CLI.launch(
            URL(fileURLWithPath: "/bin/sh"), ["-e", "-c", script], directory: directory.url, environment: environment)
        #expect(result.status == 0, "the examples of query --help:\n\(script)\n\(result)")
        #expect(result.stdout.contains("matching in all"), "\(result)")
        #expect(result.stdout.contains("\"text\""), "the jsonl example prints items: \(result)")
    }
}

/// Runs `offline-sync` with its standard error on a pseudo-terminal, as a person at a terminal
/// sees it: what is drawn only on a terminal (progress bars) is drawn.
enum Terminal {
    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        /// Everything written to the terminal (standard error).
        let terminal: String

        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- terminal\n\(terminal)" }
    }

    /// A new pseudo-terminal: its master descriptor and the path of its slave side.
    static func openTerminal() throws -> (master: Int32, slavePath: String) {
        #if canImport(Glibc)
            // Glibc's Swift module leaves out posix_openpt, grantpt and unlockpt: the kernel's
            // interface they wrap instead (TIOCSPTLCK unlocks the slave, TIOCGPTN numbers it).
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0
            else {
                if master >= 0 { close(master) }
                throw POSIXError(.ENOTTY)
            }
            return (master, "/dev/pts/\(number)")
        #else
            let master = posix_openpt(O_RDWR | O_NOCTTY)
            guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
                if master >= 0 { close(master) }
                throw POSIXError(.ENOTTY)
            }
            return (master, String(cString: name))
        #endif
    }

    static func run(_ arguments: [String]) throws -> Result {
        let (master, slavePath) = try openTerminal()
        defer { close(master) }
        let slave = open(slavePath, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        let scratch = try TemporaryDirectory()
        let out = scratch.url.appendingPathComponent("stdout")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "OFFLINE_SYNC_STORE")
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        do {
            try process.run()
        } catch {
            close(slave)
            throw error
        }
        close(slave)
        // Read until the child's end closes the terminal's last slave descriptor (EIO).
        var written: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            written += buffer[0..<count]
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            terminal: String(decoding: written, as: UTF8.self))
    }
}
