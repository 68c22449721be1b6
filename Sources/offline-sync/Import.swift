import ArgumentParser
import Foundation
import Logging
import OfflineSync

/// `offline-sync import`: JSON lines into a table, all or nothing.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a JSON-lines file into a table in one transaction: every line or none.",
        discussion: """
            Each line is one JSON object with a string "id" (blank lines are ignored). Every line is \
            read and checked against the table's schema before anything is written; a malformed line, \
            a value that does not fit its column, an unknown column or a repeated id stops the import \
            with the line number, and the store is left as it was. Items are written as they are \
            (upserted by id) without queueing sync operations. Rows of a synced table without an \
            updatedAt are given one, with a version, when `offline-sync serve` next starts on the \
            store, so clients' incremental pulls receive them.

            The table must be declared in the store, or in the schema file given with --schema:
              {"tables": [{"name": "todoitem",
                "columns": [{"name": "text", "type": "string"},
                            {"name": "complete", "type": "bool"}],
                "indexes": [{"name": "by_complete", "columns": ["complete"]}],
                "synced": true}]}
            Column types: bool, integer, double, string, date, json. "id" is implicit; "synced" \
            (default true) adds createdAt, updatedAt, version and deleted. A single table object \
            without the "tables" wrapper is accepted too. The schema widens what the store holds.

            Examples:
              offline-sync import --store sqlite:./app.sqlite --table todoitem \\
                --file todoitem.jsonl --schema schema.json
              offline-sync import --store lmdb:./data/store.lmdb --table todoitem \\
                --file more.jsonl
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(help: "The table to load.") var table: String
    @Option(help: "The JSON-lines file to read.") var file: String
    @Option(help: "A schema file declaring the table (see above).") var schema: String?

    /// Everything in `file`, read to its end, so that devices and pipes (`/dev/null`,
    /// `/dev/stdin`) read like regular files: an empty input is an empty file, which imports
    /// nothing.
    static func contents(of file: String) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw OfflineSyncError(.configuration, "cannot read the file \(file); check the path")
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            // A directory opens but cannot be read.
            throw OfflineSyncError(.configuration, "cannot read the file \(file); check that it is a readable file")
        }
    }

    func run() async throws {
        let logger = global.start("import")
        let configuration = try selection.configuration()
        try Import.refuseSystemTable(table)
        let declared = try schema.map(SchemaFile.load)
        let data = try Import.contents(of: file)
        let exists = StoreAccess.filePath(of: configuration).map { FileManager.default.fileExists(atPath: $0) } ?? true
        var store: (any LocalStore)?
        var stored: StoreSchema?
        if exists {
            do {
                let opened = try StoreAccess.openExisting(configuration, logger: logger)
                store = opened.store
                stored = opened.schema
            } catch  where declared != nil {
                // Another process may be creating the store right now (its file exists but holds
                // no store yet): the open with the schema file below creates or widens it, and
                // reports any other fault again.
                logger.debug("the existing store did not open (\(error)); opening it with the schema file")
            }
        }
        defer { try? store?.close() }
        let declaration = try Import.declaration(
            of: table, stored: stored, declared: declared, configuration: configuration)
        let items = try Import.read(data, file: file, into: declaration)
        logger.debug("read \(items.count) items from \(file)")

        if let declared {
            try store?.close()
            store = nil
            store = try StoreAccess.open(configuration, schema: declared, logger: logger)
        }
        guard let target = store else {
            throw OfflineSyncError(
                .configuration,
                "no store at \(configuration.path ?? configuration.description); pass --schema to create it with the table"
            )
        }
        var progress = ProgressBar("importing \(table)", total: items.count)
        try target.write { transaction in
            var written = 0
            for start in stride(from: 0, to: items.count, by: 500) {
                let batch = Array(items[start..<min(start + 500, items.count)])
                try transaction.upsert(batch, into: table, origin: .local)
                written += batch.count
                progress.update(written)
            }
        }
        progress.finish()
        print("imported \(items.count) item\(items.count == 1 ? "" : "s") into \(table)")
        if configuration.path == nil {
            logger.warning(
                "the \(configuration.scheme): store keeps nothing after this command ends; name a file store to keep the items"
            )
        }
    }

    /// Throws for a system table (`__operations`, `__errors`, `__config`, …): the sync engine
    /// owns their rows, and rows it did not write would leave a queue it then refuses to push.
    static func refuseSystemTable(_ table: String) throws {
        guard table.hasPrefix("__") else { return }
        throw OfflineSyncError(
            .invalidOperation,
            "table '\(table)' is a system table (its name starts with '__') that only the sync engine writes; import into a user table instead (nothing was imported)"
        )
    }

    /// The table as the store will hold it after the import: the stored declaration widened by the
    /// schema file's.
    static func declaration(
        of table: String, stored: StoreSchema?, declared: StoreSchema?,
        configuration: StoreConfiguration
    ) throws -> TableSchema {
        let fromStore = stored?.table(named: table)
        let fromFile = declared?.table(named: table)
        switch (fromStore, fromFile) {
        case (let existing?, let added?): return try existing.merged(with: added)
        case (let existing?, nil): return existing
        case (nil, let added?): return added
        case (nil, nil):
            if let stored { _ = try StoreAccess.table(table, in: stored, configuration: configuration) }
            throw OfflineSyncError(
                .unknownTable,
                "table '\(table)' is declared neither in the store nor in a schema file; pass --schema FILE declaring it"
            )
        }
    }

    /// Every line as a checked item; the first bad line throws with its number.
    static func read(_ data: Data, file: String, into table: TableSchema) throws -> [Item] {
        var items: [Item] = []
        var firstLine: [String: Int] = [:]
        var number = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var bytes = line[...]
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            if bytes.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
            let item: Item
            do {
                item = try table.normalize(try JSONLine.decode(bytes), origin: .local)
            } catch {
                throw OfflineSyncError(.invalidValue, "\(file) line \(number): \(error); nothing was imported")
            }
            if let earlier = firstLine.updateValue(number, forKey: item.id) {
                throw OfflineSyncError(
                    .invalidValue,
                    "\(file) line \(number): id '\(item.id)' already appeared on line \(earlier); nothing was imported")
            }
            items.append(item)
        }
        return items
    }
}
