import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import OfflineSync

/// The transport of every request that is not pipelined: AsyncHTTPClient, one request per round
/// trip on its connection pool. Closes the client when the remote created it.
final class ClientTransport: HTTPTransport {
    private let client: HTTPClient
    private let ownsClient: Bool
    /// The base URL without a trailing `/`; request targets are appended to it.
    let baseURL: String
    private let requestTimeout: Duration
    private let maximumResponseBytes: Int
    private let logger: Logger
    /// The event loop every request of this transport and its connection run on.
    ///
    /// With AsyncHTTPClient's `.indifferent`, a request's task and its connection could live on
    /// different loops. The end of a request body then reaches the connection after one hop, and
    /// the server's whole answer can arrive first. The connection is then handed back to the
    /// pool one more hop later; a `shutdown()` between the answer and that hand-back closed and
    /// forgot the connection, and AsyncHTTPClient 1.37 stopped the process with "A connection
    /// that we don't know was released?" (seen once in 14 loopback benchmark runs on a loaded
    /// machine). On one loop nothing comes between the body and its end.
    private let eventLoop: any EventLoop

    init(client: HTTPClient, ownsClient: Bool, baseURL: String, configuration: HTTPRemote.Configuration) {
        self.client = client
        self.ownsClient = ownsClient
        self.baseURL = baseURL
        self.requestTimeout = configuration.requestTimeout
        self.maximumResponseBytes = configuration.maximumResponseBytes
        self.logger = configuration.logger
        self.eventLoop = client.eventLoopGroup.next()
    }

    deinit {
        if ownsClient { client.shutdown { _ in } }
    }

    /// The event loops the client runs on (the pipelining connection uses them too).
    var eventLoopGroup: any EventLoopGroup { client.eventLoopGroup }

    func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    /// Sends the request through the client; `queued` is not used (one request at a time).
    func send(_ request: TableRequest, headers: HTTPHeaders, queued: (@Sendable () -> Void)?) async throws
        -> WireResponse
    {
        let what = "\(request.method.rawValue) \(request.target)"
        let outgoing: HTTPClient.Request
        do {
            outgoing = try HTTPClient.Request(
                url: baseURL + request.target, method: HTTPMethod(rawValue: request.method.rawValue),
                headers: headers, body: request.body.map { .byteBuffer(ByteBuffer(bytes: $0)) })
        } catch {
            throw RemoteError(
                .server, message: "\(what): the URL \(baseURL + request.target) cannot be requested: \(error)")
        }
        do {
            // The whole answer is gathered on the connection's event loop and handed over once:
            // one hop back to this task per request (the streaming API costs several).
            let task = client.execute(
                request: outgoing,
                delegate: ResponseAccumulator(request: outgoing, maxBodySize: maximumResponseBytes),
                eventLoop: .delegateAndChannel(on: eventLoop), deadline: .now() + TimeAmount(requestTimeout),
                logger: logger.logLevel <= .debug ? logger : nil)
            let response = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            return WireResponse(
                status: Int(response.status.code), headers: response.headers,
                body: response.body.map { Array($0.readableBytesView) } ?? [])
        } catch let error as ResponseAccumulator.ResponseTooBigError {
            throw RemoteError(
                .server,
                message:
                    "\(what): the answer is larger than \(error.maxBodySize) bytes; raise maximumResponseBytes or ask for smaller pages"
            )
        } catch {
            if Task.isCancelled || (error as? HTTPClientError) == .cancelled || error is CancellationError {
                throw RemoteError(.cancelled, message: "\(what) was cancelled")
            }
            if let reason = TransportFailure.connectFailure(error) {
                throw Unconnected(
                    error: RemoteError(.network, message: "\(what) could not connect to \(baseURL): \(reason)"))
            }
            throw RemoteError(.network, message: "\(what) did not complete: \(TransportFailure.describe(error))")
        }
    }
}
