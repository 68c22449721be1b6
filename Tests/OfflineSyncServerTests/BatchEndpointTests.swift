import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncServer
import OfflineSyncService
import Synchronization
import Testing

/// `POST /$batch`: an OData v4.01 JSON batch of table requests, each answered as alone, the
/// writes committed together.
@Suite("The $batch endpoint")
struct BatchEndpointTests {
    static let headers = [("ZUMO-API-VERSION", "2.0.0"), ("Content-Type", "application/json")]

    /// Sends a batch body and returns the answer.
    static func batch(_ body: String, port: Int, headers: [(String, String)] = BatchEndpointTests.headers)
        async throws -> RawAnswer
    {
        try await send("POST", "/$batch", port: port, headers: headers, body: Array(body.utf8))
    }

    /// The `responses` of a batch answer.
    static func responses(_ answer: RawAnswer) -> [[String: Any]] {
        ((answer.json as? [String: Any])?["responses"] as? [[String: Any]]) ?? []
    }

    static func statuses(_ answer: RawAnswer) -> [Int] {
        responses(answer).compactMap { $0["status"] as? Int }
    }

    static func body(_ response: [String: Any]) -> [String: Any] {
        (response["body"] as? [String: Any]) ?? [:]
    }

    static func error(_ answer: RawAnswer) -> String {
        ((answer.json as? [String: Any])?["error"] as? String) ?? ""
    }

