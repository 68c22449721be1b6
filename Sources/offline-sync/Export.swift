import ArgumentParser
import Foundation
import Logging
import OfflineSync

/// `offline-sync export`: a table as JSON lines.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every item of a table to standard output, one JSON object per line, in id order.",
        discussion: """
            Each line holds "id" first, then the other columns in name order; null values are left \
            out, dates are ISO 8601 strings in UTC and json columns compact JSON, so the same items \
            export to the same bytes on every backend. A progress bar is drawn on standard error when it is a terminal.

            Examples:
              offline-sync export --store sqlite:./app.sqlite --table todoitem \\
                > todoitem.jsonl
              offline-sync export --store lmdb:./data/store.lmdb --table todoitem \\
                --format jsonl
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case jsonl
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(help: "The table to export.") var table: String
    @Option(help: "The output format.") var format: Format = .jsonl

    func run() async throws {
        let logger = global.start("export")
        let configuration = try selection.configuration()
        let (store, schema) = try StoreAccess.openExisting(configuration, logger: logger)
        defer { try? store.close() }
        _ = try StoreAccess.table(table, in: schema, configuration: configuration)
        let total = try store.count(table)
        var progress = ProgressBar("exporting \(table)", total: total)
        var written = 0
        var output = StandardOutput()
        try StoreAccess.forEachPage(of: table, in: store, configuration: configuration) { page in
            for item in page {
                output.write(
                    try StoreAccess.rethrowingStoredValueErrors(configuration, table: table) {
                        try JSONLine.encode(item)
                    })
                output.write("\n")
            }
            written += page.count
            progress.update(written)
        }
        output.flush()
        progress.finish()
        guard written == total else {
            throw StoreAccess.damaged(
                configuration,
                "table '\(table)' counts \(total) items but \(written) were read in id order, so the export is incomplete")
        }
        logger.debug("exported \(written) items from \(table)")
    }
}
