import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 connection on which requests are written back to back, without waiting for the
/// answers (pipelining, RFC 9112 §9.3); the server answers them in the order they were written.
///
/// ``submit(_:)`` writes in call order: a request submitted after another one's `submit`
/// returned goes out after it on the same connection. That is what lets a push keep several
/// writes in flight and still have the server apply them in queue order. The connection is made
/// on the first request and made again on the next request after it closed. When it closes or
/// breaks, every request waiting for an answer fails (the server may or may not have applied
/// it), and so does every request not written yet (it was not sent). When it cannot be made, it
/// is tried again `connectRetries` times with doubling pauses while the requests wait in order,
/// then they fail as ``PipelineFailure/unconnected(_:)`` (none was sent).
///
/// All state lives on one event loop; `submit` hops to it.
final class PipelinedConnection: @unchecked Sendable {
    /// Why a request got no answer.
    enum PipelineFailure: Error {
        /// No connection could be made; the request was not sent.
        case unconnected(any Error)
        /// The connection closed or broke before the answer was complete.
        case broken(String)
        /// No complete answer within the request timeout; the connection was closed.
        case timedOut
        /// The answer's body is larger than the limit; the connection was closed.
        case tooLarge(Int)
    }

    /// A request in the form the connection writes it.
    struct Request {
        var method: HTTPMethod
        var target: String
        var headers: HTTPHeaders
        var body: [UInt8]?
    }

    /// The event loop the connection and its answers live on.
    let eventLoop: any EventLoop
    private let host: String
    private let port: Int
    private let tls: NIOSSLContext?
    private let connectTimeout: TimeAmount
    private let requestTimeout: TimeAmount
    private let maximumResponseBytes: Int
    private let connectRetries: Int
    private let retryDelay: TimeAmount
    private let logger: Logger

    // Event-loop state.
    private var channel: (any Channel)?
    private var connecting = false
    /// Requests not written yet, in order: waiting for the connection or for room in the window.
    private var pending: [(Request, EventLoopPromise<WireResponse>)] = []
    private var first = 0
    /// Requests written and not answered yet.
    private var inFlight = 0
    private var closed = false
    /// A flush is scheduled at the end of this event-loop turn: requests handed over in the
    /// same turn leave in one write.
    private var flushScheduled = false
    private let window: Int

    /// Prepares a connection to `host:port` (with TLS when `tls` is given); nothing is connected yet.
    /// At most `window` requests are written ahead of their answers; the others wait in order.
    init(
        host: String, port: Int, tls: TLSConfiguration?, group: any EventLoopGroup, window: Int,
        connectTimeout: TimeAmount,
        requestTimeout: TimeAmount, maximumResponseBytes: Int, connectRetries: Int, retryDelay: TimeAmount,
        logger: Logger
    ) throws {
        self.eventLoop = group.next()
        self.host = host
        self.port = port
        self.tls = try tls.map { try NIOSSLContext(configuration: $0) }
        self.window = max(1, window)
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maximumResponseBytes = maximumResponseBytes
        self.connectRetries = connectRetries
        self.retryDelay = retryDelay
        self.logger = logger
    }

    /// Writes `request` after every request submitted before this call returned, and answers
    /// with its response; fails with ``PipelineFailure``.
    func submit(_ request: Request) -> EventLoopFuture<WireResponse> {
        submit([request])[0]
    }

    /// Writes the requests in order, after every request submitted before this call returned,
    /// and answers with their responses, in the same order.
    func submit(_ requests: [Request]) -> [EventLoopFuture<WireResponse>] {
        let promises = requests.map { _ in eventLoop.makePromise(of: WireResponse.self) }
        eventLoop.execute {
            for (request, promise) in zip(requests, promises) { self.pending.append((request, promise)) }
            self.drain()
        }
        return promises.map(\.futureResult)
    }

    /// Closes the connection; requests waiting for an answer fail. Later requests are refused,
    /// or, with `reopening`, make a new connection.
    func close(reopening: Bool = false) {
        eventLoop.execute {
            if !reopening { self.closed = true }
            self.channel?.close(promise: nil)
            self.failPending(
                PipelineFailure.broken(reopening ? "the request was cancelled" : "the remote was shut down"))
        }
    }

    /// Writes waiting requests while the window has room, connecting first when needed.
    private func drain() {
        eventLoop.preconditionInEventLoop()
        if closed {
            failPending(PipelineFailure.unconnected(PipelineFailure.broken("the remote was shut down")))
            return
        }
        guard first < pending.count else { return }
        guard let channel else {
            connect()
            return
        }
        // A connection that is closing takes nothing more; its close fails what is waiting.
        guard channel.isActive else { return }
        while inFlight < window, first < pending.count {
            let (request, promise) = pending[first]
            first += 1
            inFlight += 1
            promise.futureResult.whenComplete { _ in
                self.inFlight -= 1
                self.drain()
            }
            write(request, promise, on: channel)
        }
        if first == pending.count {
            pending.removeAll(keepingCapacity: true)
            first = 0
        }
    }

