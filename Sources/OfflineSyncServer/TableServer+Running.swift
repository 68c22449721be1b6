extension TableServer {
    /// A server started with ``TableServer/start()``, running in a task of its own.
    public final class Running: Sendable {
        /// The port the server listens on.
        public let port: Int
        private let task: Task<Void, any Error>

        init(port: Int, task: Task<Void, any Error>) {
            self.port = port
            self.task = task
        }

        /// Stops the server as SIGTERM does (no new connections, requests in progress finish)
        /// and waits until it no longer listens.
        public func stop() async {
            task.cancel()
            _ = await task.result
        }
    }

    /// Starts serving in a new task and returns once the server accepts requests (with
    /// ``Configuration/port`` `0`, ``Running/port`` tells which port it got). Throws the server's
    /// error when it cannot listen (for example, the port is taken).
    public func start() async throws -> Running {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task {
            defer { continuation.finish() }
            try await run { continuation.yield($0) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return Running(port: port, task: task)
    }
}
