import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// Answers table requests on the connection's event loop, in the order they arrive.
///
/// It sits in Hummingbird's HTTP/1.1 pipeline right after the request decoder and takes every
/// request itself: the body is gathered (up to the limit; a larger one is answered 413), the
/// answer computed by `TableProtocol` (which is synchronous) and written back, and the answers
/// to the requests of one read leave in one flush. Nothing goes through an async task, so a
/// request costs no hop between threads; that is what lets a client pipeline its writes (see
/// `HTTPRemote.Configuration.pushPipelineDepth`) and have them applied at the pace of the store.
/// Requests of one connection are applied one after another, in the order they were sent.
final class TableChannelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let tableProtocol: TableProtocol
    private let maximumBodyBytes: Int
    private let serverName: String
    private let logger: Logger

    private var head: HTTPRequest?
    private var body: [UInt8] = []
    private var tooLarge = false
    private var start = ContinuousClock.now
    private var unflushed = false
    private var closeAfterFlush = false
    private var date = HTTPDate()

    init(tableProtocol: TableProtocol, maximumBodyBytes: Int, serverName: String, logger: Logger) {
        self.tableProtocol = tableProtocol
        self.maximumBodyBytes = maximumBodyBytes
        self.serverName = serverName
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
            body.removeAll(keepingCapacity: true)
            tooLarge = false
            start = .now
        case .body(let bytes):
            guard !tooLarge else { return }
            if body.count + bytes.readableBytes > maximumBodyBytes {
                tooLarge = true
                body = []
            } else {
                body.append(contentsOf: bytes.readableBytesView)
            }
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context)
        context.fireChannelReadComplete()
        // The connection reads only on demand (Hummingbird's async channel turns automatic
        // reading off); every request is answered by now, so ask for the next bytes at once.
        context.read()
    }

    private func respond(to request: HTTPRequest, context: ChannelHandlerContext) {
        let limit = maximumBodyBytes
        let answer: TableProtocol.Answer
        if tooLarge {
            answer = TableProtocol.error(413, "the request body is larger than \(limit) bytes")
        } else {
            answer = tableProtocol.respond(
                to: TableProtocol.Request(
                    method: request.method.rawValue, target: request.path ?? "/",
                    fields: request.headerFields, body: body))
        }
        var fields = answer.fields
        fields[.contentLength] = String(answer.body.count)
        fields[.date] = date.now()
        fields[.server] = serverName
        context.write(
            wrapOutboundOut(.head(HTTPResponse(status: .init(code: answer.status), headerFields: fields))), promise: nil
        )
        if !answer.body.isEmpty {
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        unflushed = true
        logger.info(
            "\(request.method.rawValue) \(request.path ?? "/") \(answer.status) \(Self.milliseconds(since: start)) ms")
        if request.headerFields[.connection]?.lowercased() == "close" {
            closeAfterFlush = true
            flush(context)
        }
    }

    private func flush(_ context: ChannelHandlerContext) {
        guard unflushed else { return }
        unflushed = false
        context.flush()
        if closeAfterFlush { context.close(promise: nil) }
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        let microseconds = elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000
        return "\(microseconds / 1000).\(microseconds % 1000 / 100)"
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
