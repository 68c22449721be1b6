import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import NIOCore
import OfflineSyncServer
import Testing

@Suite("Stopping a started server")
struct ServerShutdownTests {
    /// A server of `todoitem` over a new in-memory store on a free port, logging into `capture`.
    static func server(logger capture: LogCapture) throws -> TableServer {
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([todoItemSchema]))
        return TableServer(
            service: try TableService(store: store), configuration: TableServer.Configuration(port: 0, logger: capture.logger))
    }

    @Test("shuts down gracefully: a connection left open is closed without an error logged")
    func stopIsGraceful() async throws {
        let capture = LogCapture()
        let server = try await Self.server(logger: capture).start()
        // The shared HTTP client keeps this connection open after the answer.
        let answer = try await send(
            "GET", "/tables/todoitem", port: server.port, headers: [("ZUMO-API-VERSION", "2.0.0")])
        #expect(answer.status == 200)
        await server.stop()
        let complaints = capture.messages.filter {
            $0.contains("Waiting on child channel") || $0.contains("CancellationError")
        }
        #expect(complaints.isEmpty, "stopping logged \(complaints)")
        await #expect(throws: (any Error).self) {
            // Refused: the client would retry the connection until its timeout.
            _ = try await send(
                "GET", "/tables/todoitem", port: server.port, headers: [("ZUMO-API-VERSION", "2.0.0")],
                timeout: .seconds(2))
        }
    }

    /// Cancelling the task of `run()`, which its doc comment gives as the way to stop it, logged
    /// "Server shutdown error: Already closed" and "Waiting on child channel: CancellationError()"
    /// at error level, and abandoned the connections still open.
    @Test("cancelling the task that runs the server stops it gracefully, without an error logged")
    func cancellingRunIsGraceful() async throws {
        let capture = LogCapture()
        let server = try Self.server(logger: capture)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let running = Task { try await server.run { continuation.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let answer = try await send("GET", "/tables/todoitem", port: port, headers: [("ZUMO-API-VERSION", "2.0.0")])
        #expect(answer.status == 200)
        running.cancel()
        try await running.value
        let complaints = capture.messages.filter {
            $0.contains("Waiting on child channel") || $0.contains("CancellationError") || $0.contains("shutdown error")
        }
        #expect(complaints.isEmpty, "cancelling logged \(complaints)")
        #expect(capture.messages.contains("server stopped"), "\(capture.messages)")
        await #expect(throws: (any Error).self) {
            _ = try await send(
                "GET", "/tables/todoitem", port: port, headers: [("ZUMO-API-VERSION", "2.0.0")], timeout: .seconds(2))
        }
    }
}
