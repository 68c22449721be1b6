package import HTTPTypes
package import Hummingbird
package import HummingbirdCore
package import Logging
package import NIOCore
package import OfflineSync
package import Synchronization

/// A request as the server received it, for comparison with recorded traffic.
package struct ReceivedRequest: Sendable {
    package var method: String
    /// The request target exactly as sent (path and query, still percent-encoded).
    package var target: String
    /// Header names in lower case with their values.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    /// Creates a request as received.
    package init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }
}

/// An answer the test server gives.
package struct ScriptedResponse: Sendable {
    package var status: Int
    var headers: [(String, String)] = []
    package var body: [UInt8] = []
    /// A pause before answering, to make the client wait.
    package var delay: Duration?

    /// Creates an answer.
    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], delay: Duration? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
    }

    /// A 200 answer holding an empty page (`[]`).
    package static let emptyPage = ScriptedResponse(
        status: 200, headers: [("Content-Type", "application/json")], body: Array("[]".utf8))
}

/// Runs a Hummingbird server on 127.0.0.1 (a free port) that answers with `respond`, calls `body`
/// with the port, then stops the server. `server` chooses the protocol (e.g. `.tls(…)`).
package func withLoopbackServer<Result: Sendable>(
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
package final class RequestLog: Sendable {
    private let entries = Locked<[ReceivedRequest]>([])

    /// Creates an empty log.
    package init() {}

    package func append(_ request: ReceivedRequest) {
        entries.withLock { $0.append(request) }
    }

    package var all: [ReceivedRequest] { entries.withLock { $0 } }
}
