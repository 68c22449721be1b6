import Foundation
import OfflineSync
import OfflineSyncHTTP
import OfflineSyncServer
import Synchronization
import Testing

/// Pushes with `HTTPRemote.Configuration.pushPipelineDepth` above 1: several writes in flight on
/// one connection, sent and applied in queue order, and every failure path of a push still
/// losing nothing.
@Suite("Pipelined push over HTTP")
struct PipelinedPushTests {
    /// Counts the operations a push has handed to the handler and not yet seen answered.
    final class InFlightCounter: PushHandler {
        private let counts = Locked((current: 0, most: 0))

        var most: Int { counts.withLock { $0.most } }

        func push(_ operation: PushOperation) async throws -> PushOutcome {
            counts.withLock {
                $0.current += 1
                $0.most = max($0.most, $0.current)
            }
            defer { counts.withLock { $0.current -= 1 } }
            return .pushed(try await operation.execute())
        }
    }

    /// A table server's answer to a write: the sent item with a version, as the Azure servers
    /// answer (201 to a POST, 200 to a PATCH, 204 to a DELETE).
    static func answer(_ request: ReceivedRequest) -> ScriptedResponse {
        if request.method == "DELETE" { return ScriptedResponse(status: 204) }
        var body = request.body
        body.insert(contentsOf: Array(#""version":"v1","#.utf8), at: 1)
        return ScriptedResponse(
            status: request.method == "POST" ? 201 : 200, headers: [("Content-Type", "application/json")], body: body)
    }

    /// The id a write request is about: the last path segment, or the body's `id` for a POST.
    static func itemId(_ request: ReceivedRequest) -> String {
        if request.method != "POST" { return String(request.target.split(separator: "/").last ?? "") }
        let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        return object?["id"] as? String ?? ""
    }

    @Test("writes go out in queue order with several in flight, inserts, updates and deletes alike")
    func queueOrder() async throws {
        let log = RequestLog()
        let counter = InFlightCounter()
        try await withLoopbackServer({ request in
            log.append(request)
            var answer = Self.answer(request)
            answer.delay = .milliseconds(1)
            return answer
        }) { port in
            let device = try Device.make(
                "device", store: InMemoryStore(), port: port, handler: counter, pipelineDepth: 8)
            _ = try device.todo.insert((0..<150).map { Device.todo(String(format: "o%03d", $0), "first \($0)") })
            var result = try await device.context.push()
            #expect(result.completedCount == 150 && result.errors.isEmpty)
            // A queue of updates and deletes, in an order that is not the id order.
            for index in stride(from: 149, through: 0, by: -3) {
                if index % 2 == 0 {
                    try device.todo.delete(id: String(format: "o%03d", index))
                } else {
                    try device.todo.update(Device.todo(String(format: "o%03d", index), "second \(index)"))
                }
            }
            let queued = try device.context.pendingOperations().map {
                "\($0.kind == .delete ? "DELETE" : "PATCH") \($0.itemId)"
            }
            result = try await device.context.push()
            #expect(result.completedCount == queued.count && result.errors.isEmpty)
            let sent = log.all.map { "\($0.method) \(Self.itemId($0))" }
            #expect(
                Array(sent.prefix(150)) == (0..<150).map { String(format: "POST o%03d", $0) }, "inserts in queue order")
            #expect(Array(sent.dropFirst(150)) == queued, "updates and deletes in queue order")
            #expect(
                log.all.filter { $0.method == "PATCH" || $0.method == "DELETE" }.allSatisfy {
                    $0.header("If-Match") == "\"v1\""
                })
            #expect(try device.context.pendingOperationCount() == 0)
            try await device.close()
        }
        #expect(counter.most > 1, "writes were in flight together (at most \(counter.most))")
        #expect(counter.most <= 8, "never more than the depth in flight (at most \(counter.most))")
    }

