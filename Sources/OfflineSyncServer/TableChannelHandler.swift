import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix

/// Answers table requests of one connection, in the order they arrive, with the store work on a
/// thread pool.
///
/// It sits in Hummingbird's HTTP/1.1 pipeline right after the request decoder and takes every
/// request itself: the body is gathered (up to the limit; a larger one is answered 413), the
/// requests that have arrived are handed as one batch to the thread pool, which computes their
/// answers with `TableProtocol` (synchronous store calls) one after another, and the answers are
/// written back on the event loop in one flush. So the event loop never waits for a store, the
/// requests of one connection are applied in the order they were sent (a pipelined push keeps its
/// order), and different connections are served in parallel. When the server checks tokens, a
/// batch's tokens are checked first (``TokenVerifier``, off the thread pool), and each request
/// reaches `TableProtocol` with its outcome.
///
/// Why not Hummingbird's router and responder: they answer a connection's requests one at a
/// time through an async task, with a flush per answer; taking the decoded request parts here
/// lets a batch of pipelined requests cost one thread-pool hop and one flush. That is the design
/// the pipelined push figures in BENCHMARKS.md were measured with (32 pipelined inserts about
/// 3 to 4 times the rate of one at a time), and the timeouts, connection cap and keep-alive rules
/// below live here too. Measured against the same endpoints through Hummingbird's `Router`
/// (`serve --router hummingbird`, BENCHMARKS.md "Router or channel handler"), clients sending one
/// request at a time get the same rates within the noise of the 2-core machine (8 clients: 792
/// against 432 pages/s in one run, 53 against 80 in another); pipelined push through the router
/// was not measured. Hummingbird still owns the listening socket, HTTP parsing, TLS and graceful
/// shutdown.
///
/// It also keeps the connection healthy:
/// - **idle timeout**: a connection with no request in progress for ``TableServer/Configuration/idleTimeout``
///   is closed;
/// - **request read timeout**: a request must arrive completely (head and body) within
///   ``TableServer/Configuration/requestReadTimeout`` of its first byte, or it is answered 408
///   and the connection closed (slow partial requests cannot hold a connection);
/// - **connection cap**: beyond ``TableServer/Configuration/maximumConnections`` open connections,
///   a new connection's first request is answered 503 with `Retry-After` and the connection closed;
/// - **keep-alive** as HTTP/1.0 and 1.1 define it, from every `Connection` header of the request
///   (`close` anywhere closes; an HTTP/1.0 request stays open only with `keep-alive`);
/// - **back-pressure**: a client that sends requests without reading the answers gets no more
///   requests answered (nor read) while its connection's outgoing buffer is over NIO's high
///   water mark, and a batch whose answers were large is followed by batches of one request, so
///   the answers a connection holds in memory stay bounded; such a connection is closed after
///   the idle timeout if it does not read;
/// - **half-closed connections**: a client that shuts down its sending side after its requests
///   (`nc -N`, some proxies) still gets every answer, then the connection closes;
/// - every answer the connection ends with (408, 413, a malformed request) is followed by a close
///   within a few seconds even when it cannot be written, e.g. to a TLS client whose handshake
///   never finished.
final class TableChannelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request whose parts have all arrived.
    private struct Received {
        var head: HTTPRequest
        var body: [UInt8]
        var tooLarge: Bool
        var keepAlive: Bool
        var isHTTP10: Bool
        var start: ContinuousClock.Instant
    }

    private let tableProtocol: TableProtocol
    private let settings: TableServer.Configuration
    private let serverName: String
    private let logger: Logger
    private let threadPool: NIOThreadPool
    private let gauge: ConnectionGauge
    private let versions = RequestVersions()

    private var head: HTTPRequest?
    private var headKeepAlive = true
    private var headIsHTTP10 = false
    private var body: [UInt8] = []
    private var tooLarge = false
    private var start = ContinuousClock.now
    private var pending: [Received] = []
    private var inFlight = false
    private var closing = false
    /// The answer the connection ends with once the requests before it are answered (a malformed
    /// request, a body over the limit, a request that did not arrive in time); while it waits,
    /// nothing more is read as a request.
    private var finalAnswer: TableProtocol.Answer?
    private var refused = false
    private var readPaused = false
    /// Set while the next batch waits for the outgoing buffer to drain (see ``dispatch(context:)``).
    private var writePaused = false
    /// The client shut down its sending side: answer what arrived, then close.
    private var inputClosed = false
    /// How many waiting requests the next batch takes: one after a batch whose answers were
    /// large (see ``largeBatchBytes``), ``maximumPending`` otherwise.
    private var batchLimit = TableChannelHandler.maximumPending
    private var idleTimer: Scheduled<Void>?
    private var readTimer: Scheduled<Void>?
    private var date = HTTPDate()

    /// The most requests of one connection waiting for their answers before the server stops
    /// reading from it.
    private static let maximumPending = 256

    /// Answer bytes of one batch above which the next batches take one request each, so that a
    /// client reading slowly holds at most one large answer beyond the outgoing buffer.
    private static let largeBatchBytes = 256 * 1024

    /// How long an answer that ends the connection may take to be written before the
    /// connection is closed anyway.
    private static let finalAnswerGrace = TimeAmount.seconds(5)

    init(
        tableProtocol: TableProtocol, settings: TableServer.Configuration, serverName: String, logger: Logger,
        threadPool: NIOThreadPool, gauge: ConnectionGauge
    ) {
        self.tableProtocol = tableProtocol
        self.settings = settings
        self.serverName = serverName
        self.logger = logger
        self.threadPool = threadPool
        self.gauge = gauge
    }

    func handlerAdded(context: ChannelHandlerContext) {
        refused = !gauge.open(limit: settings.maximumConnections)
        let operations = context.pipeline.syncOperations
        let bytes = RequestBytesObserver { [weak self] in self?.bytesArrived(context: context) }
        try? operations.addHandler(bytes, position: .first)
        if let codec = try? operations.handler(type: HTTP1ToHTTPServerCodec.self) {
            try? operations.addHandler(RequestVersionObserver(versions), position: .before(codec))
        }
        // Answers still go out after the client shuts down its sending side (see the type).
        try? context.channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        startIdleTimer(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        gauge.close()
        idleTimer?.cancel()
        readTimer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, finalAnswer == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            let version = versions.next()
            if let field = request.headerFields[.contentLength], Self.exceeds(field, settings.maximumBodyBytes) {
                // Answered before the body arrives: a client waiting for `100 Continue` (or
                // sending slowly) learns at once, instead of at the read timeout.
                logger.info("closing a connection whose request declares a body of \(field) bytes, over the limit")
                end(with: TableProtocol.bodyTooLarge(limit: settings.maximumBodyBytes), context: context)
                return
            }
            head = request
            headKeepAlive = version.keepAlive
            headIsHTTP10 = version.isHTTP10
            body.removeAll(keepingCapacity: true)
            tooLarge = false
            start = .now
        case .body(let bytes):
            guard !tooLarge else { return }
            if body.count + bytes.readableBytes > settings.maximumBodyBytes {
                tooLarge = true
                body = []
            } else {
                body.append(contentsOf: bytes.readableBytesView)
            }
        case .end:
            guard let request = head else { return }
            head = nil
            readTimer?.cancel()
            readTimer = nil
            pending.append(
                Received(
                    head: request, body: body, tooLarge: tooLarge, keepAlive: headKeepAlive, isHTTP10: headIsHTTP10,
                    start: start))
            body = []
            if !inFlight, !writePaused { dispatch(context: context) }
        }
    }

    /// `true` when a `Content-Length` value declares more than `limit` bytes, including a run of
    /// digits too long for an `Int` (which the parser would only refuse once the body is read).
    static func exceeds(_ contentLength: String, _ limit: Int) -> Bool {
        if let declared = Int(contentLength) { return declared > limit }
        return !contentLength.isEmpty && contentLength.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        readIfReady(context: context)
    }

    /// Asks for more bytes when the connection may take more requests, else owes the read until
    /// ``afterAnswers(context:)`` resumes reading. The connection reads only on demand
    /// (Hummingbird's async channel turns automatic reading off); it reads unless too many
    /// requests wait for their answers, the answers are not being read, or the client has shut
    /// down its sending side (a closing connection reads on, dropping what arrives).
    private func readIfReady(context: ChannelHandlerContext) {
        if closing
            || (!writePaused && !inputClosed && pending.count < Self.maximumPending && context.channel.isWritable)
        {
            readPaused = false
            context.read()
        } else {
            readPaused = true
        }
    }

    /// A read asked for by the handlers behind this one (Hummingbird's async channel asks
    /// whenever its own buffer has room, and never receives a request, so it would always ask):
    /// passed on only while this handler would read itself (``readIfReady(context:)``), else owed
    /// until reading resumes. Without this, a client that does not read its answers could make
    /// the server read, answer and buffer without limit.
    func read(context: ChannelHandlerContext) {
        readIfReady(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        context.fireChannelWritabilityChanged()
        guard context.channel.isWritable, writePaused, !closing else { return }
        writePaused = false
        idleTimer?.cancel()
        idleTimer = nil
        afterAnswers(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            head = nil
            readTimer?.cancel()
            readTimer = nil
            if !inFlight, pending.isEmpty, !writePaused, finalAnswer == nil, !closing {
                closing = true
                Self.closeAfterAnswer(context)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        pending.removeAll()
        idleTimer?.cancel()
        readTimer?.cancel()
        context.fireChannelInactive()
    }

    /// A request the HTTP parser rejects (malformed head, head too large, bad chunking) gets a
    /// JSON error saying what was wrong, after the answers to the requests before it, and the
    /// connection closes: the rest of its bytes cannot be trusted.
    /// Bytes after a request that closes the connection are dropped, not an error: that request
    /// is still answered.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !closing, finalAnswer == nil, (error as? HTTPParserError) != .closedConnection else { return }
        logger.info("closing a connection after a malformed request: \(error)")
        let tooLarge = (error as? HTTPParserError) == .headerOverflow
        let answer = TableProtocol.error(
            tooLarge ? 431 : 400,
            tooLarge
                ? "the request head is larger than the server accepts; shorten the URL or the headers"
                : "the request is not valid HTTP/1.1: \(Self.describe(error))")
        end(with: answer, context: context)
    }

    /// What an HTTP parser error means, in words.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? HTTPParserError else { return "\(error)" }
        switch error {
        case .invalidCharactersUsed, .invalidHeaderToken:
            return "a header name or value contains characters HTTP does not allow"
        case .trailingGarbage: return "unexpected bytes follow the request"
        case .invalidEOFState: return "the connection ended in the middle of a request"
        case .invalidVersion: return "the request line does not end with HTTP/1.0 or HTTP/1.1"
        case .invalidMethod: return "the request line does not start with an HTTP method (GET, POST, …)"
        case .invalidURL: return "the request target is not a valid path and query"
        case .lfExpected: return "a line of the request head or of the chunked body does not end with CRLF"
        case .invalidContentLength: return "the Content-Length header is not a decimal number of bytes"
        case .unexpectedContentLength:
            return "the request has conflicting Content-Length headers; send one"
        case .invalidChunkSize: return "a chunk size of the chunked body is not a hexadecimal number"
        case .invalidConstant: return "the request line or a header is malformed"
        case .strictModeAssertion:
            return "the chunked body does not match its framing (a chunk shorter or longer than its declared size)"
        case .paused:
            return "the connection starts with the HTTP/2 preface; this server speaks HTTP/1.1 only"
        case .unknown:
            return
                "the Transfer-Encoding is not valid: it must end with chunked, and a request may not have both Transfer-Encoding and Content-Length"
        default: return "the request could not be parsed (\(error))"
        }
    }

    // MARK: Answering

    /// Hands every waiting request to the thread pool as one batch; their answers are written in
    /// order when it completes, then the next batch goes.
    private func dispatch(context: ChannelHandlerContext) {
        guard !pending.isEmpty, !closing else { return }
        idleTimer?.cancel()
        idleTimer = nil
        var batch = Array(pending.prefix(batchLimit))
        pending.removeFirst(batch.count)
        if let close = batch.firstIndex(where: { !$0.keepAlive }) {
            batch.removeSubrange((close + 1)...)
            pending.removeAll()
        }
        inFlight = true
        let tableProtocol = self.tableProtocol
        let limit = settings.maximumBodyBytes
        let refused = self.refused
        let requests = batch.map { received in
            (
                tooLarge: received.tooLarge,
                request: TableProtocol.Request(
                    method: received.head.method.rawValue, target: received.head.path ?? "/",
                    fields: received.head.headerFields, body: received.body)
            )
        }
        let maximumConnections = settings.maximumConnections
        let respond = {
            @Sendable (requests: [(tooLarge: Bool, request: TableProtocol.Request)]) -> [TableProtocol.Answer] in
            requests.map { entry in
                if refused {
                    var answer = TableProtocol.error(
                        503,
                        "the server has \(maximumConnections) connections open, its limit; retry in a moment or close idle connections"
                    )
                    answer.headers.append(("Retry-After", "1"))
                    return answer
                }
                if entry.tooLarge { return TableProtocol.bodyTooLarge(limit: limit) }
                return tableProtocol.respond(to: entry.request)
            }
        }
        let answers: EventLoopFuture<[TableProtocol.Answer]>
        if let verifier = settings.authentication, !refused {
            // Tokens are checked (jwt-kit's key collection is an actor) before the batch goes to
            // the thread pool; the batch keeps its order.
            let threadPool = self.threadPool
            answers = context.eventLoop.makeFutureWithTask {
                var checked = requests
                for index in checked.indices where !checked[index].tooLarge {
                    checked[index].request.credential = await TableProtocol.authenticate(
                        checked[index].request, with: verifier)
                }
                let ready = checked
                return try await threadPool.runIfActive { respond(ready) }
            }
        } else {
            answers = threadPool.runIfActive(eventLoop: context.eventLoop) { respond(requests) }
        }
        answers.assumeIsolated()
            .whenComplete { result in
                self.inFlight = false
                switch result {
                case .success(let answers):
                    var bytes = 0
                    for (received, answer) in zip(batch, answers) {
                        self.write(answer, for: received, context: context)
                        bytes += answer.body.count
                    }
                    context.flush()
                    self.batchLimit = bytes > Self.largeBatchBytes ? 1 : Self.maximumPending
                    if refused || batch.contains(where: { !$0.keepAlive }) {
                        self.closing = true
                        Self.closeAfterAnswer(context)
                        return
                    }
                case .failure(let error):
                    // The pool is shutting down: the server is stopping.
                    self.logger.info("closing a connection while the server stops: \(error)")
                    self.closing = true
                    context.close(promise: nil)
                    return
                }
                guard context.channel.isWritable else {
                    // The client is not reading its answers: wait until it does (or the idle
                    // timeout passes) before computing more.
                    self.writePaused = true
                    self.startIdleTimer(context: context)
                    return
                }
                self.afterAnswers(context: context)
            }
    }

    /// Goes on once a batch's answers are written and the connection can take more: the next
    /// batch, the answer the connection ends with, the close of a half-closed connection, or the
    /// idle timer; reading resumes if it was paused.
    private func afterAnswers(context: ChannelHandlerContext) {
        if !pending.isEmpty {
            dispatch(context: context)
        } else if let answer = finalAnswer {
            finalAnswer = nil
            closing = true
            sendFinal(answer, context: context)
        } else if inputClosed {
            closing = true
            Self.closeAfterAnswer(context)
        } else {
            startIdleTimer(context: context)
        }
        if readPaused { readIfReady(context: context) }
    }

    private func write(_ answer: TableProtocol.Answer, for received: Received, context: ChannelHandlerContext) {
        var fields = answer.fields
        fields[.contentLength] = String(answer.body.count)
        fields[.date] = date.now()
        fields[.server] = serverName
        if !received.keepAlive || refused {
            fields[.connection] = "close"
        } else if received.isHTTP10 {
            fields[.connection] = "keep-alive"
        }
        let response = HTTPResponse(status: .init(code: answer.status), headerFields: fields)
        if received.head.method == .connect {
            Self.writePastEncoder(response, body: answer.body, context: context)
        } else {
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if !answer.body.isEmpty {
                context.write(
                    wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
            }
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
        }
        let method = received.head.method.rawValue
        let path = TableProtocol.shown(received.head.path ?? "/")
        let elapsed = Self.milliseconds(since: received.start)
        if let detail = answer.logDetail {
            logger.error("\(method) \(path) \(answer.status) \(elapsed) ms: \(detail)")
        } else {
            logger.info("\(method) \(path) \(answer.status) \(elapsed) ms")
        }
    }

    /// Writes an answer to a CONNECT request whole, past NIO's response encoder: the encoder
    /// sends such an answer without its length and body (a 2xx one would turn the connection
    /// into a tunnel), but the server never tunnels, so its refusal is an ordinary complete answer
    /// (and the connection closes after it, as ``RequestVersionObserver`` decided).
    private static func writePastEncoder(_ response: HTTPResponse, body: [UInt8], context: ChannelHandlerContext) {
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            context.close(promise: nil)
            return
        }
        var head = "HTTP/1.1 \(response.status.code) \(response.status.reasonPhrase)\r\n"
        for field in response.headerFields { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        var bytes = context.channel.allocator.buffer(string: head)
        bytes.writeBytes(body)
        encoder.write(NIOAny(IOData.byteBuffer(bytes)), promise: nil)
    }

    // MARK: Timers

    /// Bytes of a request arrived: the idle timer stops and, unless running, the read timer starts.
    private func bytesArrived(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        guard readTimer == nil, !closing, finalAnswer == nil else { return }
        readTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .init(settings.requestReadTimeout)) {
            self.readTimedOut(context: context)
        }
    }

    private func readTimedOut(context: ChannelHandlerContext) {
        readTimer = nil
        guard !closing, finalAnswer == nil else { return }
        let seconds = settings.requestReadTimeout.components.seconds
        logger.info("closing a connection whose request did not arrive within \(seconds) s")
        end(
            with: TableProtocol.error(
                408, "the request did not arrive completely within \(seconds) s; send the whole request at once"),
            context: context)
    }

    /// Ends the connection with `answer`: at once when no request is waiting for its answer,
    /// else right after the answers to the requests before it.
    private func end(with answer: TableProtocol.Answer, context: ChannelHandlerContext) {
        head = nil
        readTimer?.cancel()
        readTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        if inFlight || !pending.isEmpty {
            finalAnswer = answer
        } else {
            closing = true
            sendFinal(answer, context: context)
        }
    }

    /// Writes an answer the connection ends with, then closes it.
    private func sendFinal(_ answer: TableProtocol.Answer, context: ChannelHandlerContext) {
        var fields = answer.fields
        fields[.contentLength] = String(answer.body.count)
        fields[.connection] = "close"
        fields[.date] = date.now()
        fields[.server] = serverName
        context.write(
            wrapOutboundOut(.head(HTTPResponse(status: .init(code: answer.status), headerFields: fields))), promise: nil
        )
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            Self.closeAfterAnswer(context)
        }
        // The write may never complete (a TLS handshake that never finished buffers it; a client
        // that does not read): the connection closes after a grace period anyway.
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.finalAnswerGrace) { context.close(promise: nil) }
    }

    /// Ends a connection whose last answer is written: the sending side closes first, and what
    /// the client still sends is read and dropped for a moment before the connection closes.
    /// Closing at once with unread bytes would make the kernel answer them with a reset, which
    /// can destroy the last answer before the client reads it.
    private static func closeAfterAnswer(_ context: ChannelHandlerContext) {
        context.close(mode: .output).assumeIsolated().whenComplete { result in
            if case .failure = result {
                context.close(promise: nil)
                return
            }
            context.read()
            context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) { context.close(promise: nil) }
        }
    }

    private func startIdleTimer(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        guard readTimer == nil, !closing else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .init(settings.idleTimeout)) {
            self.idleTimer = nil
            guard !self.inFlight, self.pending.isEmpty || self.writePaused, !self.closing else { return }
            if self.writePaused {
                self.logger.info("closing a connection whose client did not read its answers for the idle timeout")
            }
            self.closing = true
            context.close(promise: nil)
        }
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        let microseconds = elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000
        return "\(microseconds / 1000).\(microseconds % 1000 / 100)"
    }
}