    /// The ids stored in `todoitem`.
    static func storedIds(_ port: Int) async throws -> [String] {
        let answer = try await send("GET", "/tables/todoitem", port: port, headers: headers)
        return ((answer.json as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
    }

    @Test("each request is answered in order, as alone: 201 with the stored item and its ETag")
    func insertsAnsweredInOrder() async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"one"}},{"id":"2","method":"post","url":"tables/todoitem","headers":{"content-type":"application/json"},"body":{"id":"b","text":"two","complete":true}}]}"#,
                port: port)
            #expect(answer.status == 200)
            let responses = Self.responses(answer)
            #expect(responses.map { $0["id"] as? String } == ["1", "2"])
            #expect(Self.statuses(answer) == [201, 201])
            #expect(Self.body(responses[0])["text"] as? String == "one")
            #expect(Self.body(responses[1])["complete"] as? Bool == true)
            let headers = (responses[0]["headers"] as? [String: String]) ?? [:]
            #expect(headers["ETag"] == "\"\(Self.body(responses[0])["version"] as? String ?? "?")\"")
            #expect(try await Self.storedIds(port) == ["a", "b"])
        }
    }

    @Test("one request's failure fails only it: a repeated insert is a 409 with the server's copy")
    func failureFailsOnlyItsRequest() async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"first"}},{"id":"2","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"again"}},{"id":"3","method":"POST","url":"/tables/todoitem","body":{"id":"c","text":"third"}}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [201, 409, 201])
            #expect(Self.body(Self.responses(answer)[1])["text"] as? String == "first")
            #expect(try await Self.storedIds(port) == ["a", "c"])
        }
    }

    @Test("a stale If-Match in a batch is a 412 with the server's item; the next write applies")
    func staleVersionIsPreconditionFailed() async throws {
        try await withTableServer { port in
            let created = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.headers, body: Array(#"{"id":"a","text":"x"}"#.utf8))
            let version = try #require((created.json as? [String: Any])?["version"] as? String)
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"PATCH","url":"/tables/todoitem/a","headers":{"If-Match":"\"stale\""},"body":{"text":"y"}},{"id":"2","method":"PATCH","url":"/tables/todoitem/a","headers":{"If-Match":"\"\#(version)\""},"body":{"text":"z"}},{"id":"3","method":"DELETE","url":"/tables/todoitem/missing"}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [412, 200, 404])
            #expect(Self.body(Self.responses(answer)[0])["text"] as? String == "x")
            #expect(Self.body(Self.responses(answer)[1])["text"] as? String == "z")
        }
    }

    @Test("a read in a batch sees the writes before it")
    func readSeesEarlierWrites() async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"x"}},{"id":"2","method":"GET","url":"/tables/todoitem/a"},{"id":"3","method":"DELETE","url":"/tables/todoitem/a"},{"id":"4","method":"GET","url":"/tables/todoitem/a"}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [201, 200, 200, 404])
        }
    }

    @Test(
        "a malformed batch is a 400 naming the fault, and nothing of it is applied",
        arguments: [
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a"}},"#, "not valid JSON"),
            (#"{"request":[]}"#, "no \"requests\""),
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a"}},{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"b"}}]}"#, "repeats the id"),
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a"}},{"method":"POST","url":"/tables/todoitem"}]}"#, "has no \"id\""),
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","atomicityGroup":"g","body":{"id":"a"}}]}"#, "atomicityGroup"),
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","dependsOn":["2"],"body":{"id":"a"}},{"id":"2","method":"GET","url":"/tables/todoitem"}]}"#, "not an earlier request"),
            (#"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","headers":{"If-Match":1},"body":{"id":"a"}}]}"#, "not a string"),
            (#"[1,2]"#, "not a JSON object"),
        ])
    func malformedBatchChangesNothing(body: String, fault: String) async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(body, port: port)
            #expect(answer.status == 400)
            #expect(Self.error(answer).contains(fault), "\(Self.error(answer))")
            #expect(Self.error(answer).contains("nothing was applied"))
            #expect(try await Self.storedIds(port) == [])
        }
    }

    @Test("a batch of more requests than the server takes is a 413, and nothing of it is applied")
    func tooManyRequests() async throws {
        try await withTableServer(configure: { $0.maximumBatchRequests = 2 }) { port in
            let requests = (1...3).map {
                #"{"id":"\#($0)","method":"POST","url":"/tables/todoitem","body":{"id":"i\#($0)"}}"#
            }
            let answer = try await Self.batch(#"{"requests":[\#(requests.joined(separator: ","))]}"#, port: port)
            #expect(answer.status == 413)
            #expect(Self.error(answer).contains("at most 2"))
            #expect(try await Self.storedIds(port) == [])
        }
    }

    @Test("a batch body over the batch limit is a 413")
    func batchBodyTooLarge() async throws {
        try await withTableServer(configure: { $0.maximumBatchBodyBytes = 2048 }) { port in
            let text = String(repeating: "x", count: 4096)
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"\#(text)"}}]}"#,
                port: port)
            #expect(answer.status == 413)
            #expect(try await Self.storedIds(port) == [])
        }
    }

    @Test("a request that is not a table request is a 400 of its own; the others are applied")
    func onlyTableRequests() async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"GET","url":"/healthz"},{"id":"2","method":"POST","url":"/$batch","body":{"requests":[]}},{"id":"3","method":"POST","url":"http://example.com/tables/todoitem","body":{"id":"a"}}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [400, 400, 201])
            #expect(try await Self.storedIds(port) == ["a"])
        }
    }

    @Test("a request depending on one that failed is answered 424 and not applied")
    func failedDependency() async throws {
        try await withTableServer { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"PATCH","url":"/tables/todoitem/missing","body":{"text":"x"}},{"id":"2","method":"POST","url":"/tables/todoitem","dependsOn":["1"],"body":{"id":"a"}},{"id":"3","method":"POST","url":"/tables/todoitem","body":{"id":"b"}},{"id":"4","method":"POST","url":"/tables/todoitem","dependsOn":["3"],"body":{"id":"c"}}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [404, 424, 201, 201])
            #expect(try await Self.storedIds(port) == ["b", "c"])
        }
    }

    @Test("requests inherit the batch's headers: without ZUMO-API-VERSION on either, each is a 400")
    func inheritedHeaders() async throws {
        try await withTableServer { port in
            let body = #"{"requests":[{"id":"1","method":"GET","url":"/tables/todoitem"},{"id":"2","method":"GET","url":"/tables/todoitem","headers":{"ZUMO-API-VERSION":"2.0.0"}}]}"#
            #expect(Self.statuses(try await Self.batch(body, port: port)) == [200, 200])
            let bare = try await Self.batch(body, port: port, headers: [("Content-Type", "application/json")])
            #expect(Self.statuses(bare) == [400, 200])
        }
    }

    @Test("$batch answers POST only")
    func postOnly() async throws {
        try await withTableServer { port in
            let answer = try await send("GET", "/$batch", port: port, headers: Self.headers)
            #expect(answer.status == 405)
            #expect(answer.header("Allow") == "POST")
        }
    }

    @Test("the writes of a batch commit in one store transaction")
    func writesCommitTogether() async throws {
        let store = CountingStore()
        try await withTableServer(store: store) { port in
            let before = store.writes
            let requests = (1...20).map {
                #"{"id":"\#($0)","method":"POST","url":"/tables/todoitem","body":{"id":"i\#($0)","text":"t"}}"#
            }
            let answer = try await Self.batch(#"{"requests":[\#(requests.joined(separator: ","))]}"#, port: port)
            #expect(Self.statuses(answer) == Array(repeating: 201, count: 20))
            #expect(store.writes - before == 1)
        }
    }

    @Test("a write the store refuses inside the shared transaction fails alone; the others are applied")
    func storeFailureInSharedTransaction() async throws {
        let store = CountingStore(failingId: "bad")
        try await withTableServer(store: store) { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a"}},{"id":"2","method":"POST","url":"/tables/todoitem","body":{"id":"bad"}},{"id":"3","method":"POST","url":"/tables/todoitem","body":{"id":"c"}}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [201, 500, 201])
            #expect(try await Self.storedIds(port) == ["a", "c"])
        }
    }

    @Test("a write that widens the schema is applied in a batch like alone (dynamic schema)")
    func schemaChangeInBatch() async throws {
        try await withTableServer(options: .init(widensSchema: true), createsTables: true) { port in
            let answer = try await Self.batch(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a"}},{"id":"2","method":"POST","url":"/tables/todoitem","body":{"id":"b","priority":3}},{"id":"3","method":"POST","url":"/tables/notes","body":{"id":"n","title":"t"}},{"id":"4","method":"GET","url":"/tables/notes/n"}]}"#,
                port: port)
            #expect(Self.statuses(answer) == [201, 201, 201, 200])
            #expect(Self.body(Self.responses(answer)[1])["priority"] as? Int == 3)
        }
    }
}

