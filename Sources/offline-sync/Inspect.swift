import ArgumentParser
import OfflineSync

/// `offline-sync inspect`: what a store holds.
struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's backend, library versions, tables with row counts, and sync state.",
        discussion: """
            Prints the backend and its versions and settings, every table with its row count, the \
            pending operations per table, operation errors and delta tokens. Item contents are not shown.

            Examples:
              offline-sync inspect --store sqlite:./.offline-sync/store.sqlite
              offline-sync inspect --store "sqlcipher:./secret.db?key-env=STORE_KEY"
              offline-sync inspect --store lmdb:./data/store.lmdb
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection

    func run() async throws {
        let logger = global.start("inspect")
        let configuration = try selection.configuration()
        let (store, schema) = try StoreAccess.openExisting(configuration, logger: logger)
        defer { try? store.close() }
        print(try Inspect.report(store: store, schema: schema, configuration: configuration))
    }

    static func report(store: any LocalStore, schema: StoreSchema, configuration: StoreConfiguration) throws -> String {
        let info = store.info
        var facts = [("store", configuration.description), ("backend", info.backend)]
        if let location = info.location { facts.append(("location", location)) }
        facts += info.properties.map { ($0.name, $0.value) }
        let state = try SyncState(of: store)

        var tables = TextTable(headers: ["table", "rows", "pending", "errors", "columns"])
        for table in StoreAccess.userTables(schema) {
            tables.rows.append([
                table.name, String(try store.count(table.name)), String(state.pendingCount(table: table.name)),
                String(state.errorCount(table: table.name)), String(table.columns.count + 1),
            ])
        }
        var sections = [TextTable.pairs(facts), tables.rows.isEmpty ? "no tables" : tables.rendered]

        var system = TextTable(headers: ["system table", "rows"])
        for table in schema.tables where table.isSystem {
            system.rows.append([table.name, String(try store.count(table.name))])
        }
        if !system.rows.isEmpty { sections.append(system.rendered) }

        if state.operations.isEmpty {
            sections.append("no pending operations")
        } else {
            var queue = TextTable(headers: ["pending (push order)", "kind", "table", "item", "state", "queued at"])
            queue.rows = state.operations.map {
                [String($0.sequence), $0.kind.rawValue, $0.table, $0.itemId, $0.state.rawValue, $0.createdAt.iso8601]
            }
            sections.append(queue.rendered)
        }
        if state.errors.isEmpty {
            sections.append("no operation errors")
        } else {
            var errors = TextTable(headers: ["operation error", "kind", "table", "item", "status", "message"])
            errors.rows = state.errors.map {
                [
                    String($0.sequence), $0.kind.rawValue, $0.table, $0.itemId, $0.status.map(String.init) ?? $0.reason,
                    $0.message,
                ]
            }
            sections.append(errors.rendered)
        }
        if state.deltaTokens.isEmpty {
            sections.append("no delta tokens")
        } else {
            var tokens = TextTable(headers: ["delta token", "query id", "updatedAt", "after item"])
            tokens.rows = state.deltaTokens.map {
                [$0.table, $0.queryId, $0.token.updatedAt.iso8601, $0.token.itemId ?? ""]
            }
            sections.append(tokens.rendered)
        }
        return sections.joined(separator: "\n\n")
    }
}
