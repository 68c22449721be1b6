import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import OfflineSyncServer
import Synchronization
import Testing

/// Pushes that send each chunk of writes as one `POST /$batch` to a server that takes it, and one
/// request per write to a server that does not, every failure path of a push still losing nothing.
@Suite("Batched push over HTTP")
struct BatchedPushTests {
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

    /// The requests of a batch request, each as a request of its own.
    static func parts(of batch: ReceivedRequest) -> [ReceivedRequest] {
        let object = try? JSONSerialization.jsonObject(with: Data(batch.body)) as? [String: Any]
        let requests = (object?["requests"] as? [[String: Any]]) ?? []
        return requests.map { part in
            let body = part["body"].flatMap { try? JSONSerialization.data(withJSONObject: $0) }.map { Array($0) } ?? []
            let headers = ((part["headers"] as? [String: String]) ?? [:]).map { (name: $0.key.lowercased(), value: $0.value) }
            return ReceivedRequest(
                method: part["method"] as? String ?? "", target: part["url"] as? String ?? "", headers: headers,
                body: body)
        }
    }

    /// A server that takes batches: each request of a batch answered by ``answer(_:)``.
    static func batchAnswer(_ request: ReceivedRequest) -> ScriptedResponse {
        let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        let ids = ((object?["requests"] as? [[String: Any]]) ?? []).map { $0["id"] as? String ?? "" }
        let responses = zip(ids, parts(of: request)).map { id, part -> [String: Any] in
            let answer = Self.answer(part)
            var response: [String: Any] = ["id": id, "status": answer.status]
            if !answer.body.isEmpty { response["body"] = try? JSONSerialization.jsonObject(with: Data(answer.body)) }
            return response
        }
        let body = (try? JSONSerialization.data(withJSONObject: ["responses": responses])).map { Array($0) } ?? []
        return ScriptedResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }

