import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncServer
import OfflineSyncSQLite
import Testing

/// Connection hygiene and limits of the reference server: timeouts, the connection cap,
/// keep-alive, query size limits, the API version check and error bodies without internals.
@Suite("TableServer connections and limits")
struct ServerConnectionTests {
    static let api = [("ZUMO-API-VERSION", "2.0.0")]

    static func request(
        _ method: String = "GET", _ target: String = "/tables/todoitem", version: String = "1.1",
        headers: [String] = ["ZUMO-API-VERSION: 2.0.0"]
    ) -> String {
        "\(method) \(target) HTTP/\(version)\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    static func statuses(_ answers: String) -> [String] {
        answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
    }

    static func errorText(_ answer: RawAnswer) -> String {
        ((answer.json as? [String: Any])?["error"] as? String) ?? ""
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleConnectionIsClosed() async throws {
        try await withTableServer(configure: { $0.idleTimeout = .seconds(1) }) { port in
            let (first, (rest, closed)) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(Self.request())
                return (connection.readAnswers(1), connection.readUntilClosed())
            }
            #expect(Self.statuses(first) == ["200"])
            #expect(closed, "the server closes a connection left idle")
            #expect(rest.isEmpty)
        }
    }

    @Test("a client that pipelines requests without reading the answers is no longer read, then closed")
    func clientThatDoesNotReadIsNotServedWithoutLimit() async throws {
        try await withTableServer(configure: { $0.idleTimeout = .seconds(2) }) { port in
            let item = #"{"id": "a", "text": "\#(String(repeating: "x", count: 4000))"}"#
            _ = try await send(
                "POST", "/tables/todoitem", port: port,
                headers: Self.api + [("Content-Type", "application/json")], body: Array(item.utf8))
            let (sent, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                return connection.flood(Array(Self.request(headers: ["ZUMO-API-VERSION: 2.0.0"]).utf8), seconds: 60)
            }
            // Before the server stopped reading such a client, it read, answered and buffered
            // everything sent (gigabytes), and never closed the connection.
            #expect(closed, "the server closes a connection whose client does not read (after \(sent) bytes)")
            #expect(sent < 256 << 20, "the server stopped reading: \(sent) bytes sent")
            let answer = try await send("GET", "/tables/todoitem?$top=1", port: port, headers: Self.api)
            #expect(answer.status == 200, "other clients are served")
        }
    }

