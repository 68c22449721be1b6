import Hummingbird
import Logging
import NIOCore
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import Synchronization

@testable import OfflineSyncServer

/// A request context that keeps the connection, so the server can drop it.
struct ConnectionContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The reference server with a crash switch: after ``crash(afterAnswering:)`` it answers that
/// many more requests, applies the next one and drops its connection before answering (the
/// client never learns the outcome), then drops every connection without applying anything —
/// a process killed in the middle of a push, as the client sees it. ``restart()`` brings it
/// back over the same store.
final class CrashingServer: Sendable {
    private enum Mode { case serving, crashing(remaining: Int), down }
    private let mode = Locked(Mode.serving)
    private let task: Task<Void, any Error>
    let port: Int

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    static func start(_ service: TableService) async throws -> CrashingServer {
        let tableProtocol = TableProtocol(service: service, createsTables: false)
        let box = Locked<CrashingServer?>(nil)
        let responder = CallbackResponder<ConnectionContext> { request, context in
            let table = try await TableServer.tableRequest(request, maximumBodyBytes: 1 << 20)
            let (apply, answer) = box.withLock { $0?.decide() } ?? (true, true)
            if apply {
                let response = tableProtocol.respond(to: table)
                if answer { return TableServer.response(response) }
            }
            context.channel.close(promise: nil)
            throw CancellationError()
        }
        var logger = Logger(label: "crashing-server")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let task = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let server = CrashingServer(port: port, task: task)
        box.withLock { $0 = server }
        return server
    }

    /// Whether to apply the current request, and whether to answer it.
    private func decide() -> (apply: Bool, answer: Bool) {
        mode.withLock { mode in
            switch mode {
            case .serving: return (true, true)
            case .crashing(let remaining) where remaining > 0:
                mode = .crashing(remaining: remaining - 1)
                return (true, true)
            case .crashing:
                mode = .down
                return (true, false)
            case .down: return (false, false)
            }
        }
    }

    /// Answers `count` more requests, then crashes.
    func crash(afterAnswering count: Int) {
        mode.withLock { $0 = .crashing(remaining: count) }
    }

    /// `true` once the crash happened.
    var isDown: Bool {
        mode.withLock { if case .down = $0 { return true } else { return false } }
    }

    /// Serves again, over the same store.
    func restart() {
        mode.withLock { $0 = .serving }
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
