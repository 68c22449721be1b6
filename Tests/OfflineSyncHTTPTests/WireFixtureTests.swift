import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Synchronization
import Testing

/// The client replays the operations of the recorded JavaScript-client sessions against a server
/// that answers with the recorded responses: every request must equal the recorded one (method,
/// target byte for byte, headers, JSON body) and every answer must parse to the recorded items.
@Suite("HTTPRemote against recorded Azure Mobile Apps traffic")
struct WireFixtureTests {
    /// What a client call produced.
    enum Outcome {
        case page(QueryResult)
        case item(Item?)
        case deleted
        case failed(RemoteError)
    }

    typealias Operation = @Sendable (HTTPRemote) async throws -> Outcome

    static let table = "todoitem"

    static func read(_ query: Query = Query(table: table), includeDeleted: Bool = false) -> Operation {
        { .page(try await $0.readPage(query, includeDeleted: includeDeleted)) }
    }

    static func pull(since token: String, skip: Int = 0) -> Operation {
        let date = Timestamp(iso8601: token) ?? .epoch
        let query = Query(
            table: table, filter: .comparison(.column("updatedAt"), .ge, .literal(.date(date))),
            orderBy: [SortKey("updatedAt")], skip: skip, top: 50)
        return read(query, includeDeleted: true)
    }

    static func insert(_ id: String, _ values: [String: Value]) -> Operation {
        { .item(try await $0.insert(Item(id: id, values: values), into: table)) }
    }

    static func update(_ id: String, _ values: [String: Value], ifMatch version: String?) -> Operation {
        { remote in
            do {
                return .item(try await remote.update(Item(id: id, values: values), in: table, ifMatch: version))
            } catch let error as RemoteError {
                return .failed(error)
            }
        }
    }

    static func delete(_ id: String, ifMatch version: String?) -> Operation {
        {
            try await $0.delete(id: id, from: table, ifMatch: version)
            return .deleted
        }
    }

    static func lookup(_ id: String) -> Operation {
        { .item(try await $0.lookup(id: id, in: table)) }
    }

    static let firstId = "c2d2c651-cace-4613-9894-2142f4320abd"
    static let localId = "820731d4-80e0-44ad-86f5-8976e0e16bf0"

    /// The operations of `…--online.jsonl`, one per recorded exchange.
    static let online: [Operation] = [
        insert("", ["text": "first", "complete": false]),
        insert("fixed-id", ["text": "second", "complete": true]),
        read(),
        read(
            Query(
                table: table, filter: .comparison(.column("complete"), .eq, .literal(false)),
                orderBy: [SortKey("text")], top: 10)),
        read(Query(table: table, filter: .comparison(.column("text"), .eq, .literal("second")))),
        read(Query(table: table, top: 1, includeTotalCount: true)),
        lookup("fixed-id"),
        update(firstId, ["text": "first (edited)"], ifMatch: "MQ=="),
        update(firstId, ["text": "stale"], ifMatch: "MQ=="),
        delete("fixed-id", ifMatch: nil),
        read(),
        lookup("fixed-id"),
    ]

    /// The operations of `…--offline-sync.jsonl`, one per recorded exchange.
    static let offline: [Operation] = [
        insert("s1", ["text": "server one", "complete": false]),
        insert("s2", ["text": "server two", "complete": true]),
        pull(since: "1969-12-31T00:00:00.000Z"),
        pull(since: "2026-11-22T00:04:43.885Z"),
        pull(since: "2026-11-22T00:04:43.885Z", skip: 1),
        read(),
        insert(localId, ["text": "local one", "complete": false]),
        update("s1", ["text": "server one (edited locally)", "complete": false], ifMatch: "MQ=="),
        delete("s2", ifMatch: "MQ=="),
        read(),
        pull(since: "2026-11-22T00:04:43.885Z"),
        pull(since: "2026-11-22T00:04:44.715Z"),
        pull(since: "2026-11-22T00:04:44.715Z", skip: 1),
        lookup("s1"),
        update("s1", ["text": "changed on server"], ifMatch: "Mg=="),
        update("s1", ["text": "changed offline", "complete": false], ifMatch: "Mg=="),
        update("s1", ["text": "changed offline (merged)", "complete": false], ifMatch: "Mw=="),
        lookup("s1"),
        insert("s3", ["text": "server three", "complete": false]),
        delete(localId, ifMatch: nil),
        pull(since: "2026-11-22T00:04:44.715Z"),
        pull(since: "2026-11-22T00:04:45.322Z"),
        pull(since: "2026-11-22T00:04:45.322Z", skip: 1),
    ]

