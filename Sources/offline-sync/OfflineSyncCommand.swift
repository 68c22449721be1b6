import ArgumentParser
import OfflineSync

/// The `offline-sync` command: one subcommand per file in this directory.
@main
struct OfflineSyncCommand: AsyncParsableCommand {
    /// Runs the command as `AsyncParsableCommand.main()` does, except that an error a subcommand
    /// throws is printed with its control characters escaped: messages quote ids, names and text
    /// from stores and servers, which must not break the line or drive the terminal. Errors of
    /// the command line itself (help, usage) are ArgumentParser's, printed as it prints them,
    /// except a misspelt subcommand, which ``SubcommandCheck`` names before ArgumentParser reads
    /// the line, and a negative number given to an option (``NegativeValueCheck``).
    static func main() async {
        var command: any ParsableCommand
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let error = SubcommandCheck.error(in: arguments, of: Self.self) {
            exit(withError: error)
        }
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: NegativeValueCheck.error(in: arguments, message: message(for: error)) ?? error)
        }
        MappedFileFault.install()
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: displayable(error))
        }
    }

    /// `error`, or an error with the same text with its control characters escaped when the text
    /// has any, line by line: the line breaks of a message (a filter error's caret line) stay.
    /// Exit requests (`ExitCode`, `CleanExit`) and usage errors pass unchanged.
    static func displayable(_ error: any Error) -> any Error {
        if error is ExitCode || error is CleanExit || error is ValidationError { return error }
        let text = String(describing: error)
        let escaped = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)).escapingControlCharacters }
            .joined(separator: "\n")
        return escaped == text ? error : EscapedError(description: escaped)
    }

    /// An error whose text was escaped for the terminal (see ``displayable(_:)``).
    struct EscapedError: Error, CustomStringConvertible {
        let description: String
    }

    static let configuration = CommandConfiguration(
        commandName: "offline-sync",
        abstract:
            "Work with OfflineSync stores: demo, conformance, inspect, query, import, export, migrate, rekey, serve, sync, token.",
        discussion: """
            A store is named by a URL-like string:
              memory:                                      an in-memory store
              sqlite:PATH[?sync=full|normal]               an SQLite file
              sqlcipher:PATH?key-env=VAR | key-file=PATH   an encrypted SQLite file
              lmdb:PATH[?map-size=1GiB&max-map-size=16GiB&sync=full|meta|none]
            Keys are never written in the URL: key-env names an environment variable and key-file a \
            file that holds 64 hex digits (a raw key) or a passphrase. \
            Without --store, OFFLINE_SYNC_STORE is used, then \(StoreSelection.builtInDefault).

            Examples:
              offline-sync demo --store sqlite:/tmp/demo.sqlite
              offline-sync inspect --store lmdb:./data/store.lmdb
              offline-sync query --store sqlite:./app.sqlite --table todoitem \\
                --filter "complete eq false"
            """,
        subcommands: [
            Demo.self, Conformance.self, Inspect.self, QueryCommand.self, Import.self, Export.self,
            Migrate.self, Rekey.self, Bench.self, Serve.self, Sync.self, BenchServe.self, BenchChanges.self, Token.self,
        ]
    )
}
