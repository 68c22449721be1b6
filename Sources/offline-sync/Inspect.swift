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

        var tables = TextTable(headers: ["table", "rows", "columns"])
        for table in StoreAccess.userTables(schema) {
            tables.rows.append([table.name, String(try store.count(table.name)), String(table.columns.count + 1)])
        }
        var system = TextTable(headers: ["system table", "rows"])
        for table in schema.tables where table.isSystem {
            system.rows.append([table.name, String(try store.count(table.name))])
        }
        var sections = [TextTable.pairs(facts)]
        sections.append(tables.rows.isEmpty ? "no tables" : tables.rendered)
        if !system.rows.isEmpty { sections.append(system.rendered) }
        return sections.joined(separator: "\n\n")
    }
}