    @Test("a push sends each chunk of 64 writes as one batch, each in queue order, with If-Match on each write")
    func chunksAsBatches() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return request.target == "/$batch" ? Self.batchAnswer(request) : Self.answer(request)
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port)
            _ = try device.todo.insert((0..<150).map { Device.todo(String(format: "o%03d", $0), "first \($0)") })
            var result = try await device.context.push()
            #expect(result.completedCount == 150 && result.errors.isEmpty)
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
            #expect(log.all.allSatisfy { $0.target == "/$batch" && $0.method == "POST" }, "every write in a batch")
            // Chunks after the first may reach the server in any order (several are on their
            // way at once); each chunk's writes are in queue order. The first batch of each push
            // goes alone, so the pushes' batches do not mix.
            let batches = log.all.map(Self.parts)
            func chunks(_ batches: ArraySlice<[ReceivedRequest]>) -> [[String]] {
                batches.map { $0.map { "\($0.method) \(Self.itemId($0))" } }.sorted { $0.first ?? "" < $1.first ?? "" }
            }
            #expect(batches.count == 5 && batches.first?.isEmpty == true, "the question, then one batch per chunk")
            let inserts = (0..<150).map { String(format: "POST o%03d", $0) }
            #expect(chunks(batches[1..<4]) == [Array(inserts[0..<64]), Array(inserts[64..<128]), Array(inserts[128...])])
            #expect(chunks(batches[4...]) == [queued], "updates and deletes in queue order")
            #expect(batches[4].allSatisfy { $0.header("If-Match") == "\"v1\"" })
            #expect(try device.context.pendingOperationCount() == 0)
            try await device.close()
        }
    }

    @Test("to a server without $batch, writes go one request each, and the server is asked only once")
    func serverWithoutBatch() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return request.target == "/$batch"
                ? ScriptedResponse(status: 404, headers: [("Content-Type", "application/json")], body: Array(#"{"error":"not found"}"#.utf8))
                : Self.answer(request)
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port)
            for round in 0..<2 {
                _ = try device.todo.insert((0..<10).map { Device.todo("r\(round)-\($0)", "text") })
                let result = try await device.context.push()
                #expect(result.completedCount == 10 && result.errors.isEmpty)
            }
            try await device.close()
        }
        #expect(log.all.filter { $0.target == "/$batch" }.count == 1, "one question for the remote's life")
        #expect(log.all.filter { $0.target == "/tables/todoitem" }.count == 20, "one POST per insert")
    }

    @Test("a failed question (the network) aborts the push with the queue intact and is asked again")
    func questionFailsWithTheNetwork() async throws {
        let refusing = try RefusingPort()
        let port = refusing.port
        defer { withExtendedLifetime(refusing) {} }
        let device = try Device.make("device", store: InMemoryStore(), port: port) {
            $0.readRetries = 0
        }
        _ = try device.todo.insert((0..<5).map { Device.todo("q\($0)", "text") })
        let failure = await #expect(throws: PushFailure.self) { try await device.context.push() }
        #expect(failure?.status == .abortedByNetwork)
        #expect(try device.context.pendingOperationCount() == 5)
        #expect(try device.context.operationErrors().isEmpty)
        try await device.close()
    }

    @Test("a batch that meets a 401 renews the credential once, then goes through, each write applied once")
    func oneRenewal() async throws {
        let token = Locked("stale")
        let renewals = Locked(0)
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return request.header("X-ZUMO-AUTH") == "fresh" ? Self.batchAnswer(request) : ScriptedResponse(status: 401)
        }) { port in
            let authentication = HTTPAuthentication.zumo(
                token: { token.withLock { $0 } },
                refresh: {
                    renewals.withLock { $0 += 1 }
                    token.withLock { $0 = "fresh" }
                    return "fresh"
                })
            let device = try Device.make("device", store: InMemoryStore(), port: port, batchWrites: .always) {
                $0.authentication = authentication
            }
            _ = try device.todo.insert((0..<40).map { Device.todo(String(format: "a%02d", $0), "text \($0)") })
            let result = try await device.context.push()
            #expect(result.completedCount == 40 && result.errors.isEmpty)
            try await device.close()
        }
        #expect(renewals.withLock { $0 } == 1)
        let applied = log.all.filter { $0.header("X-ZUMO-AUTH") == "fresh" }.flatMap(Self.parts).map(Self.itemId)
        #expect(applied.sorted() == (0..<40).map { String(format: "a%02d", $0) }, "each write went through once")
    }

    @Test("a batch the server refuses as too large is sent again one write at a time")
    func tooLargeBatchFallsBack() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return request.target == "/$batch"
                ? ScriptedResponse(status: 413, headers: [("Content-Type", "application/json")], body: Array(#"{"error":"too large"}"#.utf8))
                : Self.answer(request)
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port, batchWrites: .always)
            _ = try device.todo.insert((0..<5).map { Device.todo("b\($0)", "text") })
            let result = try await device.context.push()
            #expect(result.completedCount == 5 && result.errors.isEmpty)
            try await device.close()
        }
        #expect(log.all.map(\.target) == ["/$batch"] + Array(repeating: "/tables/todoitem", count: 5))
    }

    @Test("a batch whose answer outlives the request timeout aborts the push with the queue intact")
    func timeout() async throws {
        try await withLoopbackServer({ request in
            var answer = Self.batchAnswer(request)
            answer.delay = .seconds(2)
            return answer
        }) { port in
            let device = try Device.make("device", store: InMemoryStore(), port: port, batchWrites: .always) {
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

    @Test("the tutorial's devices agree after batched pushes through the reference server, conflicts included")
    func referenceServer() async throws {
        let directory = try TemporaryDirectory()
        let service = try EndToEndTests.service(EndToEndTests.sqliteStore("server", in: directory))
        let server = try await RunningServer.start(service)
        let alice = try Device.make(
            "alice", store: EndToEndTests.sqliteStore("alice", in: directory), port: server.port)
        let bob = try Device.make("bob", store: InMemoryStore(), port: server.port)
        _ = try alice.todo.insert((0..<300).map { Device.todo(String(format: "t%03d", $0), "alice \($0)") })
        #expect(try await alice.context.push().completedCount == 300)
        try await bob.pullAll()
        for index in stride(from: 0, to: 300, by: 7) {
            try bob.todo.update(Device.todo(String(format: "t%03d", index), "bob \(index)"))
        }
        try bob.todo.delete(id: "t001")
        // Alice edits one of Bob's items first: Bob's update of it meets a 412 in its batch.
        try alice.todo.update(Device.todo("t007", "alice again"))
        #expect(try await alice.context.push().completedCount == 1)
        let pushed = try await bob.context.push()
        #expect(pushed.completedCount == 43)
        #expect(pushed.errors.map(\.itemId) == ["t007"], "\(pushed.errors)")
        #expect(pushed.errors.first?.serverItem?["text"] == "alice again")
        try await alice.pullAll()
        let aliceItems = try alice.items()
        let bobItems = try bob.items()
        #expect(aliceItems.count == 299 && aliceItems["t001"] == nil)
        #expect(aliceItems.keys.sorted() == bobItems.keys.sorted())
        for (id, item) in aliceItems where id != "t007" {
            #expect(item["text"] == bobItems[id]?["text"] && item.version == bobItems[id]?.version, "'\(id)' agrees")
        }
        try await EndToEndTests.shutDown(alice, bob, server: server)
    }
}
