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
            Ctrl-C or SIGTERM stops the server after the requests in progress. Several serve processes \
            (on one host or several) may serve one postgres:// store at once, behind a load balancer or \
            with clients choosing among them: writes are serialised by PostgreSQL and stamped inside that \
            lock, so every guarantee of one process holds across them (docs/ARCHITECTURE.md).

            Examples:
              offline-sync serve --store sqlite:./server.sqlite
              offline-sync serve --store memory: --port 0 --dynamic-schema
              offline-sync serve --store 'postgres://app@db:5432/app?schema=sync' --port 8081
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

    @Flag(help: "Accept table requests without ZUMO-API-VERSION 2.0.x (old clients); the Azure servers answer 400.")
    var noApiVersionCheck = false

    @Option(
        help: ArgumentHelp(
            "Allow browser calls from this origin (CORS), e.g. https://app.example.com; repeat for several, '*' for any. Off by default.",
            valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(help: "Close a connection idle for this many seconds.")
    var idleTimeout = 60

    @Option(help: "Answer 408 and close when a request has not arrived completely this many seconds after its first byte.")
    var requestTimeout = 30

    @Option(help: "The most open connections; beyond it, new connections get 503.")
    var maxConnections = 512

    static let demoTable = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port \(port) is not a port number (0 to 65535)")
        }
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more") }
        guard maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes must be at least 1024") }
        guard idleTimeout >= 1 else { throw ValidationError("--idle-timeout must be 1 second or more") }
        guard requestTimeout >= 1 else { throw ValidationError("--request-timeout must be 1 second or more") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be 1 or more") }
        for origin in corsOrigin where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--cors-origin '\(origin)' is not an origin; write it as https://host[:port], or '*'")
        }
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
        let failureLogger = requestLogger
        let service = try TableService(
            store: store, options: .init(maximumPageSize: pageSize, widensSchema: dynamic),
            failureLog: { failureLogger.error("\($0)") })
        var serverConfiguration = TableServer.Configuration(
            host: host, port: port, maximumBodyBytes: maxBodyBytes, createsTables: dynamic, logger: requestLogger)
        serverConfiguration.checksAPIVersion = !noApiVersionCheck
        serverConfiguration.cors = CORSPolicy(allowedOrigins: corsOrigin)
        serverConfiguration.idleTimeout = .seconds(idleTimeout)
        serverConfiguration.requestReadTimeout = .seconds(requestTimeout)
        serverConfiguration.maximumConnections = maxConnections
        let server = TableServer(service: service, configuration: serverConfiguration)
        let host = self.host
        try await server.run(untilSignal: true) { bound in
            var output = StandardOutput()
            output.write("serving \(configuration) on http://\(host):\(bound)/tables/\n")
            output.flush()
        }
        try store.close()
    }
}
