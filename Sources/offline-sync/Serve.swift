import ArgumentParser
import Foundation
import Logging
import OfflineSync
import OfflineSyncServer

/// `offline-sync serve`: the reference back end of the Azure Mobile Apps table protocol over a store.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store over HTTP with the Azure Mobile Apps table protocol 2.0.0.",
        discussion: """
            Clients of that protocol (HTTPRemote, the Azure Mobile Apps SDKs) sync with the tables at \
            http://HOST:PORT/tables/{table}. Tables come from --schema (the format of 'import --schema'), \
            from the store itself, or, with --dynamic-schema, are created and widened on the first write, \
            like the Azure Node server's dynamic schema. A new store without --schema gets the demo table \
            'todoitem' (text, complete) and a dynamic schema. Each request is logged on standard error; \
            Ctrl-C or SIGTERM stops the server after the requests in progress.

            Examples:
              offline-sync serve --store sqlite:./server.sqlite
              offline-sync serve --store memory: --port 0 --dynamic-schema
              curl -H 'ZUMO-API-VERSION: 2.0.0' http://127.0.0.1:8080/tables/todoitem
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed on standard output).")
    var port = 8080

    @Option(help: ArgumentHelp("A JSON schema file declaring the tables to serve.", valueName: "file"))
    var schema: String?

    @Flag(help: "Create tables and add columns on the first write that needs them.")
    var dynamicSchema = false

    @Option(help: "The most rows one read returns (the server's page size cap).")
    var pageSize = 50

    @Option(help: "The largest request body accepted, in bytes; larger ones get 413.")
    var maxBodyBytes = 1 << 20

    static let demoTable = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port \(port) is not a port number (0 to 65535)")
        }
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more") }
        guard maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes must be at least 1024") }
    }

    func run() async throws {
        let logger = global.start("serve")
        var requestLogger = Logger(label: "offline-sync.serve")
        requestLogger.logLevel = .info
        let configuration = try selection.configuration()
        let declared = try schema.map(SchemaFile.load) ?? StoreSchema([])
        let store = try StoreAccess.open(configuration, schema: declared, logger: logger)
        var dynamic = dynamicSchema
        if schema == nil, StoreAccess.userTables(try store.schema).isEmpty {
            try store.close()
            try store.open(schema: StoreSchema([Serve.demoTable]))
            dynamic = true
        }
        let service = try TableService(store: store, options: .init(maximumPageSize: pageSize, widensSchema: dynamic))
        let server = TableServer(
            service: service,
            configuration: .init(
                host: host, port: port, maximumBodyBytes: maxBodyBytes, createsTables: dynamic, logger: requestLogger))
        let host = self.host
        try await server.run(untilSignal: true) { bound in
            var output = StandardOutput()
            output.write("serving \(configuration) on http://\(host):\(bound)/tables/\n")
            output.flush()
        }
        try store.close()
    }
}
