import Foundation
import Testing

@Suite("offline-sync: help and bad input")
struct CLICommonTests {
    static let subcommands = [
        "demo", "conformance", "inspect", "query", "import", "export", "migrate", "rekey", "bench",
    ]

    @Test(arguments: subcommands)
    func everySubcommandHasHelpWithExamples(subcommand: String) throws {
        let result = try CLI.run([subcommand, "--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("USAGE: offline-sync \(subcommand)"), "\(result)")
        #expect(result.stdout.contains("Example"), "\(result)")
        #expect(result.stdout.contains("offline-sync \(subcommand)"), "\(result)")
    }

    @Test func errorMessagesShowControlCharactersEscaped() throws {
        // An error quoting text that came from outside (here a table name) cannot drive the
        // terminal: its escape sequence is printed as `\u{1B}`, and the exit code stays 1.
        let result = try CLI.run(["query", "--store", "memory:", "--table", "bad\u{1B}[31mname"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains(#"bad\u{1B}[31mname"#), "\(result)")
        #expect(!result.stderr.contains("\u{1B}"), "\(result)")
        // Usage errors stay ArgumentParser's own.
        let usage = try CLI.run(["query", "--store", "memory:"])
        #expect(usage.status == 64, "\(usage)")
        #expect(usage.stderr.contains("Usage:"), "\(usage)")
    }

    @Test func topLevelHelpListsEverySubcommand() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0)
        for subcommand in CLICommonTests.subcommands {
            #expect(result.stdout.contains("  \(subcommand) "), "missing \(subcommand) in\n\(result.stdout)")
        }
    }

    @Test func unknownSchemeFailsListingTheKnownOnes() throws {
        let result = try CLI.run(["inspect", "--store", "oracle:/tmp/db"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("unknown store scheme 'oracle'"), "\(result)")
        #expect(result.stderr.contains("memory:, sqlite:, sqlcipher:, lmdb:, postgres:"), "\(result)")
    }

    @Test func inlineKeyIsRefusedAndNotEchoed() throws {
        let result = try CLI.run(["inspect", "--store", "sqlcipher:/tmp/x.db?key=topsecret-value"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("key-env=VAR"), "\(result)")
        #expect(!result.stderr.contains("topsecret-value"), "\(result)")
        #expect(!result.stdout.contains("topsecret-value"), "\(result)")
    }

    @Test func unknownOptionIsNamed() throws {
        let result = try CLI.run(["inspect", "--store", "lmdb:/tmp/x.lmdb?mapsize=1GiB"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no option 'mapsize'"), "\(result)")
        #expect(result.stderr.contains("map-size, max-map-size, sync"), "\(result)")
    }

    @Test func environmentVariableSetsTheDefaultStore() throws {
        let result = try CLI.run(["inspect"], environment: ["OFFLINE_SYNC_STORE": "memory:"])
        #expect(result.status == 0, "\(result)")
        #expect(result.hasRow("store", "memory:"), "\(result)")
    }

    @Test func defaultStoreIsAnSQLiteFileInTheWorkingDirectory() throws {
        let directory = try TemporaryDirectory()
        let result = try CLI.run(["inspect"], in: directory.url)
        #expect(result.status == 1)
        #expect(result.stderr.contains("no store at ./.offline-sync/store.sqlite (sqlite:)"), "\(result)")
        let demo = try CLI.run(["import", "--help"], in: directory.url)
        #expect(demo.stdout.contains("sqlite:./.offline-sync/store.sqlite"), "\(demo)")
    }

    @Test func badEnvironmentStoreIsReportedAsSuch() throws {
        let result = try CLI.run(["inspect"], environment: ["OFFLINE_SYNC_STORE": "nosuch:x"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("unknown store scheme 'nosuch'"), "\(result)")
    }

    @Test func inspectOfMemoryShowsTheBackend() throws {
        let result = try CLI.run(["inspect", "--store", "memory:"])
        #expect(result.status == 0, "\(result)")
        #expect(result.hasRow("backend", "memory"), "\(result)")
        #expect(result.stdout.contains("no tables"), "\(result)")
    }

    /// The sync tier: the whole suite runs in process on every backend (`StoreTierTests`,
    /// `SyncTierTests`, `RandomTierTests`); here the command's report is what is tested.
    @Test func conformanceOnMemoryEndsWithTheTotals() throws {
        let result = try CLI.run(["conformance", "--store", "memory:", "--tier", "sync"])
        #expect(result.status == 0, "\(result)")
        let last = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last.range(of: #"^\d+ passed, 0 failed, \d+ skipped$"#, options: .regularExpression) != nil, "\(result)")
    }

    @Test func conformanceFilterMatchingNoGroupFails() throws {
        let result = try CLI.run(["conformance", "--store", "memory:", "--filter", "no-such-group"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no all-tier conformance group matches 'no-such-group'"), "\(result)")
    }

    @Test func badSchemaFileNamesTheFieldAtFault() throws {
        let directory = try TemporaryDirectory()
        let schema = try directory.write(
            "schema.json", #"{"tables": [{"name": "todoitem", "columns": [{"name": "due", "type": "datetime"}]}]}"#)
        let lines = try directory.write("todo.jsonl", #"{"id": "a"}"#)
        let result = try CLI.run([
            "import", "--store", "memory:", "--table", "todoitem", "--file", lines, "--schema", schema,
        ])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("the schema file \(schema) is not valid: .tables[0].columns[0].type"), "\(result)")
        #expect(result.stderr.contains("bool, integer, double, string, date, json"), "\(result)")
    }

    @Test func missingImportFileIsNamed() throws {
        let result = try CLI.run([
            "import", "--store", "memory:", "--table", "todoitem", "--file", "/nonexistent/todo.jsonl",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read the file /nonexistent/todo.jsonl"), "\(result)")
    }

    @Test func rekeyRefusesUnencryptedStores() throws {
        let result = try CLI.run(["rekey", "--store", "memory:", "--new-key-env", "NEW_KEY"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("sqlcipher: stores only"), "\(result)")
    }
}
