import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Keeps one HTTP/1.1 connection of the server healthy, in front of Hummingbird: what the
/// framework's own connection handling does not do. It answers no table request itself; every
/// request it lets through is answered by the router (``TableServer``).
///
/// It sits in the pipeline after NIO's HTTP/1 decoder and before Hummingbird's conversion to
/// HTTP types, so it sees each request's HTTP version and `Connection` headers:
/// - **connection limits**: beyond ``TableServer/Configuration/maximumConnections`` open
///   connections in all, or ``TableServer/Configuration/maximumConnectionsPerAddress`` from one
///   client address, a connection's first request is answered 503 with `Retry-After` and the
///   connection closed (so one source cannot hold every connection idle);
/// - **request read timeout**: a request must arrive completely (head and body) within
///   ``TableServer/Configuration/requestReadTimeout`` of its first byte, or it is answered 408 and
///   the connection closed (slow partial requests cannot hold a connection);
/// - **a client that does not read**: Hummingbird stops reading requests while an answer cannot be
///   written; such a connection is closed once it has not been writable for
///   ``TableServer/Configuration/idleTimeout``;
/// - **keep-alive** as HTTP/1.0 and 1.1 define it, from every `Connection` header of the request
///   (`close` anywhere closes; an HTTP/1.0 request stays open only with `keep-alive`); requests
///   pipelined after one that closes are dropped;
/// - **a body over the limit** (``TableServer/Configuration/maximumBodyBytes``, or
///   ``TableServer/Configuration/maximumBatchBodyBytes`` for `POST /$batch`) declared by
///   `Content-Length` is answered 413 before the body arrives, and the connection closed;
/// - **malformed requests** (which NIO's parser rejects) get a JSON error saying what was wrong,
///   after the answers to the requests before them, and the connection closes; a CONNECT request
///   gets a complete refusal and the connection closes;
/// - every answer the connection ends with is followed by a close within a few seconds even when
///   it cannot be written, e.g. to a TLS client whose handshake never finished.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What the guard needs of the server's configuration.
    struct Settings: Sendable {
        var maximumBodyBytes: Int
        var maximumBatchBodyBytes: Int
        var requestReadTimeout: Duration
        var idleTimeout: Duration
        var serverName: String
        var dates: ResponseDate
    }

    private let settings: Settings
    private let gauge: ConnectionGauge
    private let logger: Logger
    private var address: String?
    private var refusal: ConnectionGauge.Refusal?
    private var counted = false

    /// The keep-alive wish of each request passed on whose answer has not ended, oldest first.
    private var owed: [(keepAlive: Bool, isHTTP10: Bool)] = []
    /// A request has been passed on whose end has not arrived yet.
    private var receiving = false
    /// The connection ends: nothing more is read as a request.
    private var closing = false
    /// The answer the connection ends with, written once the answers owed before it are.
    private var finalAnswer: TableProtocol.Answer?
    /// The connection's final answer is decided (see ``end(with:context:pastEncoder:)``).
    private var ended = false
    private var readTimer: Scheduled<Void>?
    private var stalledTimer: Scheduled<Void>?
    /// The answer being passed on closes the connection once it ends.
    private var closesAfterAnswer = false

    /// How long an answer that ends the connection may take to be written before the
    /// connection is closed anyway.
    private static let finalAnswerGrace = TimeAmount.seconds(5)

    init(settings: Settings, gauge: ConnectionGauge, logger: Logger) {
        self.settings = settings
        self.gauge = gauge
        self.logger = logger
    }

    // MARK: Life of the connection

    func handlerAdded(context: ChannelHandlerContext) {
        address = context.channel.remoteAddress?.ipAddress
        refusal = gauge.open(address: address)
        counted = true
        let bytes = RequestBytesObserver { [weak self] in self?.bytesArrived(context: context) }
        try? context.pipeline.syncOperations.addHandler(bytes, position: .first)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { gauge.close(address: address) }
        counted = false
        readTimer?.cancel()
        stalledTimer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        readTimer?.cancel()
        stalledTimer?.cancel()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stalledTimer?.cancel()
            stalledTimer = nil
        } else if stalledTimer == nil {
            stalledTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .init(settings.idleTimeout)) {
                self.stalledTimer = nil
                guard !context.channel.isWritable, context.channel.isActive else { return }
                self.logger.info("closing a connection whose client did not read its answers for the idle timeout")
                self.closing = true
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            guard !closing else { return }
            startReadTimer(context: context)
            if let refusal {
                logger.info("refusing a connection from \(address ?? "an unknown address") beyond a connection limit: \(refusal)")
                end(with: Self.refused(refusal), context: context)
                return
            }
            if head.method == .CONNECT {
                end(
                    with: TableProtocol.error(405, "this server does not tunnel: CONNECT is not supported"),
                    context: context, pastEncoder: true)
                return
            }
            let limit =
                head.uri.prefix(while: { $0 != "?" }) == "/$batch"
                ? settings.maximumBatchBodyBytes : settings.maximumBodyBytes
            if let field = head.headers.first(name: "content-length"), Self.exceeds(field, limit) {
                // Answered before the body arrives: a client waiting for `100 Continue` (or
                // sending slowly) learns at once, instead of at the read timeout.
                logger.info("closing a connection whose request declares a body of \(field) bytes, over the limit")
                end(with: TableProtocol.bodyTooLarge(limit: limit), context: context)
                return
            }
            let tokens = head.headers[canonicalForm: "connection"].map { $0.lowercased() }
            let isHTTP10 = head.version == .http1_0
            let keepAlive = !tokens.contains("close") && (!isHTTP10 || tokens.contains("keep-alive"))
            owed.append((keepAlive, isHTTP10))
            receiving = true
            if !keepAlive {
                // What the client pipelines after this request is not read.
                closing = true
            }
            context.fireChannelRead(data)
        case .body:
            guard receiving, !ended else { return }
            context.fireChannelRead(data)
        case .end:
            guard receiving, !ended else { return }
            receiving = false
            readTimer?.cancel()
            readTimer = nil
            context.fireChannelRead(data)
        }
    }

    /// `true` when a `Content-Length` value declares more than `limit` bytes, including a run of
    /// digits too long for an `Int` (which the parser would only refuse once the body is read).
    static func exceeds(_ contentLength: String, _ limit: Int) -> Bool {
        if let declared = Int(contentLength) { return declared > limit }
        return !contentLength.isEmpty
            && contentLength.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// A request the HTTP parser rejects (malformed head, head too large, bad chunking) gets a
    /// JSON error saying what was wrong, after the answers to the requests before it, and the
    /// connection closes: the rest of its bytes cannot be trusted. Bytes after a request that
    /// closes the connection are dropped, not an error.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !closing, parserError != .closedConnection else { return }
        logger.info("closing a connection after a malformed request: \(error)")
        let tooLarge = parserError == .headerOverflow
        end(
            with: TableProtocol.error(
                tooLarge ? 431 : 400,
                tooLarge
                    ? "the request head is larger than the server accepts; shorten the URL or the headers"
                    : "the request is not valid HTTP/1.1: \(Self.describe(parserError))"),
            context: context)
    }

    // MARK: Answers

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let wish = owed.first ?? (true, false)
            if !wish.keepAlive {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                closesAfterAnswer = true
            } else if wish.isHTTP10 {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            context.write(data, promise: promise)
            if !owed.isEmpty { owed.removeFirst() }
            if closesAfterAnswer {
                closing = true
                context.flush()
                Self.closeAfterAnswer(context)
            } else if let answer = finalAnswer, owedBeforeFinal == 0 {
                context.flush()
                sendFinal(answer, context: context)
            }
        }
    }

    /// The answers still owed before the connection's final answer: the requests passed on whose
    /// answers have not ended, but for one still arriving, which the final answer ends.
    private var owedBeforeFinal: Int { owed.count - (receiving ? 1 : 0) }

    /// Ends the connection with `answer`: at once when no answer is owed, else right after the
    /// answers to the requests before it. Nothing more is read.
    private func end(with answer: TableProtocol.Answer, context: ChannelHandlerContext, pastEncoder: Bool = false) {
        guard !ended else { return }
        ended = true
        closing = true
        readTimer?.cancel()
        readTimer = nil
        var answer = answer
        if pastEncoder { answer.logDetail = Self.pastEncoderMark }
        if owedBeforeFinal <= 0 {
            sendFinal(answer, context: context)
        } else {
            finalAnswer = answer
        }
    }

    /// Marks an answer written past NIO's response encoder (see ``writePastEncoder(_:context:)``).
    private static let pastEncoderMark = "past-encoder"

    /// Writes an answer the connection ends with, then closes it.
    private func sendFinal(_ answer: TableProtocol.Answer, context: ChannelHandlerContext) {
        finalAnswer = nil
        var headers = HTTPHeaders(answer.headers)
        headers.replaceOrAdd(name: "content-length", value: String(answer.body.count))
        headers.replaceOrAdd(name: "connection", value: "close")
        headers.replaceOrAdd(name: "server", value: settings.serverName)
        headers.replaceOrAdd(name: "date", value: settings.dates.now)
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        if answer.logDetail == Self.pastEncoderMark {
            Self.writePastEncoder(head, body: answer.body, context: context)
            context.flush()
            Self.closeAfterAnswer(context)
        } else {
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: answer.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                Self.closeAfterAnswer(context)
            }
        }
        // The write may never complete (a TLS handshake that never finished buffers it; a client
        // that does not read): the connection closes after a grace period anyway.
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.finalAnswerGrace) { context.close(promise: nil) }
    }

    /// Writes an answer to a CONNECT request whole, past NIO's response encoder: the encoder
    /// sends such an answer without its length and body (a 2xx one would turn the connection
    /// into a tunnel), but the server never tunnels, so its refusal is an ordinary complete answer.
    private static func writePastEncoder(_ head: HTTPResponseHead, body: [UInt8], context: ChannelHandlerContext) {
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            context.close(promise: nil)
            return
        }
        var text = "HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n"
        for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        var bytes = context.channel.allocator.buffer(string: text)
        bytes.writeBytes(body)
        encoder.write(NIOAny(IOData.byteBuffer(bytes)), promise: nil)
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

    /// The 503 of a connection beyond a limit.
    private static func refused(_ refusal: ConnectionGauge.Refusal) -> TableProtocol.Answer {
        let message: String
        switch refusal {
        case .serverFull(let limit):
            message = "the server has \(limit) connections open, its limit; retry in a moment or close idle connections"
        case .addressFull(let limit):
            message =
                "your address has \(limit) connections open to this server, its limit per client; retry in a moment or close idle connections"
        }
        var answer = TableProtocol.error(503, message)
        answer.headers.append(("Retry-After", "1"))
        return answer
    }

    // MARK: Timers

    /// Bytes of a request arrived: unless running, the read timer starts.
    private func bytesArrived(context: ChannelHandlerContext) {
        startReadTimer(context: context)
    }

    private func startReadTimer(context: ChannelHandlerContext) {
        guard readTimer == nil, !closing else { return }
        readTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .init(settings.requestReadTimeout)) {
            self.readTimer = nil
            guard !self.ended, !self.closing || self.receiving else { return }
            let seconds = self.settings.requestReadTimeout.components.seconds
            self.logger.info("closing a connection whose request did not arrive within \(seconds) s")
            self.end(
                with: TableProtocol.error(
                    408, "the request did not arrive completely within \(seconds) s; send the whole request at once"),
                context: context)
        }
    }

    /// What an HTTP parser error means, in words.
    private static func describe(_ error: HTTPParserError) -> String {
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

extension HTTPHeaders {
    /// Headers from name–value pairs.
    fileprivate init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { add(name: name, value: value) }
    }
}
