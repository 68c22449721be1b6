import OfflineSync
import OfflineSyncServer
import Testing

@Suite("Stopping a started server")
struct ServerShutdownTests {
    @Test("shuts down gracefully: a connection left open is closed without an error logged")
    func stopIsGraceful() async throws {
        let capture = LogCapture()
        let store = InMemoryStore()
        try store.open(schema: StoreSchema([todoItemSchema]))
        let service = try TableService(store: store)
        let server = try await TableServer(
            service: service, configuration: TableServer.Configuration(port: 0, logger: capture.logger)
        ).start()
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
            _ = try await send("GET", "/tables/todoitem", port: server.port, headers: [("ZUMO-API-VERSION", "2.0.0")])
        }
    }
}
