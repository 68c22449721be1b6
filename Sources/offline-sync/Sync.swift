import ArgumentParser
import Foundation
import Logging
import OfflineSync
import OfflineSyncService
import OfflineSyncHTTP
import Synchronization

/// `offline-sync sync`: pulls a table from any server of the table protocol into a local store
/// (and pushes its pending edits first with `--push`), with a progress bar.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pull a table from a table-protocol server into a local store (and push pending edits).",
        discussion: """
            Syncs --table of the store with the server at --remote (an 'offline-sync serve', an Azure Mobile Apps \
            server, or any server of the table protocol 2.0.0). With --query-id the pull is incremental: only \
            records changed since the last pull with that id are fetched. With --push the store's queued edits \
            are pushed first (a pull of a table with queued edits always pushes them first). The table's \
            columns come from the store when it declares the table, else from --schema, else from the types of \
            the values of the server's first records (while the server's table is empty, nothing is declared). \
            Without --schema, columns that pulled records carry and the table does not declare are declared \
            after the pull, which then runs again to store their values (fields whose names cannot be columns \
            are named and left out). A \
            progress bar is drawn on standard error when it is a terminal; 'query', 'inspect' and 'export' then \
            work on what was pulled.

            A queued edit the server refuses as a conflict (409 or 412: another device changed the item) stops \
            the sync before the pull, and stays queued with its error ('inspect' lists them), unless --resolve \
            says who wins: 'local' sends the local copy again over the server's, 'server' replaces the local copy \
            with the server's. An edit the server already holds as sent (its first push was cut short before the \
            answer arrived) is never a conflict.

            With --watch the command keeps the store in sync until interrupted (Ctrl-C or SIGTERM stop it \
            cleanly): it pushes edits queued meanwhile, pulls the table as soon as the server announces a \
            change (GET /changes, the change stream of 'offline-sync serve'), on every reconnection, and every \
            --poll-interval seconds against a server without the stream (an Azure server), retries failures \
            with back-off, and prints one status line per change of state. Without --query-id, --watch pulls \
            incrementally under the query id 'watch'.

            A server started with --auth-* needs a token: --token-env VAR sends the token in that environment \
            variable, --token-file PATH reads it from the file before each request and again after a 401 (so \
            another program can renew it), as 'Authorization: Bearer' or, with --token-header zumo, as \
            'X-ZUMO-AUTH'.

            Examples:
              offline-sync sync --store sqlite:./app.sqlite \\
                --remote http://127.0.0.1:8080 --table todoitem
              offline-sync sync --store sqlite:./app.sqlite \\
                --remote http://127.0.0.1:8080 --table todoitem --watch
              TOKEN=$(offline-sync token --secret-env AUTH_SECRET --subject alice) \\
                offline-sync sync --store sqlite:./app.sqlite \\
                --remote http://127.0.0.1:8080 --table todoitem --token-env TOKEN
              offline-sync sync --store lmdb:./app.lmdb \\
                --remote http://127.0.0.1:8080 --table todoitem --query-id all --push
              offline-sync sync --store lmdb:./app.lmdb \\
                --remote http://127.0.0.1:8080 --table todoitem --resolve local
            """)

    /// Who wins a conflict between a queued edit and the server's copy.
    enum ConflictWinner: String, ExpressibleByArgument, CaseIterable {
        /// The local copy is sent again with the server's version (`ClientWinsPushHandler`).
        case local
        /// The server's copy replaces the local one (`ServerWinsPushHandler`).
        case server
    }

    /// The header a token goes in.
    enum TokenHeader: String, ExpressibleByArgument, CaseIterable {
        /// `Authorization: Bearer <token>`.
        case bearer
        /// `X-ZUMO-AUTH: <token>` (App Service authentication).
        case zumo
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection

    @Option(help: "The server's base URL (http or https).")
    var remote: String

    @Option(help: "The table to pull.")
    var table: String

    @Option(help: "Name of an incremental pull: only records changed since the last pull with this id are fetched.")
    var queryId: String?

    @Flag(help: "Push the store's queued edits before pulling.")
    var push = false

    @Option(
        help: ArgumentHelp(
            "A JSON schema file declaring the table (the format of 'import --schema').", valueName: "file"))
    var schema: String?

    @Option(help: "Records asked for per request (the server may cap it).")
    var pageSize = 1000

    @Option(
        help: ArgumentHelp(
            "Who wins when the server refuses a queued edit as a conflict: 'local' (the local copy overwrites the server's) or 'server' (the server's copy replaces the local one). Without it a conflict stops the sync.",
            valueName: "local|server"))
    var resolve: ConflictWinner?

    @Flag(
        help:
            "Keep syncing until interrupted: push edits, pull on the server's change announcements (or every --poll-interval seconds), one status line per change of state."
    )
    var watch = false

    @Option(help: "With --watch, the seconds between pulls when the server has no change stream.")
    var pollInterval: Double = 30

    @Option(
        help: ArgumentHelp(
            "Send the token held in this environment variable (for a server started with --auth-*).", valueName: "VAR"))
    var tokenEnv: String?

    @Option(
        help: ArgumentHelp(
            "Read the token from this file before each request and again after a 401 (surrounding whitespace ignored).",
            valueName: "path"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("The header carrying the token: 'bearer' (Authorization: Bearer) or 'zumo' (X-ZUMO-AUTH).", valueName: "bearer|zumo"))
    var tokenHeader: TokenHeader = .bearer

    func validate() throws {
        try RemoteURLOption.validate(remote, option: "--remote")
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more") }
        guard tokenEnv == nil || tokenFile == nil else {
            throw ValidationError("give the token with one of --token-env VAR and --token-file PATH, not both")
        }
        guard pollInterval >= 0.1, pollInterval <= 86_400 else {
            throw ValidationError("--poll-interval must be between 0.1 and 86400 seconds")
        }
        if let tokenEnv {
            guard let token = ProcessInfo.processInfo.environment[tokenEnv], !token.isEmpty else {
                throw ValidationError("--token-env \(tokenEnv): the environment variable is not set or empty")
            }
        }
    }

    func run() async throws {
        let logger = global.start("sync")
        let configuration = try selection.configuration()
        let remoteConfiguration = try self.remoteConfiguration()
        let httpRemote = try HTTPRemote(configuration: remoteConfiguration)
        do {
            try await sync(configuration, httpRemote, logger: logger)
            try await httpRemote.shutdown()
        } catch {
            try? await httpRemote.shutdown()
            throw RemoteURLOption.tlsMismatch(error, url: remote) ?? error
        }
    }

    /// The remote's configuration: the base URL and the token options.
    func remoteConfiguration() throws -> HTTPRemote.Configuration {
        var configuration = HTTPRemote.Configuration(baseURL: remote)
        let header = tokenHeader
        func authentication(_ token: @escaping @Sendable () async throws -> String) -> HTTPAuthentication {
            switch header {
            case .bearer: return .bearer(token: token, refresh: { try await token() })
            case .zumo: return .zumo(token: token, refresh: { try await token() })
            }
        }
        if let tokenEnv {
            let token = ProcessInfo.processInfo.environment[tokenEnv] ?? ""
            configuration.authentication = authentication { token }
        } else if let tokenFile {
            _ = try Self.readToken(tokenFile)
            configuration.authentication = authentication { try Self.readToken(tokenFile) }
        }
        return configuration
    }

    /// The token in `path`, without surrounding whitespace.
    static func readToken(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--token-file \(path) cannot be read")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("--token-file \(path) is empty") }
        return token
    }

    private func sync(_ configuration: StoreConfiguration, _ remote: HTTPRemote, logger: Logger) async throws {
        let store = try StoreAccess.open(configuration, schema: StoreSchema([]), logger: logger)
        defer { try? store.close() }
        guard let declared = try await tableSchema(stored: try store.schema, remote: remote) else {
            // Declaring the table now, without columns, would drop every column of the records
            // later syncs pull (a declared table keeps its columns).
            var output = StandardOutput()
            output.write(
                "pulled 0 records of \(table): the server's table is empty, so its columns cannot be learned and the store does not declare it yet (nothing was pushed); the first sync that finds records declares it, or give --schema\n"
            )
            output.flush()
            return
        }
        try store.close()
        // Without a schema file, columns the records pulled carry and the table does not declare
        // (the sample declaring it is one page; the server's table may have grown since) are
        // declared after the pull, which then runs again to fill them.
        let watcher = schema == nil ? ColumnWatchingRemote(remote, table: declared) : nil
        let handler: any PushHandler =
            switch resolve {
            case .local: ClientWinsPushHandler()
            case .server: ServerWinsPushHandler()
            case nil: DefaultPushHandler()
            }
        var context = try SyncContext(
            store: store, remote: watcher ?? remote, tables: [declared], pushHandler: handler)
        defer { try? context.close() }
        var output = StandardOutput()
        if push {
            let pushed = try await context.push()
            output.write(
                "pushed \(pushed.completedCount) operations"
                    + (pushed.errors.isEmpty ? "" : ", \(pushed.errors.count) refused (see 'inspect')") + "\n")
        }
        // The count only sizes the progress bar: it is asked for only when the bar is drawn, and a
        // server that cannot count (refuses `$top=0`, answers no readable count) only loses the bar.
        var total = 0
        if isatty(STDERR_FILENO) == 1 {
            let counted = try? await remote.readPage(
                Query(table: table, top: 0, includeTotalCount: true), includeDeleted: true)
            total = counted?.totalCount ?? 0
        }
        var result = try await pull(context, total: total, output: &output)
        var widened = declared
        // Each round declares what the previous pull found; two rounds see every record, a third
        // only what the server's table gained meanwhile.
        for _ in 0..<3 {
            guard let watcher else { break }
            let (added, unstorable) = watcher.takeNewColumns()
            if !unstorable.isEmpty {
                output.write(
                    "the pulled records of \(table) carry \(unstorable.count) fields no local table can declare as columns, so their values are not stored: "
                        + unstorable.prefix(10).map { "'\($0.prefix(40))'" }.joined(separator: ", ")
                        + (unstorable.count > 10 ? ", …" : "")
                        + " (a column name is letters, digits and '_', not starting with a digit, unique whatever the letter case)\n")
            }
            if added.isEmpty { break }
            let list =
                added.prefix(10).map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", ")
                + (added.count > 10 ? ", …" : "")
            let columns = "\(added.count) more \(added.count == 1 ? "column" : "columns") of \(table) found in the pulled records (\(list))"
            // The token is reset before the table is widened: a sync killed in between then
            // pulls everything again next time and learns the columns anew, where a widened table
            // with its token at the end would never be refilled.
            if let queryId = pulledQueryId { try await context.resetDeltaToken(table: table, queryId: queryId) }
            try context.close()
            let wider = TableSchema(widened.name, columns: widened.columns + added, indexes: widened.indexes)
            do {
                context = try SyncContext(store: store, remote: watcher, tables: [wider], pushHandler: handler)
            } catch {
                // The store cannot hold the wider table (more columns than SQLite or PostgreSQL
                // allow): what was pulled stays, and the sync says which values it leaves out.
                context = try SyncContext(store: store, remote: watcher, tables: [widened], pushHandler: handler)
                output.write("could not declare \(columns), so their values are not stored: \(error)\n")
                // The token was reset: pull again to bring it back (every sync of such a table
                // pulls all of it twice; a schema file declaring the columns wanted avoids that).
                if pulledQueryId != nil { result = try await pull(context, total: total, output: &output) }
                break
            }
            widened = wider
            output.write("declared \(columns); pulling again to store their values\n")
            result = try await pull(context, total: total, output: &output)
        }
        output.write(
            "pulled \(counted(result.received, "record")) of \(table) in \(counted(result.requests, "request")): \(result.stored) stored, \(result.deleted) removed, \(result.skippedPending) kept for pending edits\n"
        )
        output.flush()
        if watch { try await SyncWatch(command: self).run(context) }
    }

    /// The query id of the pulls: `--query-id`, or `watch` with `--watch` (which pulls incrementally).
    var pulledQueryId: String? { queryId ?? (watch ? "watch" : nil) }

    /// Pulls the table through `context`, with a progress bar sized to `total` records.
    private func pull(_ context: SyncContext, total: Int, output: inout StandardOutput) async throws -> PullResult {
        let bar = Locked(ProgressBar("pull \(table)", total: total))
        let options = PullOptions(pageSize: pageSize) { progress in
            bar.withLock { $0.update(progress.completed) }
        }
        do {
            let result = try await context.pull(PullRequest(table: table, queryId: pulledQueryId), options: options)
            bar.withLock { $0.finish() }
            return result
        } catch let failure as PushFailure where failure.status == .complete && !failure.result.errors.isEmpty {
            bar.withLock { $0.finish() }
            output.flush()
            throw Self.refused(failure.result.errors, resolving: resolve)
        }
    }

    /// The error of a pull stopped by queued edits the server refused: how many, why, and the
    /// two ways on (none when no refusal is a conflict: `--resolve` settles only conflicts);
    /// after `--resolve` (`winner`), why it did not settle them instead, since running it again
    /// would not either.
    static func refused(_ errors: [OperationError], resolving winner: ConflictWinner? = nil) -> RefusedEdits {
        let conflicts = errors.filter(\.isConflict).count
        let why =
            conflicts == errors.count
            ? "conflicts: the server's copies were changed by another client"
            : "\(conflicts) of them conflicts; 'inspect' shows each reason"
        if let winner {
            let bare = errors.filter { $0.isConflict && $0.serverItem == nil }.count
            let reason =
                bare > 0
                ? "\(bare) of them conflicts whose answer carried no copy of the item, which --resolve \(winner.rawValue) needs"
                : why
            return RefusedEdits(
                description:
                    "the server refused \(errors.count) queued edits even with --resolve \(winner.rawValue) (\(reason)), so nothing was pulled; they stay queued ('inspect' shows each reason). Running again will not settle them: check what the server answers to these writes"
            )
        }
        if conflicts == 0 {
            // --resolve settles conflicts only; advising it for other refusals sends users in a circle.
            return RefusedEdits(
                description:
                    "the server refused \(errors.count) queued edits, none of them a conflict ('inspect' shows each reason), so nothing was pulled; they stay queued. --resolve settles only conflicts: correct what the server refuses and sync again"
            )
        }
        return RefusedEdits(
            description: "the server refused \(errors.count) queued edits (\(why)), so nothing was pulled; they stay queued ('inspect' lists them). Run again with --resolve local to send the local copies over the server's, or --resolve server to replace them with the server's copies"
        )
    }

    /// Queued edits the server refused stopped the sync (see ``refused(_:resolving:)``).
    struct RefusedEdits: Error, CustomStringConvertible {
        let description: String
    }

    /// The table's declaration: the store's, the schema file's, or one inferred from the server's
    /// first records; `nil` when there is none and the server's table has no records to infer
    /// one from.
    private func tableSchema(stored: StoreSchema, remote: HTTPRemote) async throws -> TableSchema? {
        if let declared = stored.table(named: table) { return declared }
        if let schema {
            guard let declared = try SchemaFile.load(schema).table(named: table) else {
                throw ValidationError("the schema file \(schema) does not declare table '\(table)'")
            }
            return declared
        }
        let sample = try await remote.readPage(Query(table: table, top: 200), includeDeleted: true).items
        if sample.isEmpty { return nil }
        var columns = LearnedColumns()
        columns.note(sample)
        return TableService.served(TableSchema(table, columns: columns.take()))
    }
}
