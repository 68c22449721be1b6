import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import OfflineSync
import Synchronization

/// A request as the server received it, for comparison with recorded traffic.
struct ReceivedRequest: Sendable {
    var method: String
    /// The request target exactly as sent (path and query, still percent-encoded).
    var target: String
    /// Header names in lower case with their values.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }
}

/// An answer the test server gives.
struct ScriptedResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: [UInt8] = []
    /// A pause before answering, to make the client wait.
    var delay: Duration?

    /// A 200 answer holding an empty page (`[]`).
    static let emptyPage = ScriptedResponse(
        status: 200, headers: [("Content-Type", "application/json")], body: Array("[]".utf8))
}

/// Runs a Hummingbird server on 127.0.0.1 (a free port) that answers with `respond`, calls `body`
/// with the port, then stops the server. `server` chooses the protocol (e.g. `.tls(…)`).
func withLoopbackServer<Result: Sendable>(
    _ respond: @escaping @Sendable (ReceivedRequest) async throws -> ScriptedResponse,
    server: HTTPServerBuilder = .http1(),
    _ body: @Sendable (Int) async throws -> Result
) async throws -> Result {
    let responder = CallbackResponder<BasicRequestContext> { request, _ in
        let bytes = try await request.body.collect(upTo: 16 << 20)
        let received = ReceivedRequest(
            method: request.method.rawValue, target: request.head.path ?? "",
            headers: request.headers.map { ($0.name.canonicalName, $0.value) },
            body: Array(bytes.readableBytesView))
        let scripted = try await respond(received)
        if let delay = scripted.delay { try await Task.sleep(for: delay) }
        var fields = HTTPFields()
        for (name, value) in scripted.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: .init(code: scripted.status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: scripted.body)))
    }
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    var logger = Logger(label: "loopback")
    logger.logLevel = .critical
    let app = Application(
        responder: responder,
        server: server,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        defer { group.cancelAll() }
        return try await body(port)
    }
}

/// Records what a test server received, in order.
final class RequestLog: Sendable {
    private let entries = Locked<[ReceivedRequest]>([])

    func append(_ request: ReceivedRequest) {
        entries.withLock { $0.append(request) }
    }

    var all: [ReceivedRequest] { entries.withLock { $0 } }
}
