import ArgumentParser
import Foundation
import Logging
import OfflineSync
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
            the values of the server's first records. A progress bar is drawn on standard error when it is a \
            terminal; 'query', 'inspect' and 'export' then work on what was pulled.

            Examples:
              offline-sync sync --store sqlite:./app.sqlite --remote http://127.0.0.1:8080 --table todoitem
              offline-sync sync --store lmdb:./app.lmdb --remote http://127.0.0.1:8080 --table todoitem \\
                --query-id all --push
            """)

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

    func validate() throws {
        try RemoteURLOption.validate(remote, option: "--remote")
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more") }
    }

    func run() async throws {
        let logger = global.start("sync")
        let configuration = try selection.configuration()
        let httpRemote = try HTTPRemote(configuration: .init(baseURL: remote))
        do {
            try await sync(configuration, httpRemote, logger: logger)
            try await httpRemote.shutdown()
        } catch {
            try? await httpRemote.shutdown()
            throw error
        }
    }

    private func sync(_ configuration: StoreConfiguration, _ remote: HTTPRemote, logger: Logger) async throws {
        let store = try StoreAccess.open(configuration, schema: StoreSchema([]), logger: logger)
        defer { try? store.close() }
        let declared = try await tableSchema(stored: try store.schema, remote: remote)
        try store.close()
        let context = try SyncContext(store: store, remote: remote, tables: [declared])
        var output = StandardOutput()
        if push {
            let pushed = try await context.push()
            output.write(
                "pushed \(pushed.completedCount) operations"
                    + (pushed.errors.isEmpty ? "" : ", \(pushed.errors.count) failed (see 'inspect')") + "\n")
        }
        let total =
            try await remote.readPage(
                Query(table: table, top: 0, includeTotalCount: true), includeDeleted: true
            ).totalCount ?? 0
        let bar = Locked(ProgressBar("pull \(table)", total: total))
        let options = PullOptions(pageSize: pageSize) { progress in
            bar.withLock { $0.update(progress.completed) }
        }
        let result = try await context.pull(PullRequest(table: table, queryId: queryId), options: options)
        bar.withLock { $0.finish() }
        output.write(
            "pulled \(result.received) records of \(table) in \(result.requests) requests: \(result.stored) stored, \(result.deleted) removed, \(result.skippedPending) kept for pending edits\n"
        )
        output.flush()
    }

    /// The table's declaration: the store's, the schema file's, or one inferred from the server's
    /// first records.
    private func tableSchema(stored: StoreSchema, remote: HTTPRemote) async throws -> TableSchema {
        if let declared = stored.table(named: table) { return declared }
        if let schema {
            guard let declared = try SchemaFile.load(schema).table(named: table) else {
                throw ValidationError("the schema file \(schema) does not declare table '\(table)'")
            }
            return declared
        }
        let sample = try await remote.readPage(Query(table: table, top: 200), includeDeleted: true).items
        var columns: [String: ColumnType] = [:]
        for item in sample {
            for (name, value) in item.values where SystemProperty(rawValue: name) == nil && name != "id" {
                guard let type = value.type else { continue }
                switch (columns[name], type) {
                case (nil, _): columns[name] = type
                case (.integer?, .double), (.double?, .integer): columns[name] = .double
                default: break
                }
            }
        }
        return TableService.served(
            TableSchema(table, columns: columns.keys.sorted().map { Column($0, columns[$0]!) }))
    }
}
