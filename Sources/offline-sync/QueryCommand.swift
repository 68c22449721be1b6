import ArgumentParser
import Foundation
import Logging
import OfflineSync

/// `offline-sync query`: read a table with an OData filter and ordering.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Read items of a table, filtered, ordered and paged with OData expressions.",
        discussion: """
            --filter takes an OData $filter expression and --orderby an OData $orderby list; results \
            follow the reference semantics of every backend (nulls first ascending, ties by id). \
            A malformed expression is reported with its position.

            With --count, the table format adds the total to its footer, json writes the table \
            protocol's {"results": [...], "count": N}, and jsonl prints the total on standard error.

            Examples (the first makes a store with a todoitem table to try the others on):
              offline-sync demo --store sqlite:./demo.sqlite
              offline-sync query --store sqlite:./demo.sqlite --table todoitem \\
                --filter "complete eq false and startswith(text, 'Buy')" \\
                --orderby "text desc" --top 10
              offline-sync query --store sqlite:./demo.sqlite --table todoitem \\
                --count --top 0
              offline-sync query --store sqlite:./demo.sqlite --table todoitem \\
                --format jsonl
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, jsonl
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Option(help: "The table to read.") var table: String
    @Option(help: "An OData $filter expression, e.g. \"complete eq false\".") var filter: String?
    @Option(help: "An OData $orderby list, e.g. \"text desc,id\".") var orderby: String?
    // `.unconditional`: a negative value is read as a value (and refused by `validate()` with
    // the rule) instead of as an option, which ArgumentParser would report as a missing value.
    @Option(parsing: .unconditional, help: "The most items to show (0 or more).") var top: Int?
    @Option(parsing: .unconditional, help: "Items to skip first (0 or more).") var skip: Int = 0
    @Flag(help: "Also count every matching item (regardless of --top and --skip).") var count = false
    @Option(help: "table (aligned columns), json (one document) or jsonl (one object per line).") var format: Format =
        .table

    func validate() throws {
        if let top, top < 0 { throw ValidationError("--top must be 0 or more, got \(top)") }
        guard skip >= 0 else { throw ValidationError("--skip must be 0 or more, got \(skip)") }
    }

    func run() async throws {
        let logger = global.start("query")
        let configuration = try selection.configuration()
        let (store, schema) = try StoreAccess.openExisting(configuration, logger: logger)
        defer { try? store.close() }
        let declaration = try StoreAccess.table(table, in: schema, configuration: configuration)
        let query = Query(
            table: table, filter: try filter.map { try ODataInput.filter($0) },
            orderBy: try orderby.map { try ODataInput.orderBy($0) } ?? [],
            skip: skip, top: top, includeTotalCount: count)
        try query.validate(against: declaration)
        logger.debug(
            "querying \(table)",
            metadata: ["filter": "\(filter != nil)", "top": "\(top.map(String.init) ?? "all")", "skip": "\(skip)"])
        let result = try store.read(query)
        let rendered = try QueryCommand.render(result, columns: declaration.columns, format: format)
        // jsonl is one line per item: no item, no line.
        if format != .jsonl || !result.items.isEmpty { print(rendered) }
        if format == .jsonl, let total = result.totalCount {
            FileHandle.standardError.write(Data("\(total) matching in all\n".utf8))
        }
    }

    static func render(_ result: QueryResult, columns: [Column], format: Format) throws -> String {
        switch format {
        case .table:
            var table = TextTable(headers: ["id"] + columns.map(\.name))
            table.rows = result.items.map { item in [item.id] + columns.map { TextTable.cell(item[$0.name]) } }
            var footer = "\(result.items.count) item\(result.items.count == 1 ? "" : "s")"
            if let total = result.totalCount { footer += " (\(total) matching in all)" }
            return (result.items.isEmpty ? "" : table.rendered + "\n") + footer
        case .jsonl:
            return try result.items.map(JSONLine.encode).joined(separator: "\n")
        case .json:
            return String(decoding: try JSONCodec.encode(result), as: UTF8.self)
        }
    }
}