/// Tells its owner whenever bytes arrive on the connection (it sits first in the pipeline).
private final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let onBytes: () -> Void

    init(_ onBytes: @escaping () -> Void) {
        self.onBytes = onBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onBytes()
        context.fireChannelRead(data)
    }
}

/// The HTTP version and keep-alive wish of each request head, in arrival order (the
/// version-independent request type the table handler receives carries neither).
private final class RequestVersions {
    private var heads: [(keepAlive: Bool, isHTTP10: Bool)] = []

    func append(keepAlive: Bool, isHTTP10: Bool) {
        heads.append((keepAlive, isHTTP10))
    }

    /// The next head's facts; a head that was not observed keeps the connection alive.
    func next() -> (keepAlive: Bool, isHTTP10: Bool) {
        heads.isEmpty ? (true, false) : heads.removeFirst()
    }
}

/// Records the version and keep-alive wish of each HTTP/1 request head (every `Connection`
/// header counts: `close` anywhere closes; HTTP/1.0 keeps the connection only with `keep-alive`;
/// a CONNECT request, which the server refuses, closes too: its client would tunnel next).
private final class RequestVersionObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let versions: RequestVersions

    init(_ versions: RequestVersions) {
        self.versions = versions
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let tokens = head.headers[canonicalForm: "connection"].map { $0.lowercased() }
            let isHTTP10 = head.version == .http1_0
            let keepAlive =
                head.method != .CONNECT && !tokens.contains("close") && (!isHTTP10 || tokens.contains("keep-alive"))
            versions.append(keepAlive: keepAlive, isHTTP10: isHTTP10)
        }
        context.fireChannelRead(data)
    }
}

/// The `Date` header value (RFC 9110 IMF-fixdate), formatted once per second.
private struct HTTPDate {
    private var second: time_t = -1
    private var text = ""

    mutating func now() -> String {
        var clock = time(nil)
        guard clock != second else { return text }
        var parts = tm()
        gmtime_r(&clock, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        text =
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        second = clock
        return text
    }
}
