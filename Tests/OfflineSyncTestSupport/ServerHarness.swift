package import AsyncHTTPClient
package import Foundation
package import Logging
package import NIOCore
package import NIOHTTP1
package import OfflineSync
package import OfflineSyncService
package import OfflineSyncServer

/// The `todoitem` table of the recorded sessions.
package let todoItemSchema = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

/// Runs a ``TableServer`` over `store` on 127.0.0.1 (a free port), calls `body` with the port,
/// then stops the server.
package func withTableServer<Result: Sendable>(
    store: any LocalStore = InMemoryStore(), tables: [TableSchema] = [todoItemSchema],
    options: TableService.Options = TableService.Options(), createsTables: Bool = false,
    maximumBodyBytes: Int = 1 << 20,
    configure: (inout TableServer.Configuration) -> Void = { _ in },
    _ body: @Sendable (Int) async throws -> Result
) async throws -> Result {
    try store.open(schema: StoreSchema(tables))
    let service = try TableService(store: store, options: options)
    let server = try await RunningServer.start(
        service, createsTables: createsTables, maximumBodyBytes: maximumBodyBytes, configure: configure)
    do {
        let result = try await body(server.port)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A ``TableServer`` over `service` on 127.0.0.1 with test logging (`port` `0`: a free port).
package enum RunningServer {
    package static func start(
        _ service: TableService, port: Int = 0, createsTables: Bool = false,
        maximumBodyBytes: Int = 1 << 20, configure: (inout TableServer.Configuration) -> Void = { _ in }
    ) async throws -> TableServer.Running {
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        var configuration = TableServer.Configuration(
            port: port, maximumBodyBytes: maximumBodyBytes, createsTables: createsTables, logger: logger)
        configure(&configuration)
        return try await TableServer(service: service, configuration: configuration).start()
    }
}

/// One raw answer.
package struct RawAnswer: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    package var json: Any? { parseJSON(body) }
}

/// Sends a request exactly as given (target not re-encoded). The client keeps retrying a
/// connection the port refuses until `timeout`.
package func send(
    _ method: String, _ target: String, port: Int, headers: [(String, String)] = [],
    body: [UInt8]? = nil, timeout: TimeAmount = .seconds(30)
) async throws -> RawAnswer {
    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(target)")
    request.method = .init(rawValue: method)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
    let response = try await HTTPClient.shared.execute(request, timeout: timeout)
    let bytes = try await response.body.collect(upTo: 64 << 20)
    return RawAnswer(
        status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
        body: Array(bytes.readableBytesView))
}
