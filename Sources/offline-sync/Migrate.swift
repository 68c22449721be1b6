import ArgumentParser
import Foundation
import Logging
import OfflineSync
import OfflineSyncPostgres

/// `offline-sync migrate`: copy a store to another backend.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a whole store to a new store, possibly of another backend.",
        discussion: """
            Copies the schema, every item, the operation queue (in order), operation errors and delta \
            tokens, then checks that every table has the same number of rows on both sides. The new \
            store is built in a temporary location next to the destination and moved into place only \
            when everything was copied and verified, so a failure leaves the destination untouched. \
            The destination must not exist yet, and must keep its data (memory: is refused). A \
            progress bar is drawn on standard error when it is a terminal.

            Examples:
              offline-sync migrate --from sqlite:./app.sqlite \\
                --to "lmdb:./app.lmdb?map-size=1GiB"
              STORE_KEY=$(cat key.hex) offline-sync migrate --from lmdb:./app.lmdb \\
                --to "sqlcipher:./app.db?key-env=STORE_KEY"
              PGPASSWORD=… offline-sync migrate --from sqlite:./app.sqlite \\
                --to "postgres://app@db.internal:5432/appdb?schema=app"

            A postgres: destination is a schema that must not hold a store yet; the copy is built in \
            a scratch schema of the same database and renamed into place.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The store to copy.", valueName: "url")) var from: String
    @Option(help: ArgumentHelp("The new store to create.", valueName: "url")) var to: String

    func run() async throws {
        let logger = global.start("migrate")
        let source = try StoreSelection.parse(from, option: "--from")
        let destination = try StoreSelection.parse(to, option: "--to")
        // A store without a location (memory:) is gone when the command ends: the copy would be
        // reported as made and thrown away.
        guard destination.path != nil else {
            throw OfflineSyncError(
                .configuration,
                "--to \(destination) keeps nothing after the command ends, so the copy would be thrown away; migrate into a store that keeps its data: sqlite:PATH, sqlcipher:PATH?key-env=VAR, lmdb:PATH or postgres://USER@HOST/DB"
            )
        }
        if destination.scheme == StoreScheme.postgres.name {
            let settings = try PostgresConnectionSettings(destination)
            if source.scheme == destination.scheme, try PostgresConnectionSettings(source) == settings {
                throw OfflineSyncError(.configuration, "--from and --to name the same store \(settings); migrate into a new schema")
            }
            if try PostgresStore.storeExists(settings) {
                throw OfflineSyncError(
                    .configuration,
                    "the schema '\(settings.schema)' of \(settings) already holds a store; migrate creates a new store, so drop that schema or choose another with schema=NAME"
                )
            }
        }
        if let path = StoreAccess.filePath(of: destination) {
            if let sourcePath = StoreAccess.filePath(of: source),
                URL(fileURLWithPath: sourcePath).standardized == URL(fileURLWithPath: path).standardized
            {
                throw OfflineSyncError(
                    .configuration, "--from and --to name the same path \(path); migrate into a new location")
            }
            if FileManager.default.fileExists(atPath: path) {
                throw OfflineSyncError(
                    .configuration,
                    "the destination \(path) already exists; migrate creates a new store, so remove it or choose another path"
                )
            }
        }
        let (store, schema) = try StoreAccess.openExisting(source, logger: logger)
        defer { try? store.close() }

        let scratch = try ScratchDirectory(near: StoreAccess.filePath(of: destination), purpose: "migrate")
        defer { scratch.remove() }
        let temporary = try scratch.freshLocation(for: destination)
        let total = try schema.tables.reduce(0) { $0 + (try store.count($1.name)) }
        var progress = ProgressBar("migrating", total: total)
        let counts = try Migrate.copy(store, from: source, schema: schema, to: temporary, logger: logger) {
            progress.update($0)
        }
        progress.finish()
        if destination.scheme == StoreScheme.postgres.name {
            try PostgresStore.renameSchema(
                PostgresConnectionSettings(temporary), to: PostgresConnectionSettings(destination).schema)
        } else if let temporaryPath = temporary.path, let path = destination.path {
            try ScratchDirectory.moveStore(from: temporaryPath, to: path)
        }
        let items = counts.filter { !$0.key.hasPrefix("__") }.values.reduce(0, +)
        let system = counts.filter { $0.key.hasPrefix("__") }.values.reduce(0, +)
        print(
            "migrated \(schema.tables.count) table\(schema.tables.count == 1 ? "" : "s"), \(items) item\(items == 1 ? "" : "s") and \(system) sync record\(system == 1 ? "" : "s") from \(source) to \(destination)"
        )
    }

    /// Copies every table into a new store at `destination` in one transaction, verifies the row
    /// counts and closes it. Returns the row count per table. `progress` is told the number of
    /// rows copied so far (of every table) after each page.
    static func copy(
        _ source: any LocalStore, from sourceConfiguration: StoreConfiguration, schema: StoreSchema,
        to destination: StoreConfiguration,
        logger: Logger, progress: (Int) -> Void = { _ in }
    ) throws -> [String: Int] {
        let target = try StoreAccess.open(destination, schema: schema, logger: logger)
        do {
            var copied = 0
            try target.write { transaction in
                for table in schema.tables {
                    try StoreAccess.forEachPage(of: table.name, in: source, configuration: sourceConfiguration) { page in
                        try StoreAccess.rethrowingStoredValueErrors(sourceConfiguration, table: table.name) {
                            try transaction.upsert(page, into: table.name, origin: .local)
                        }
                        copied += page.count
                        progress(copied)
                    }
                }
            }
            var counts: [String: Int] = [:]
            for table in schema.tables {
                let expected = try source.count(table.name)
                let actual = try target.count(table.name)
                guard expected == actual else {
                    throw StoreAccess.damaged(
                        sourceConfiguration,
                        "table '\(table.name)' counts \(expected) rows but \(actual) were read in id order; the destination was not written"
                    )
                }
                counts[table.name] = actual
                logger.debug("copied \(actual) rows of \(table.name)")
            }
            try target.close()
            return counts
        } catch {
            try? target.close()
            throw error
        }
    }
}
