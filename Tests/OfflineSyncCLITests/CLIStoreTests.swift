import Foundation
import Testing

/// Fixtures: a todo table with one column of every type.
enum Todo {
    static let schema = """
        {"tables": [{"name": "todoitem",
          "columns": [{"name": "text", "type": "string"}, {"name": "complete", "type": "bool"},
                      {"name": "priority", "type": "integer"}, {"name": "score", "type": "double"},
                      {"name": "due", "type": "date"}, {"name": "tags", "type": "json"}],
          "indexes": [{"name": "todoitem_complete", "columns": ["complete"]}]}]}
        """

    static let lines = """
        {"id":"b","text":"Walk the dog","complete":true,"priority":1,"score":-0.5}
        {"id":"a","text":"Buy milk \\"2%\\"","complete":false,"priority":3,"due":"2026-01-02T03:04:05.678+01:00","tags":["shop", {"aisle": 4}]}

        {"id":"c","text":"Écrire \\u00e0 Zoë","complete":false,"score":2,"due":"1969-12-31T23:59:59.999Z"}
        """

    /// What `export` prints for ``lines``: id order, then columns by name, nulls left out, dates in UTC.
    static let exported = """
        {"id":"a","complete":false,"due":"2026-01-02T02:04:05.678Z","priority":3,"tags":["shop",{"aisle":4}],"text":"Buy milk \\"2%\\""}
        {"id":"b","complete":true,"priority":1,"score":-0.5,"text":"Walk the dog"}
        {"id":"c","complete":false,"due":"1969-12-31T23:59:59.999Z","score":2.0,"text":"Écrire à Zoë"}

        """

    /// Runs `body` with a new store of `backend` holding the fixtures, in a directory removed afterwards.
    static func withImportedStore(on backend: Backend, _ body: (TemporaryDirectory, String) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        try withExtendedLifetime(directory) {
            let url = backend.url("store", in: directory)
            try importFixtures(into: url, in: directory)
            try body(directory, url)
        }
    }

    /// Imports the fixtures into a new store at `url`.
    static func importFixtures(into url: String, in directory: TemporaryDirectory) throws {
        let schema = try directory.write("schema.json", Todo.schema)
        let file = try directory.write("todo.jsonl", Todo.lines)
        let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "imported 3 items into todoitem\n", "\(result)")
        #expect(result.stderr.isEmpty, "no progress bar when standard error is not a terminal: \(result)")
    }
}