    /// Headers the recorder dropped or that identify the client rather than the request.
    static let unrecordedHeaders: Set<String> = ["host", "content-length", "connection", "user-agent"]
    static let clientIdentityHeaders: Set<String> = ["x-zumo-version", "x-zumo-features"]

    /// The `X-ZUMO-FEATURES` the recorded client sent for an offline-sync request (one starting
    /// with `OL`), its codes once each: the JavaScript client 2.0.1 appends `TR,QS` again for
    /// every further page of a pull. `nil` for the recording's online requests, which this
    /// client (always a sync engine's remote) never sends.
    static func offlineFeatures(_ exchange: WireExchange) -> String? {
        guard let recorded = exchange.requestHeaders.first(where: { $0.key.lowercased() == "x-zumo-features" })?.value,
            recorded.hasPrefix("OL")
        else { return nil }
        var codes: [Substring] = []
        for code in recorded.split(separator: ",") where !codes.contains(code) { codes.append(code) }
        return codes.joined(separator: ",")
    }

    @Test("online session: requests match the recording literally and answers parse to the recorded items")
    func onlineSession() async throws {
        try await replay(WireExchange.onlineFile, Self.online)
    }

    @Test("offline-sync session: pulls, pushes and the 412 round trip match the recording")
    func offlineSyncSession() async throws {
        try await replay(WireExchange.offlineFile, Self.offline)
    }

    private func replay(_ file: String, _ operations: [Operation]) async throws {
        let exchanges = try WireExchange.load(file)
        try #require(exchanges.count == operations.count)
        let log = RequestLog()
        let next = Locked(0)
        try await withLoopbackServer({ received in
            log.append(received)
            let index = next.withLock { value in
                defer { value += 1 }
                return value
            }
            let exchange = exchanges[min(index, exchanges.count - 1)]
            return ScriptedResponse(
                status: exchange.status,
                headers: exchange.responseHeaders.filter { $0.key != "Content-Length" }.map { ($0.key, $0.value) },
                body: exchange.responseBytes)
        }) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            defer { Task { try await remote.shutdown() } }
            for (index, exchange) in exchanges.enumerated() {
                let outcome = try await operations[index](remote)
                let received = try #require(
                    log.all.count == index + 1 ? log.all[index] : nil, "exchange \(index): expected exactly one request"
                )
                checkRequest(received, exchange, index)
                checkOutcome(outcome, exchange, index)
            }
        }
    }

    private func checkRequest(_ received: ReceivedRequest, _ exchange: WireExchange, _ index: Int) {
        #expect(received.method == exchange.method, "exchange \(index): method")
        #expect(received.target == exchange.target, "exchange \(index): target")
        for (name, value) in exchange.requestHeaders where !Self.clientIdentityHeaders.contains(name.lowercased()) {
            #expect(received.header(name) == value, "exchange \(index): header \(name)")
        }
        let recorded = Set(exchange.requestHeaders.keys.map { $0.lowercased() })
        let extra = received.headers.map(\.name).filter {
            !recorded.contains($0) && !Self.unrecordedHeaders.contains($0) && !Self.clientIdentityHeaders.contains($0)
        }
        #expect(extra.isEmpty, "exchange \(index): headers the original client does not send: \(extra)")
        #expect(received.header("X-ZUMO-VERSION")?.hasPrefix("ZUMO/2.0 (") == true, "exchange \(index): X-ZUMO-VERSION")
        if let features = Self.offlineFeatures(exchange) {
            #expect(received.header("X-ZUMO-FEATURES") == features, "exchange \(index): X-ZUMO-FEATURES")
        } else {
            #expect(
                received.header("X-ZUMO-FEATURES")?.hasPrefix("OL") == true,
                "exchange \(index): X-ZUMO-FEATURES marks offline sync")
        }
        #expect(
            jsonEqual(exchange.requestBody, parseJSON(received.body)),
            "exchange \(index): body \(String(decoding: received.body, as: UTF8.self))")
    }

    private func checkOutcome(_ outcome: Outcome, _ exchange: WireExchange, _ index: Int) {
        let expected = exchange.responseItems
        switch outcome {
        case .page(let result):
            #expect(result.items == expected, "exchange \(index): page items")
            let count = (exchange.responseBody as? [String: Any])?["count"] as? Int
            #expect(result.totalCount == count, "exchange \(index): total count")
        case .item(let item):
            #expect(item == (exchange.status == 404 ? nil : expected.first), "exchange \(index): item")
        case .deleted:
            #expect(exchange.status == 200, "exchange \(index): delete status")
        case .failed(let error):
            #expect(
                exchange.status == 412 && error.kind == .conflict && error.status == 412, "exchange \(index): \(error)")
            #expect(error.serverItem == expected.first, "exchange \(index): the conflict carries the server's item")
        }
    }
}