    @Test("writes in flight that all meet a 401 renew the credential once, then all go through")
    func oneRenewal() async throws {
        let token = Locked("stale")
        let renewals = Locked(0)
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            try await Task.sleep(for: .milliseconds(1))
            return request.header("X-ZUMO-AUTH") == "fresh" ? Self.answer(request) : ScriptedResponse(status: 401)
        }) { port in
            let authentication = HTTPAuthentication.zumo(
                token: { token.withLock { $0 } },
                refresh: {
                    renewals.withLock { $0 += 1 }
                    try await Task.sleep(for: .milliseconds(20))
                    token.withLock { $0 = "fresh" }
                    return "fresh"
                })
            let device = try Device.make("device", store: InMemoryStore(), port: port, pipelineDepth: 16) {
                $0.authentication = authentication
            }
            _ = try device.todo.insert((0..<40).map { Device.todo(String(format: "a%02d", $0), "text \($0)") })
            let result = try await device.context.push()
            #expect(result.completedCount == 40 && result.errors.isEmpty)
            try await device.close()
        }
        #expect(renewals.withLock { $0 } == 1, "one renewal for every write that met the 401")
        let applied = log.all.filter { $0.header("X-ZUMO-AUTH") == "fresh" }.map(Self.itemId)
        #expect(applied.sorted() == (0..<40).map { String(format: "a%02d", $0) }, "each write went through once")
    }

    @Test(
        "a refused connection is tried again with the writes waiting, then aborts the push with the queue intact",
        .timeLimit(.minutes(1)))
    func refused() async throws {
        let refusing = try RefusingPort()
        let port = refusing.port
        defer { withExtendedLifetime(refusing) {} }
        let warnings = LogCapture()
        let device = try Device.make("device", store: InMemoryStore(), port: port, pipelineDepth: 16) {
            $0.readRetries = 2
            $0.retryDelay = .milliseconds(1)
            $0.connectTimeout = .seconds(3600)
            $0.logger = warnings.logger
        }
        _ = try device.todo.insert((0..<20).map { Device.todo("r\($0)", "text") })
        let failure = await #expect(throws: PushFailure.self) { try await device.context.push() }
        #expect(failure?.status == .abortedByNetwork)
        #expect(
            failure?.message.contains("could not connect to http://127.0.0.1:\(port)") == true,
            "\(String(describing: failure))")
        #expect(try device.context.pendingOperationCount() == 20)
        #expect(try device.context.operationErrors().isEmpty)
        // Each round of connecting is tried 3 times; writes handed over before the push saw the
        // failure may start another round.
        let retries = warnings.messages.filter { $0.hasPrefix("connecting to 127.0.0.1:\(port) again") }.count
        #expect(retries >= 2 && retries % 2 == 0, "\(warnings.messages)")
        try await device.close()
    }

    @Test("an answer that outlives the request timeout aborts the push with the queue intact")
    func timeout() async throws {
        try await withLoopbackServer({ request in
            var answer = Self.answer(request)
            answer.delay = .seconds(2)
            return answer
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port, pipelineDepth: 16) {
                $0.requestTimeout = .milliseconds(200)
            }
            _ = try device.todo.insert((0..<10).map { Device.todo("t\($0)", "text") })
            let failure = await #expect(throws: PushFailure.self) { try await device.context.push() }
            #expect(failure?.status == .abortedByNetwork)
            #expect(failure?.message.contains("timed out") == true, "\(String(describing: failure))")
            #expect(try device.context.pendingOperationCount() == 10)
            try await device.close()
        }
    }

    @Test("the tutorial's devices agree after pipelined pushes through the reference server")
    func referenceServer() async throws {
        let directory = try TemporaryDirectory()
        let service = try EndToEndTests.service(EndToEndTests.sqliteStore("server", in: directory))
        let server = try await RunningServer.start(service)
        let alice = try Device.make(
            "alice", store: EndToEndTests.sqliteStore("alice", in: directory), port: server.port, pipelineDepth: 16)
        let bob = try Device.make("bob", store: InMemoryStore(), port: server.port, pipelineDepth: 16)
        _ = try alice.todo.insert((0..<300).map { Device.todo(String(format: "t%03d", $0), "alice \($0)") })
        #expect(try await alice.context.push().completedCount == 300)
        try await bob.pullAll()
        for index in stride(from: 0, to: 300, by: 7) {
            try bob.todo.update(Device.todo(String(format: "t%03d", index), "bob \(index)"))
        }
        try bob.todo.delete(id: "t001")
        let pushed = try await bob.context.push()
        #expect(pushed.errors.isEmpty && pushed.completedCount == 44)
        try await alice.pullAll()
        let aliceItems = try alice.items()
        let bobItems = try bob.items()
        #expect(aliceItems.count == 299 && aliceItems["t001"] == nil)
        #expect(aliceItems.keys.sorted() == bobItems.keys.sorted())
        for (id, item) in aliceItems {
            #expect(item["text"] == bobItems[id]?["text"] && item.version == bobItems[id]?.version, "'\(id)' agrees")
        }
        try await EndToEndTests.shutDown(alice, bob, server: server)
    }
}