@Suite("offline-sync on each persistent backend")
struct CLIStoreTests {
    @Test(arguments: Backend.available)
    func importThenExportGivesTheCanonicalLines(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let export = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(export.status == 0, "\(export)")
            #expect(export.stdout == Todo.exported, "\(export)")
        }
    }

    @Test(arguments: Backend.available)
    func malformedLineIsNamedAndNothingIsImported(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { directory, url in
            let bad = try directory.write(
                "bad.jsonl",
                """
                {"id":"d","text":"first"}
                {"id":"e","text":"second"}
                {"id":"f","text": oops}
                {"id":"g","text":"fourth"}
                """)
            let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", bad])
            #expect(result.status == 1)
            #expect(result.stderr.contains("bad.jsonl line 3: invalid JSON at byte offset 18"), "\(result)")
            #expect(result.stderr.contains("nothing was imported"), "\(result)")
            let export = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(export.stdout == Todo.exported, "\(export)")
        }
    }

    @Test(arguments: Backend.available)
    func valueThatDoesNotFitItsColumnIsNamedWithItsLine(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { directory, url in
            let bad = try directory.write(
                "bad.jsonl", "{\"id\":\"d\",\"complete\":\"yes\"}\n{\"id\":\"e\",\"colour\":\"red\"}\n")
            let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", bad])
            #expect(result.status == 1)
            #expect(result.stderr.contains("bad.jsonl line 1: table 'todoitem' column 'complete' is bool"), "\(result)")
            let count = try CLI.run(["query", "--store", url, "--table", "todoitem", "--count", "--top", "0"])
            #expect(count.stdout.contains("(3 matching in all)"), "\(count)")
        }
    }

    @Test(arguments: Backend.available)
    func malformedImportIntoANewStoreCreatesNothing(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("fresh", in: directory)
        let schema = try directory.write("schema.json", Todo.schema)
        let bad = try directory.write("bad.jsonl", "{\"id\":\"d\"}\n[1,2]\n")
        let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", bad, "--schema", schema])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.jsonl line 2: "), "\(result)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == [
                "bad.jsonl", "schema.json",
            ])
    }

    @Test(arguments: Backend.available)
    func missingStoreIsReportedNotCreated(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("absent", in: directory)
        for arguments in [["inspect"], ["export", "--table", "todoitem"], ["query", "--table", "todoitem"]] {
            let result = try CLI.run(arguments + ["--store", url])
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("no store at \(directory.url.path)/absent"), "\(arguments): \(result)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test("a store path that is a FIFO, a directory or a device is named as such, never opened or called empty")
    func specialFilesAreNamed() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.path + "/pipe.sqlite"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (url, kind) in [
            ("sqlite:" + fifo, "a FIFO"), ("sqlite:" + directory.url.path, "a directory"),
            ("sqlite:/dev/null", "a character device"),
        ] {
            let result = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(result.status == 1, "\(url): \(result)")
            #expect(result.stderr.contains("is \(kind), not a store file"), "\(url): \(result)")
            #expect(!result.stderr.contains("empty"), "\(url): \(result)")
        }
    }

    @Test func aDirectoryWithoutAnLMDBEnvironmentIsNotTurnedIntoOne() throws {
        let directory = try TemporaryDirectory()
        let notes = try directory.write("notes.txt", "not a store")
        let result = try CLI.run(["inspect", "--store", "lmdb:\(directory.url.path)"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("no store at \(directory.url.path) (lmdb: no data.mdb in it)"), "\(result)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == [
                URL(fileURLWithPath: notes).lastPathComponent
            ])
    }

    @Test(arguments: Backend.available)
    func inspectShowsBackendAndRowCounts(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run(["inspect", "--store", url])
            #expect(result.status == 0, "\(result)")
            #expect(result.hasRow("backend", backend.rawValue), "\(result)")
            #expect(result.rows.contains { $0.first == "todoitem" && $0.dropFirst().first == "3" }, "\(result)")
        }
    }

    @Test(arguments: Backend.available)
    func queryPrintsJSONLinesAndCounts(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run([
                "query", "--store", url, "--table", "todoitem", "--skip", "1", "--top", "1", "--count", "--format",
                "jsonl",
            ])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == Todo.exported.split(separator: "\n")[1] + "\n", "\(result)")
            #expect(result.stderr.contains("3 matching in all"), "\(result)")
        }
    }

    @Test(arguments: Backend.available)
    func queryPrintsAnAlignedTable(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run(["query", "--store", url, "--table", "todoitem", "--top", "2"])
            #expect(result.status == 0, "\(result)")
            #expect(result.rows.first?.prefix(3) == ["id", "text", "complete"], "\(result)")
            #expect(result.stdout.hasSuffix("2 items\n"), "\(result)")
        }
    }

    /// Groups that open, reopen and share stores, and a short random run: the whole suite runs in
    /// process on every backend (`StoreTierTests`, `SyncTierTests`, `RandomTierTests`), which a
    /// debug build of the command would take minutes to repeat.
    @Test(arguments: Backend.available)
    func conformancePassesAndLeavesNothingBehind(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("conformance", in: directory)
        for arguments in [["--filter", "schema"], ["--filter", "sharing"], ["--tier", "sync", "--filter", "purge"],
            ["--tier", "random", "--steps", "60"]]
        {
            let result = try CLI.run(["conformance", "--store", url] + arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(result.stdout.contains(" 0 failed, "), "\(arguments): \(result)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }
}

@Suite("offline-sync logging")
struct CLILoggingTests {
    @Test(arguments: Backend.available)
    func verboseLogsStepsButNeverItemContents(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            for arguments in [["export", "--table", "todoitem"], ["query", "--table", "todoitem"], ["inspect"]] {
                let result = try CLI.run(arguments + ["--store", url, "--verbose"])
                #expect(result.status == 0, "\(result)")
                #expect(result.stderr.contains("opening \(backend.rawValue):"), "\(arguments): \(result)")
                for secret in ["Buy milk", "Walk the dog", CLI.key] {
                    #expect(!result.stderr.contains(secret), "\(arguments) logged '\(secret)': \(result.stderr)")
                }
            }
        }
    }
}

@Suite("offline-sync query with OData")
struct CLIQueryTests {
    @Test(arguments: Backend.available)
    func filterAndOrderByFollowTheReferenceSemantics(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run([
                "query", "--store", url, "--table", "todoitem", "--filter", "complete eq false or priority ge 1",
                "--orderby", "priority desc", "--format", "jsonl",
            ])
            #expect(result.status == 0, "\(result)")
            let ids = result.stdout.split(separator: "\n").compactMap { $0.split(separator: "\"").dropFirst(3).first }
            #expect(ids == ["a", "b", "c"], "nulls last when descending: \(result)")
        }
    }

    @Test(arguments: Backend.available)
    func jsonFormatWrapsItemsWithTheCount(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run([
                "query", "--store", url, "--table", "todoitem", "--filter", "startswith(text, 'Walk')",
                "--count", "--format", "json",
            ])
            #expect(result.status == 0, "\(result)")
            let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(document?["count"] as? Int == 1, "\(result)")
            #expect((document?["results"] as? [[String: Any]])?.first?["id"] as? String == "b", "\(result)")
        }
    }

    @Test(arguments: Backend.available)
    func malformedFilterShowsThePosition(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let filter = "text eq 'a' and and complete"
            let result = try CLI.run(["query", "--store", url, "--table", "todoitem", "--filter", filter])
            #expect(result.status == 1)
            #expect(result.stderr.contains("at column 17"), "\(result)")
            #expect(
                result.stderr.contains("    \(filter)\n    " + String(repeating: " ", count: 16) + "^"), "\(result)")
        }
    }

    @Test(arguments: Backend.available)
    func theTableFormatShowsControlCharactersEscaped(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = backend.url("store", in: directory)
        let schema = try directory.write("schema.json", Todo.schema)
        let file = try directory.write(
            "escapes.jsonl",
            #"{"id":"esc\u0007id","text":"red\u001b[31mRED\u0007bell\r\nnewline\ttab\u007f\u009b2J","complete":true}"#)
        let imported = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported)")

        let result = try CLI.run(["query", "--store", url, "--table", "todoitem"])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout.contains(#"esc\u{7}id"#) && result.stdout.contains(#"red\u{1B}[31mRED\u{7}bell\r\nnewline\ttab"#),
            "\(result)")
        let controls = result.stdout.unicodeScalars.filter { $0 != "\n" && $0.properties.generalCategory == .control }
        #expect(controls.isEmpty, "raw control characters in the table: \(result.stdout.debugDescription)")
        #expect(result.stdout.split(separator: "\n").count == 4, "header, rule, one row, count: \(result)")

        let json = try CLI.run(["query", "--store", url, "--table", "todoitem", "--format", "jsonl"])
        #expect(json.status == 0, "\(json)")
        #expect(
            !json.stdout.dropLast().unicodeScalars.contains { $0.value < 0x20 },
            "JSON escapes the C0 control characters by itself: \(json.stdout.debugDescription)")
    }

    @Test func inspectShowsControlCharactersInTheStorePathEscaped() throws {
        let directory = try TemporaryDirectory()
        let url = "sqlite:" + directory.path("odd\u{1B}[2Jname\n.sqlite")
        let schema = try directory.write("schema.json", Todo.schema)
        let file = try directory.write("todo.jsonl", Todo.lines)
        let imported = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported)")

        let result = try CLI.run(["inspect", "--store", url])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains(#"odd\u{1B}[2Jname\n.sqlite"#), "\(result)")
        #expect(!result.stdout.contains("\u{1B}"), "a raw escape character in: \(result.stdout.debugDescription)")
    }

    @Test(arguments: Backend.available)
    func jsonlPrintsNothingWhenNothingMatches(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            for extra in [["--filter", "text eq 'nomatch'"], ["--top", "0"]] {
                let result = try CLI.run(["query", "--store", url, "--table", "todoitem", "--format", "jsonl"] + extra)
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.isEmpty, "\(extra): \(result.stdout.debugDescription)")
            }
            let one = try CLI.run(["query", "--store", url, "--table", "todoitem", "--format", "jsonl", "--top", "1"])
            #expect(one.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 2, "\(one)")
            #expect(one.stdout.hasSuffix("}\n"), "\(one)")
        }
    }

    @Test(arguments: Backend.available)
    func unknownColumnInTheFilterIsNamed(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run(["query", "--store", url, "--table", "todoitem", "--filter", "colour eq 'red'"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("column 'colour'"), "\(result)")
        }
    }
}

