import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import OfflineSync

/// How a request of the table protocol reaches the server: AsyncHTTPClient, one request per
/// round trip on its connection pool; one attempt, with the headers given (the credential
/// included), no retries and no renewal — those are ``HTTPRemote``'s. Closes the client when the
/// remote created it.
final class ClientTransport: Sendable {
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

    func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    /// Sends one request and returns the whole answer.
    ///
    /// Throws ``Unconnected`` when no connection could be established (the request was never
    /// sent), ``NotRetried`` for a failure of TLS itself, ``OfflineSync/RemoteError`` for every
    /// other failure (`.cancelled` when the task
    /// was cancelled, `.network` for a broken connection or a timeout, `.server` for an answer
    /// over the size limit).
    func send(_ request: TableRequest, headers: HTTPHeaders) async throws -> WireResponse {
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
            let failure = RemoteError(.network, message: "\(what) did not complete: \(TransportFailure.describe(error))")
            // A server that does not speak TLS, or whose certificate is refused, answers a retry
            // the same way: reported at once.
            if TransportFailure.isTLSFailure(error) { throw NotRetried(error: failure) }
            throw failure
        }
    }
}