    private func write(_ request: Request, _ promise: EventLoopPromise<WireResponse>, on channel: any Channel) {
        var headers = request.headers
        headers.replaceOrAdd(name: "Host", value: port == (tls == nil ? 80 : 443) ? host : "\(host):\(port)")
        if let body = request.body { headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: request.target, headers: headers)
        let body = request.body.map { channel.allocator.buffer(bytes: $0) }
        let timeout = eventLoop.scheduleTask(in: requestTimeout) { [weak channel] in
            channel?.pipeline.fireUserInboundEventTriggered(ResponseHandler.TimedOut(promise: promise))
        }
        promise.futureResult.whenComplete { _ in timeout.cancel() }
        channel.write(ResponseHandler.Outgoing(head: head, body: body, promise: promise), promise: nil)
        if !flushScheduled {
            flushScheduled = true
            eventLoop.execute {
                self.flushScheduled = false
                channel.flush()
            }
        }
    }

    private func connect(attempt: Int = 0) {
        guard !connecting || attempt > 0 else { return }
        connecting = true
        let maximum = maximumResponseBytes
        let tls = self.tls
        let host = self.host
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: host.isIPAddress ? nil : host))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseHandler(maximumBodyBytes: maximum))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                if case .failure(let error) = result, attempt < self.connectRetries, !self.closed {
                    let delay = self.retryDelay * Int64(1 << attempt)
                    self.logger.warning("connecting to \(host):\(self.port) again in \(delay) after: \(error)")
                    self.eventLoop.scheduleTask(in: delay) { self.connect(attempt: attempt + 1) }
                    return
                }
                self.connecting = false
                switch result {
                case .success(let channel):
                    if self.closed {
                        channel.close(promise: nil)
                        self.failPending(
                            PipelineFailure.unconnected(PipelineFailure.broken("the remote was shut down")))
                        return
                    }
                    self.channel = channel
                    // Runs at once when the server closed the connection already.
                    channel.closeFuture.whenComplete { _ in
                        guard self.channel === channel else { return }
                        self.channel = nil
                        // Requests not written when the connection ended are not sent on a new
                        // one: a later request must never overtake an earlier one that failed.
                        self.failPending(PipelineFailure.broken("the connection closed before the request was sent"))
                    }
                    self.drain()
                case .failure(let error):
                    self.failPending(PipelineFailure.unconnected(error))
                }
            }
    }

    private func failPending(_ error: any Error) {
        let unsent = pending[first...]
        pending = []
        first = 0
        for (_, promise) in unsent { promise.fail(error) }
    }
}

/// Writes each request and matches answers to requests in order.
private final class ResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Outgoing
    typealias OutboundOut = HTTPClientRequestPart

    /// A request and the promise of its answer.
    struct Outgoing {
        var head: HTTPRequestHead
        var body: ByteBuffer?
        var promise: EventLoopPromise<WireResponse>
    }

    /// Sent through the pipeline when a request's time is up.
    struct TimedOut {
        var promise: EventLoopPromise<WireResponse>
    }

    private let maximumBodyBytes: Int
    private var pending: [EventLoopPromise<WireResponse>] = []
    private var first = 0
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outgoing = unwrapOutboundIn(data)
        pending.append(outgoing.promise)
        context.write(wrapOutboundOut(.head(outgoing.head)), promise: nil)
        if let body = outgoing.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        // A request written to a connection that is already closing gets no answer: it fails
        // with the write (failing an answered promise again does nothing).
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { error in
            outgoing.promise.fail(
                PipelinedConnection.PipelineFailure.broken("the request could not be written: \(error)"))
        }
        written.futureResult.cascade(to: promise)
        context.write(wrapOutboundOut(.end(nil)), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            // 1xx answers (other than 101, never asked for) precede the real one.
            if received.status.code >= 100 && received.status.code < 200 { return }
            head = received
            body.removeAll(keepingCapacity: true)
        case .body(let bytes):
            guard head != nil else { return }
            if body.count + bytes.readableBytes > maximumBodyBytes {
                fail(context, PipelinedConnection.PipelineFailure.tooLarge(maximumBodyBytes))
                return
            }
            body.append(contentsOf: bytes.readableBytesView)
        case .end:
            guard let received = head, first < pending.count else { return }
            head = nil
            let promise = pending[first]
            first += 1
            if first > 64 && first * 2 > pending.count {
                pending.removeFirst(first)
                first = 0
            }
            promise.succeed(WireResponse(status: Int(received.status.code), headers: received.headers, body: body))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let timedOut = event as? TimedOut {
            // Answers come in order: a late one holds up every request behind it, so they all fail.
            if pending[first...].contains(where: { $0.futureResult === timedOut.promise.futureResult }) {
                fail(context, PipelinedConnection.PipelineFailure.timedOut)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError || error is BoringSSLError {
            fail(
                context,
                PipelinedConnection.PipelineFailure.broken(
                    "the TLS handshake or session failed (\(error)); check that the server's certificate is trusted (tlsConfiguration) and names the host"
                ))
        } else {
            fail(context, PipelinedConnection.PipelineFailure.broken(String(describing: error)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failPending(PipelinedConnection.PipelineFailure.broken("the server closed the connection"))
        context.fireChannelInactive()
    }

    /// Fails every request without an answer and closes the connection.
    private func fail(_ context: ChannelHandlerContext, _ error: PipelinedConnection.PipelineFailure) {
        failPending(error)
        context.close(promise: nil)
    }

    private func failPending(_ error: PipelinedConnection.PipelineFailure) {
        let unanswered = pending[first...]
        pending = []
        first = 0
        head = nil
        for promise in unanswered { promise.fail(error) }
    }
}

private extension String {
    /// `true` for an IPv4 or IPv6 address literal (no TLS server name is sent for those).
    var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
