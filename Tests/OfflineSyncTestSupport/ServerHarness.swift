import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import OfflineSync
import OfflineSyncService
import OfflineSyncServer

/// The `todoitem` table of the recorded sessions.
let todoItemSchema = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

/// Runs a ``TableServer`` over `store` on 127.0.0.1 (a free port), calls `body` with the port,
/// then stops the server.
func withTableServer<Result: Sendable>(
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
enum RunningServer {
    static func start(
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
struct RawAnswer: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var json: Any? { parseJSON(body) }
}

/// Sends a request exactly as given (target not re-encoded). The client keeps retrying a
/// connection the port refuses until `timeout`.
func send(
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