@Suite("offline-sync with SQLCipher keys")
struct CLIKeyTests {
    static let otherKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

    static var sqlcipher: [Backend] { Backend.available.filter { $0 == .sqlcipher } }

    @Test(arguments: sqlcipher)
    func wrongKeyIsReportedWithoutShowingAnyKey(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { _, url in
            let result = try CLI.run(
                ["export", "--store", url, "--table", "todoitem"], environment: [CLI.keyVariable: CLIKeyTests.otherKey])
            #expect(result.status == 1)
            #expect(result.stderr.lowercased().contains("wrong key"), "\(result)")
            #expect(!result.stderr.contains(CLIKeyTests.otherKey) && !result.stderr.contains(CLI.key), "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test(arguments: sqlcipher)
    func keyFromAFileOpensTheStore(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { directory, url in
            let keyFile = try directory.write("store.key", CLI.key + "\n")
            let fromFile = "sqlcipher:\(directory.path("store.db"))?key-file=\(keyFile)"
            let result = try CLI.run(["export", "--store", fromFile, "--table", "todoitem"])
            #expect(result.stdout == Todo.exported, "\(result)")
        }
    }

    @Test(arguments: sqlcipher)
    func rekeyChangesTheKeyAndTheOldOneStopsWorking(backend: Backend) throws {
        try Todo.withImportedStore(on: backend) { directory, url in
            let rekey = try CLI.run(
                ["rekey", "--store", url, "--new-key-env", "NEW_STORE_KEY"],
                environment: ["NEW_STORE_KEY": CLIKeyTests.otherKey])
            #expect(rekey.status == 0, "\(rekey)")
            #expect(rekey.stdout.contains("key-env=NEW_STORE_KEY"), "\(rekey)")
            #expect(!rekey.stdout.contains(CLIKeyTests.otherKey) && !rekey.stderr.contains(CLIKeyTests.otherKey))

            let newURL = "sqlcipher:\(directory.path("store.db"))?key-env=NEW_STORE_KEY"
            let withNew = try CLI.run(
                ["export", "--store", newURL, "--table", "todoitem"],
                environment: ["NEW_STORE_KEY": CLIKeyTests.otherKey])
            #expect(withNew.stdout == Todo.exported, "\(withNew)")
            let withOld = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(withOld.status == 1, "\(withOld)")
        }
    }

    @Test(arguments: sqlcipher)
    func unsetKeyVariableIsNamed(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let url = "sqlcipher:\(directory.path("store.db"))?key-env=OFFLINE_SYNC_UNSET_KEY"
        let schema = try directory.write("schema.json", Todo.schema)
        let file = try directory.write("todo.jsonl", Todo.lines)
        let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
        #expect(result.status == 1)
        #expect(result.stderr.contains("OFFLINE_SYNC_UNSET_KEY"), "\(result)")
    }
}

@Suite("offline-sync import of empty input")
struct CLIImportEmptyInputTests {
    @Test(arguments: Backend.available)
    func devNullImportsNothingLikeAnEmptyFile(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let schema = try directory.write("schema.json", Todo.schema)
        let empty = try directory.write("empty.jsonl", "")
        for (name, file) in [("regular", empty), ("device", "/dev/null")] {
            let url = backend.url(name, in: directory)
            let result = try CLI.run(["import", "--store", url, "--table", "todoitem", "--file", file, "--schema", schema])
            #expect(result.status == 0, "\(file): \(result)")
            #expect(result.stdout == "imported 0 items into todoitem\n", "\(file): \(result)")
            let export = try CLI.run(["export", "--store", url, "--table", "todoitem"])
            #expect(export.status == 0 && export.stdout.isEmpty, "\(file): \(export)")
        }
        let missing = try CLI.run([
            "import", "--store", backend.url("missing", in: directory), "--table", "todoitem", "--file",
            directory.path("no-such.jsonl"), "--schema", schema,
        ])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read the file"), "\(missing)")
    }
}

@Suite("offline-sync import refuses system tables")
struct CLIImportSystemTableTests {
    @Test(arguments: Backend.available, ["__operations", "__errors", "__config"])
    func importIntoASystemTableIsRefusedAndLeavesTheStoreAsItWas(backend: Backend, table: String) throws {
        try Todo.withImportedStore(on: backend) { directory, url in
            let file = try directory.write(
                "queue.jsonl", #"{"id":"1","table":"todoitem","itemId":"a","kind":"insert","sequence":1}"#)
            let result = try CLI.run(["import", "--store", url, "--table", table, "--file", file])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("'\(table)' is a system table"), "\(result)")
            #expect(result.stderr.contains("nothing was imported"), "\(result)")
            let inspect = try CLI.run(["inspect", "--store", url])
            #expect(inspect.stdout.contains("no pending operations"), "\(inspect)")
        }
    }
}