/// An in-memory store that counts its write transactions and can refuse to store one id.
final class CountingStore: ForwardingStore {
    let inner: any LocalStore = InMemoryStore()
    private let count = Atomic<Int>(0)
    private let failingId: String?

    init(failingId: String? = nil) {
        self.failingId = failingId
    }

    /// The write transactions run so far.
    var writes: Int { count.load(ordering: .relaxed) }

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        count.wrappingAdd(1, ordering: .relaxed)
        guard let failingId else { return try inner.write(body) }
        return try inner.write { transaction in try body(RefusingTransaction(inner: transaction, id: failingId)) }
    }
}

/// A transaction whose upsert of one id fails as a broken store's would.
private struct RefusingTransaction: StoreTransaction {
    let inner: any StoreTransaction
    let id: String

    func read(_ query: Query) throws -> QueryResult { try inner.read(query) }
    func lookup(table: String, id: String) throws -> Item? { try inner.lookup(table: table, id: id) }
    func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
        if items.contains(where: { $0.id == id }) { throw OfflineSyncError(.storage, "disk I/O error") }
        try inner.upsert(items, into: table, origin: origin)
    }
    func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
        if items.contains(where: { $0.id == id }) { throw OfflineSyncError(.storage, "disk I/O error") }
        return try inner.insertNew(items, into: table, origin: origin)
    }
    func delete(ids: [String], from table: String) throws { try inner.delete(ids: ids, from: table) }
    func delete(matching query: Query) throws -> Int { try inner.delete(matching: query) }
}