    @Test("a client that shuts down its sending side after its requests gets every answer")
    func halfClosedConnectionGetsEveryAnswer() async throws {
        try await withTableServer { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                let body = #"{"id": "ID", "text": "t"}"#
                var requests = ""
                for index in 0..<50 {
                    let item = body.replacingOccurrences(of: "ID", with: "h\(index)")
                    requests += Self.request(
                        "POST", headers: [
                            "ZUMO-API-VERSION: 2.0.0", "Content-Type: application/json",
                            "Content-Length: \(item.utf8.count)",
                        ]) + item
                }
                connection.send(requests + Self.request())
                connection.finishSending()
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.statuses(text) == Array(repeating: "201", count: 50) + ["200"], "\(text.prefix(300))")
        }
    }

    @Test("a request that never finishes arriving is answered 408 and its connection closed")
    func slowPartialRequestIsDropped() async throws {
        try await withTableServer(configure: { $0.requestReadTimeout = .seconds(1) }) { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send("GET /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API")
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.statuses(text) == ["408"], "\(text)")
        }
    }

    @Test("a body that stops arriving is answered 408 and its connection closed")
    func slowBodyIsDropped() async throws {
        try await withTableServer(configure: { $0.requestReadTimeout = .seconds(1) }) { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(
                    "POST /tables/todoitem HTTP/1.1\r\nHost: x\r\nZUMO-API-VERSION: 2.0.0\r\nContent-Length: 100\r\n\r\n{\"id\"")
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.statuses(text) == ["408"], "\(text)")
        }
    }

    @Test("beyond the connection cap a request is answered 503 with Retry-After, and served again once below")
    func connectionCap() async throws {
        try await withTableServer(configure: { $0.maximumConnections = 2 }) { port in
            let (heldAnswers, text, closed, served) = try await onOwnThread {
                var held = [try RawConnection(port: port), try RawConnection(port: port)]
                var heldAnswers: [String] = []
                for connection in held {
                    connection.send(Self.request())
                    heldAnswers += Self.statuses(connection.readAnswers(1))
                }
                let refused = try RawConnection(port: port)
                refused.send(Self.request())
                let (text, closed) = refused.readUntilClosed()
                held.removeAll()
                var served = false
                for _ in 0..<50 where !served {
                    let again = try RawConnection(port: port)
                    again.send(Self.request())
                    served = Self.statuses(again.readAnswers(1)) == ["200"]
                    if !served { usleep(100_000) }
                }
                return (heldAnswers, text, closed, served)
            }
            #expect(heldAnswers == ["200", "200"])
            #expect(Self.statuses(text) == ["503"], "\(text)")
            #expect(text.lowercased().contains("retry-after: 1"))
            #expect(text.contains("limit"))
            #expect(closed)
            #expect(served, "once connections close, new ones are served")
        }
    }

    @Test("an HTTP/1.0 request without keep-alive closes its connection after the answer")
    func http10ClosesByDefault() async throws {
        try await withTableServer { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(Self.request(version: "1.0") + Self.request(version: "1.0"))
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.statuses(text) == ["200"], "only the first request is answered: \(text)")
            #expect(text.lowercased().contains("connection: close"))
        }
    }

    @Test("an HTTP/1.0 request with Connection: keep-alive keeps its connection open")
    func http10KeepAlive() async throws {
        try await withTableServer { port in
            let text = try await onOwnThread {
                let connection = try RawConnection(port: port)
                let keepAlive = ["ZUMO-API-VERSION: 2.0.0", "Connection: keep-alive"]
                connection.send(
                    Self.request(version: "1.0", headers: keepAlive) + Self.request(version: "1.0", headers: keepAlive))
                return connection.readAnswers(2)
            }
            #expect(Self.statuses(text) == ["200", "200"], "\(text)")
            #expect(text.lowercased().components(separatedBy: "connection: keep-alive").count == 3)
        }
    }

    @Test("close in any Connection header, repeated or in a list, closes after the answer", arguments: [
        ["Connection: keep-alive", "Connection: close"], ["Connection: Keep-Alive, Close"], ["connection: CLOSE"],
        ["Connection: upgrade", "Connection: close, keep-alive"],
    ])
    func oddConnectionHeaders(headers: [String]) async throws {
        try await withTableServer { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(Self.request(headers: ["ZUMO-API-VERSION: 2.0.0"] + headers) + Self.request())
                return connection.readUntilClosed()
            }
            #expect(closed, "\(headers)")
            #expect(Self.statuses(text) == ["200"], "\(headers): \(text)")
        }
    }

    @Test("a query beyond a size limit is a 400 naming the limit", arguments: [
        "$orderby=" + Array(repeating: "text", count: 5000).joined(separator: ","),
        "$select=" + (0..<300).map { _ in "text" }.joined(separator: ","),
        "$filter=" + String(repeating: "(text%20eq%20'a'%20and%20", count: 30) + "complete" + String(repeating: ")", count: 30),
        "$filter=" + String(repeating: "not%20", count: 30) + "complete",
        "$filter=text%20in%20(" + (0..<1000).map { "'v\($0)'" }.joined(separator: ",") + ")",
    ])
    func querySizeLimits(option: String) async throws {
        try await withTableServer { port in
            let answer = try await send("GET", "/tables/todoitem?\(option)", port: port, headers: Self.api)
            #expect(answer.status == 400, "\(option.prefix(40)): \(Self.errorText(answer))")
            #expect(Self.errorText(answer).contains("at most") || Self.errorText(answer).contains("deeper"))
            #expect(!Self.errorText(answer).contains("SELECT"))
        }
    }

    @Test("a table request without a 2.0.x ZUMO-API-VERSION is a 400", arguments: [nil, "3.0.0", "2.0", "1.0.0", "abc", "2.0.0x"])
    func apiVersionRequired(version: String?) async throws {
        try await withTableServer { port in
            let answer = try await send(
                "GET", "/tables/todoitem", port: port, headers: version.map { [("ZUMO-API-VERSION", $0)] } ?? [])
            #expect(answer.status == 400)
            #expect(Self.errorText(answer).contains("ZUMO-API-VERSION"))
        }
    }

    @Test("ZUMO-API-VERSION is accepted as a query option, and any 2.0.x")
    func apiVersionForms() async throws {
        try await withTableServer { port in
            let option = try await send("GET", "/tables/todoitem?ZUMO-API-VERSION=2.0.0", port: port)
            #expect(option.status == 200)
            let patch = try await send("GET", "/tables/todoitem", port: port, headers: [("zumo-api-version", "2.0.7")])
            #expect(patch.status == 200)
        }
    }

    @Test("with the API version check off, requests without ZUMO-API-VERSION are served")
    func apiVersionCheckOff() async throws {
        try await withTableServer(configure: { $0.checksAPIVersion = false }) { port in
            let answer = try await send("GET", "/tables/todoitem", port: port)
            #expect(answer.status == 200)
        }
    }

    @Test("a store failure is a 500 whose body names no SQL, path or store message")
    func storeFailureHidesInternals() async throws {
        let store = FailingReadStore()
        try await withTableServer(store: store) { port in
            let answer = try await send("GET", "/tables/todoitem", port: port, headers: Self.api)
            #expect(answer.status == 500)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(!text.contains("SELECT"))
            #expect(!text.contains(FailingReadStore.secretPath))
            #expect(Self.errorText(answer).contains("server log"))
        }
    }

    @Test(
        "a store that cannot be reached for now (a lost database connection, a lock held too long) is a 503 with Retry-After",
        arguments: [5])
    func unreachableStoreIsServiceUnavailable(code: Int32) async throws {
        // PostgresError's conformance is checked in the PostgreSQL tests.
        let store = FailingReadStore(
            failure: SQLiteError(
                code: .init(rawValue: code), extendedCode: code, sqliteMessage: "database is locked",
                context: "reading table todoitem"))
        try await withTableServer(store: store) { port in
            let answer = try await send("GET", "/tables/todoitem", port: port, headers: Self.api)
            #expect(answer.status == 503)
            #expect(answer.headers.contains { $0.0.lowercased() == "retry-after" && $0.1 == "1" }, "\(answer.headers)")
            #expect(Self.errorText(answer).contains("retry"), "\(Self.errorText(answer))")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("locked"))
        }
    }

    /// The head and body of each answer in `text`, a connection's bytes.
    static func answers(_ text: String) -> [(head: String, body: String)] {
        var answers: [(head: String, body: String)] = []
        var rest = Substring(text)
        while let end = rest.range(of: "\r\n\r\n") {
            let head = String(rest[..<end.lowerBound])
            let length =
                head.lowercased().components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = rest[end.upperBound...].utf8.prefix(length)
            answers.append((head, String(decoding: body, as: UTF8.self)))
            rest = rest[body.endIndex...]
        }
        return answers
    }

    @Test(
        "a malformed request sent right after a valid one: the valid one is answered, then a 400, then the connection closes",
        arguments: [
            "BOGUS\r\n\r\n", "GET /tables/todoitem HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
        ])
    func malformedAfterValidRequest(malformed: String) async throws {
        try await withTableServer { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                let body = #"{"id":"p1","text":"x"}"#
                connection.send(
                    "POST /tables/todoitem HTTP/1.1\r\nHost: x\r\nZUMO-API-VERSION: 2.0.0\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        + Self.request() + malformed)
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.statuses(text) == ["201", "200", "400"], "\(text)")
        }
    }

    @Test("a CONNECT request gets a complete answer, with its length and body, and the connection closes")
    func connectIsAnsweredCompletely() async throws {
        try await withTableServer { port in
            for target in ["/tables/todoitem", "127.0.0.1:80"] {
                let (text, closed) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    connection.send("CONNECT \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
                    return connection.readUntilClosed()
                }
                #expect(closed, "\(target)")
                let answers = Self.answers(text)
                #expect(answers.count == 1, "\(target): \(text)")
                #expect(answers.first?.head.lowercased().contains("content-length:") == true, "\(target): \(text)")
                #expect(answers.first?.body.contains(#""error""#) == true, "\(target): \(text)")
            }
        }
    }

    @Test("a request declaring a body over the limit is answered 413 at once, before its body arrives")
    func declaredBodyOverTheLimit() async throws {
        try await withTableServer(maximumBodyBytes: 1024) { port in
            // 2^63 fits the parser's unsigned length but not an Int: it was left for the body to
            // arrive, and answered 408 at the read timeout.
            for (length, expect) in [
                ("2000", []), ("2000", ["Expect: 100-continue"]), ("9223372036854775808", []),
                ("18446744073709551615", []),
            ] {
                let (text, closed) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    connection.send(
                        Self.request(
                            "POST",
                            headers: [
                                "ZUMO-API-VERSION: 2.0.0", "Content-Type: application/json", "Content-Length: \(length)",
                            ]
                                + expect))
                    return connection.readUntilClosed()
                }
                #expect(closed)
                #expect(Self.statuses(text) == ["413"], "\(text)")
                #expect(text.contains("1024") && text.contains("--max-body-bytes"), "\(text)")
            }
        }
    }

    @Test(
        "an HTTP parser error is answered with its reason in words",
        arguments: [
            (
                "POST /tables/todoitem HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na\r\n0\r\n\r\n",
                "chunk"
            ),
            (
                "POST /tables/todoitem HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                "Transfer-Encoding"
            ),
            ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/1.1 only"),
        ])
    func parserErrorsInWords(request: String, reason: String) async throws {
        try await withTableServer { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(request)
                return connection.readUntilClosed()
            }
            #expect(closed)
            #expect(Self.answers(text).map { $0.head.prefix(12) } == ["HTTP/1.1 400"], "\(text)")
            #expect(text.contains(reason), "\(text)")
            #expect(!text.contains("parser error") && !text.contains("strict mode"), "\(text)")
        }
    }

    @Test("the request log shows the query but never the value of access_token")
    func logRedactsAccessToken() async throws {
        let capture = LogCapture()
        try await withTableServer(configure: { $0.logger = capture.logger }) { port in
            let answer = try await send(
                "GET", "/tables/todoitem?$top=5&access_token=eyJhbGciOi.secret-claims.sig&ACCESS%5FTOKEN=other-secret",
                port: port, headers: Self.api)
            #expect(answer.status == 200)
        }
        let line = try #require(capture.messages.first { $0.hasPrefix("GET /tables/todoitem") })
        #expect(line.contains("$top=5") && line.contains("access_token=<redacted>"), "\(line)")
        #expect(!capture.messages.contains { $0.contains("secret") }, "\(capture.messages)")
    }
}

/// An in-memory store whose reads fail with a message full of internals, as a broken SQL store's would.
final class FailingReadStore: ForwardingStore {
    static let secretPath = "/var/lib/secret/server.sqlite"
    let inner: any LocalStore = InMemoryStore()
    /// What reads throw (by default a storage error naming SQL and a path).
    private let failure: (any Error & Sendable)?

    init(failure: (any Error & Sendable)? = nil) {
        self.failure = failure
    }

    func read(_ query: Query) throws -> QueryResult {
        if query.top == 1, query.selection == ["updatedAt"] { return try inner.read(query) }
        if let failure { throw failure }
        throw OfflineSyncError(
            .storage, "disk I/O error in SELECT \"text\" FROM \"todoitem\" WHERE ... (\(Self.secretPath))")
    }
}
