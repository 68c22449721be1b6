import ServiceLifecycle

extension TableServer {
    /// A server started with ``TableServer/start()``, running in a task of its own.
    public final class Running: Sendable {
        /// The port the server listens on.
        public let port: Int
        private let task: Task<Void, any Error>
        private let group: ServiceGroup

        init(port: Int, task: Task<Void, any Error>, group: ServiceGroup) {
            self.port = port
            self.task = task
            self.group = group
        }

        /// Stops the server as SIGTERM does (no new connections, requests in progress finish,
        /// idle connections are closed) and waits until it no longer listens and every connection
        /// is closed, so that the event loops it ran on can be shut down right after.
        public func stop() async {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    /// The server as a service of a `ServiceGroup`, so that ``Running/stop()`` can shut it down
    /// gracefully (cancelling its task instead would abandon the connections still closing).
    private struct ServerService: Service {
        let server: TableServer
        let onRunning: @Sendable (Int) async -> Void

        func run() async throws {
            try await server.run(onRunning: onRunning)
        }
    }

    /// Starts serving in a new task and returns once the server accepts requests (with
    /// ``Configuration/port`` `0`, ``Running/port`` tells which port it got). Throws the server's
    /// error when it cannot listen (for example, the port is taken).
    public func start() async throws -> Running {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [ServerService(server: self, onRunning: { continuation.yield($0) })],
                logger: configuration.logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return Running(port: port, task: task, group: group)
    }
}
