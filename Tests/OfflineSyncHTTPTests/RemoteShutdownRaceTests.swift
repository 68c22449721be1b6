import Foundation
import NIOCore
import NIOPosix
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Testing

/// A remote shut down right after the answer to a write.
///
/// When a request's task and its connection were on different event loops, AsyncHTTPClient 1.37
/// could hand the connection back to its pool after `shutdown()` had closed and forgotten it,
/// and stopped the process with "A connection that we don't know was released? Something is
/// very wrong...". The window opens when the whole answer arrives before the end of the request
/// body has crossed over to the connection's loop: on a loaded machine with any server (once in
/// 14 runs of the loopback benchmark), every time with a server that answers as soon as it has
/// read a request's head (a proxy refusing a write, a server refusing a body it will not read).
/// A failure here is that crash, which ends the test process.
@Suite("Shutting a remote down right after a write")
struct RemoteShutdownRaceTests {
    @Test("a remote shut down as soon as its writes are answered before their bodies were read ends cleanly")
    func shutdownAfterEarlyAnswers() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { $0.pipeline.addHandler(EarlyAnswerHandler()) }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        do {
            var stored = 0
            for round in 0..<40 {
                let remote = try HTTPRemote(configuration: HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(port)"))
                // Several writes on one remote: its connection stays on one event loop while the
                // tasks of its requests would go round the client's loops.
                for write in 0..<4 {
                    let item = Item(id: "r\(round)-\(write)", values: ["text": .string(String(repeating: "x", count: 200))])
                    let answer = try await remote.insert(item, into: "todoitem")
                    #expect(answer.version == "1")
                    stored += 1
                }
                try await remote.shutdown()
            }
            #expect(stored == 160)
        } catch {
            try? await channel.close()
            try? await group.shutdownGracefully()
            throw error
        }
        try await channel.close()
        try await group.shutdownGracefully()
    }
}

/// Answers each request with 201 and a stored item as soon as its head has arrived, then skips its body
/// (`Content-Length` bytes) without waiting for it; the connection stays open.
private final class EarlyAnswerHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var pending: [UInt8] = []
    /// Body bytes of the current request still to skip.
    private var skipping = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while true {
            if skipping > 0 {
                let skipped = min(skipping, pending.count)
                pending.removeFirst(skipped)
                skipping -= skipped
                if skipping > 0 { return }
            }
            guard let end = headEnd() else { return }
            let head = String(decoding: pending[..<end], as: UTF8.self).lowercased()
            pending.removeFirst(end + 4)
            skipping =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            // The id of the answer is the one the remote sent: the request's target is the table,
            // the id is in the body this server does not read; the remote takes the answer's id.
            let body = #"{"id":"any","version":"1","updatedAt":"2026-01-01T00:00:00.000Z","deleted":false}"#
            let answer =
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
        }
    }

    private func headEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0...(pending.count - 4)
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }
}
