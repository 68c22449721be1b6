import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Synchronization
import Testing

/// How ``HTTPRemote`` turns failures and unreadable answers into ``RemoteError`` kinds.
@Suite("HTTPRemote failures")
struct HTTPRemoteFailureTests {
    static let json = [("Content-Type", "application/json")]
    static let page = Query(table: "todoitem")

    /// Runs `body` against a server that always answers `response`, and returns the requests it saw.
    @discardableResult
    func against(
        _ response: ScriptedResponse, configure: (inout HTTPRemote.Configuration) -> Void = { _ in },
        _ body: @Sendable (HTTPRemote) async throws -> Void
    ) async throws -> [ReceivedRequest] {
        let log = RequestLog()
        var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:1")
        configuration.retryDelay = .milliseconds(1)
        configure(&configuration)
        let base = configuration
        try await withLoopbackServer({
            log.append($0)
            return response
        }) { port in
            var configuration = base
            configuration.baseURL = "http://127.0.0.1:\(port)/"
            let remote = try HTTPRemote(configuration: configuration)
            do {
                try await body(remote)
                try await remote.shutdown()
            } catch {
                try await remote.shutdown()
                throw error
            }
        }
        return log.all
    }

    func expectError(
        _ kind: RemoteError.Kind, containing text: String, _ call: () async throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            try await call()
            Issue.record("expected a \(kind) error", sourceLocation: sourceLocation)
        } catch let error as RemoteError {
            #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a RemoteError, got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a truncated JSON page is a server error that says the body may be truncated")
    func truncatedJSON() async throws {
        try await against(
            ScriptedResponse(
                status: 200, headers: Self.json, body: Array(#"[{"id":"a","text":"x"},{"id":"b","te"#.utf8))
        ) { remote in
            await expectError(.server, containing: "truncated") {
                _ = try await remote.readPage(Self.page, includeDeleted: true)
            }
        }
    }

    @Test("an item without an id is a server error naming the byte offset")
    func missingId() async throws {
        try await against(
            ScriptedResponse(status: 200, headers: Self.json, body: Array(#"[{"id":"a"},{"text":"x"}]"#.utf8))
        ) { remote in
            await expectError(.server, containing: "byte offset 12: the item has no string member 'id'") {
                _ = try await remote.readPage(Self.page, includeDeleted: true)
            }
        }
    }

    @Test("a numeric id is a server error")
    func numericId() async throws {
        try await against(ScriptedResponse(status: 200, headers: Self.json, body: Array(#"[{"id":5}]"#.utf8))) {
            remote in
            await expectError(.server, containing: "'id' must be a string") {
                _ = try await remote.readPage(Self.page, includeDeleted: true)
            }
        }
    }

    @Test("a system property of the wrong type is a server error naming the item and property")
    func wrongTypes() async throws {
        let bodies = [
            #"[{"id":"a","updatedAt":12}]"#: "\"updatedAt\"", #"[{"id":"a","deleted":"yes"}]"#: "\"deleted\"",
            #"[{"id":"a","version":3}]"#: "\"version\"", #"[{"id":"a","createdAt":"yesterday"}]"#: "'yesterday'",
            #"{"id":"a"}"#: "no member 'results'",
        ]
        for (body, text) in bodies {
            try await against(ScriptedResponse(status: 200, headers: Self.json, body: Array(body.utf8))) { remote in
                await expectError(.server, containing: text) {
                    _ = try await remote.readPage(Self.page, includeDeleted: true)
                }
            }
        }
    }

    @Test("an HTML error page is a server error that says so and quotes its title")
    func htmlPage() async throws {
        let html = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
        try await against(
            ScriptedResponse(status: 200, headers: [("Content-Type", "text/html")], body: Array(html.utf8))
        ) { remote in
            await expectError(.server, containing: "HTML page (page title '502 Bad Gateway')") {
                _ = try await remote.insert(Item(id: "a"), into: "todoitem")
            }
        }
    }

    /// The server's error text went into the message as sent: 100,000 characters, and terminal
    /// escape sequences that `sync` printed and `__errors` kept for `inspect`.
    @Test("a server's error text is quoted cut short, its control characters escaped")
    func hostileErrorText() async throws {
        let text = "\u{1B}]0;owned\u{07}\u{1B}[2J" + String(repeating: "x", count: 100_000)
        let body = try JSONSerialization.data(withJSONObject: ["error": text])
        let html = "<html><title>\u{1B}[31m" + String(repeating: "t", count: 2_000) + "</title></html>"
        for (index, response) in [
            ScriptedResponse(status: 500, headers: Self.json, body: Array(body)),
            ScriptedResponse(status: 502, headers: [("Content-Type", "text/html")], body: Array(html.utf8)),
            ScriptedResponse(status: 500, body: Array(("\u{1B}[31mplain " + String(repeating: "p", count: 500)).utf8)),
        ].enumerated() {
            try await against(response) { remote in
                do {
                    _ = try await remote.insert(Item(id: "a"), into: "todoitem")
                    Issue.record("expected a failure")
                } catch let error as RemoteError {
                    #expect(error.message.count < 700, "\(error.message.count) characters")
                    #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
                    #expect(error.message.contains("\\u{1B}"), "\(error.message.prefix(120))")
                    // A plain body is quoted by its first 200 bytes, already short.
                    #expect(error.message.contains("…") || index == 2)
                }
            }
        }
    }

    @Test("a 500 answer is a server error carrying the server's error text")
    func serverError() async throws {
        try await against(
            ScriptedResponse(status: 500, headers: Self.json, body: Array(#"{"error":"database is locked"}"#.utf8))
        ) { remote in
            await expectError(.server, containing: "database is locked") {
                _ = try await remote.insert(Item(id: "a"), into: "todoitem")
            }
        }
    }

    @Test("409 on insert is a conflict carrying the server's item")
    func insertConflict() async throws {
        let body = #"{"id":"a","version":"MQ==","updatedAt":"2026-01-01T00:00:00.000Z","text":"theirs"}"#
        try await against(ScriptedResponse(status: 409, headers: Self.json, body: Array(body.utf8))) { remote in
            do {
                _ = try await remote.insert(Item(id: "a", values: ["text": "mine"]), into: "todoitem")
                Issue.record("expected a conflict")
            } catch let error as RemoteError {
                #expect(error.kind == .conflict && error.status == 409)
                #expect(error.serverItem?["text"] == "theirs")
                #expect(error.serverItem?.updatedAt == Timestamp(year: 2026, month: 1, day: 1))
            }
        }
    }

    @Test("404 is nil for a lookup and notFound for a delete")
    func notFound() async throws {
        try await against(
            ScriptedResponse(status: 404, headers: Self.json, body: Array(#"{"error":"The item does not exist"}"#.utf8))
        ) { remote in
            let found = try await remote.lookup(id: "a", in: "todoitem")
            #expect(found == nil)
            await expectError(.notFound, containing: "DELETE /tables/todoitem/a") {
                try await remote.delete(id: "a", from: "todoitem", ifMatch: "MQ==")
            }
        }
    }

    @Test("401 without a refresh hook is an authentication failure")
    func unauthorized() async throws {
        try await against(ScriptedResponse(status: 401)) { remote in
            await expectError(.authentication, containing: "refused the credentials") {
                _ = try await remote.lookup(id: "a", in: "todoitem")
            }
        }
    }

    @Test("the authentication header is on every request and is refreshed once after a 401")
    func refreshOnce() async throws {
        let refreshes = Locked(0)
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return request.header("X-ZUMO-AUTH") == "fresh"
                ? ScriptedResponse(status: 200, headers: Self.json, body: Array("[]".utf8))
                : ScriptedResponse(status: 401)
        }) { port in
            let auth = HTTPAuthentication.zumo(
                token: { "stale" },
                refresh: {
                    refreshes.withLock { $0 += 1 }
                    return "fresh"
                })
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)", authentication: auth))
            let page = try await remote.readPage(Self.page, includeDeleted: false)
            try await remote.shutdown()
            #expect(page.items.isEmpty)
        }
        #expect(refreshes.withLock { $0 } == 1)
        #expect(log.all.map { $0.header("X-ZUMO-AUTH") } == ["stale", "fresh"])
    }

    @Test("a second 401 after the refresh is an authentication failure, with no third attempt")
    func refreshFails() async throws {
        let requests = try await against(
            ScriptedResponse(status: 401),
            configure: {
                $0.authentication = .bearer(token: { "t1" }, refresh: { "t2" })
            }
        ) { remote in
            await expectError(.authentication, containing: "refused") {
                _ = try await remote.insert(Item(id: "a"), into: "todoitem")
            }
        }
        #expect(requests.map { $0.header("Authorization") } == ["Bearer t1", "Bearer t2"])
    }

    @Test("reads are retried after 503, then fail as server errors")
    func readRetries() async throws {
        let requests = try await against(ScriptedResponse(status: 503), configure: { $0.readRetries = 2 }) { remote in
            await expectError(.server, containing: "GET /tables/todoitem failed") {
                _ = try await remote.readPage(Self.page, includeDeleted: false)
            }
        }
        #expect(requests.count == 3)
    }

    @Test("writes are never retried")
    func writesNotRetried() async throws {
        let requests = try await against(ScriptedResponse(status: 503), configure: { $0.readRetries = 2 }) { remote in
            await expectError(.server, containing: "PATCH") {
                _ = try await remote.update(Item(id: "a"), in: "todoitem", ifMatch: nil)
            }
        }
        #expect(requests.count == 1)
    }

    /// A port nothing listens on, held for the test's life (see ``RefusingPort``).
    let refusing: RefusingPort

    init() throws { refusing = try RefusingPort() }

    func closedPort() async throws -> Int { refusing.port }

    @Test("a refused connection is a network failure naming the URL")
    func connectionRefused() async throws {
        let port = try await closedPort()
        var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(port)")
        configuration.readRetries = 0
        let remote = try HTTPRemote(configuration: configuration)
        await expectError(
            .network, containing: "could not connect to http://127.0.0.1:\(port): the connection was refused"
        ) {
            _ = try await remote.readPage(Self.page, includeDeleted: false)
        }
        try await remote.shutdown()
    }

    // The connect timeout is an hour: a refused connection must fail on its own, not by timing out.
    @Test("a write whose connection is refused is retried, as it was never sent, then fails", .timeLimit(.minutes(1)))
    func refusedWriteRetried() async throws {
        let port = try await closedPort()
        let warnings = LogCapture()
        var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(port)")
        configuration.readRetries = 2
        configuration.retryDelay = .milliseconds(1)
        configuration.connectTimeout = .seconds(3600)
        configuration.logger = warnings.logger
        let remote = try HTTPRemote(configuration: configuration)
        await expectError(.network, containing: "POST /tables/todoitem could not connect to http://127.0.0.1:\(port)") {
            _ = try await remote.insert(Item(id: "a"), into: "todoitem")
        }
        try await remote.shutdown()
        #expect(
            warnings.messages.filter { $0.hasPrefix("retrying POST /tables/todoitem") }.count == 2,
            "\(warnings.messages)")
    }

    @Test("a request that outlives its timeout is a network failure")
    func timeout() async throws {
        try await against(
            ScriptedResponse(status: 200, delay: .seconds(2)),
            configure: {
                $0.requestTimeout = .milliseconds(200)
                $0.readRetries = 0
            }
        ) { remote in
            await expectError(.network, containing: "timed out") {
                _ = try await remote.insert(Item(id: "slow"), into: "todoitem")
            }
        }
    }

    @Test("cancelling the task cancels the request")
    func cancellation() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            try await Task.sleep(for: .seconds(5))
            return ScriptedResponse(status: 200)
        }) { port in
            let remote = try HTTPRemote(configuration: .init(baseURL: "http://127.0.0.1:\(port)"))
            let task = Task { try await remote.lookup(id: "a", in: "todoitem") }
            for _ in 0..<1000 where log.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            task.cancel()
            let result = await task.result
            try await remote.shutdown()
            #expect(throws: RemoteError.self) { try result.get() }
            if case .failure(let error as RemoteError) = result { #expect(error.kind == .cancelled) }
        }
    }

    @Test("a base URL that is not http or https is rejected at creation")
    func badBaseURL() {
        #expect(throws: RemoteError.self) { try HTTPRemote(configuration: .init(baseURL: "ftp://example.com")) }
    }

    @Test("a base URL with credentials is rejected without repeating them")
    func credentialsInBaseURL() {
        for base in [
            "http://alice:hunter2-secret@127.0.0.1:8080", "https://hunter2-secret@example.com/api",
            "ftp://alice:hunter2-secret@example.com",
        ] {
            let error = #expect(throws: RemoteError.self) { try HTTPRemote(configuration: .init(baseURL: base)) }
            #expect(
                error?.message.contains("user name or password") == true || base.hasPrefix("ftp"),
                "\(String(describing: error))")
            #expect(error?.message.contains("hunter2") == false, "\(String(describing: error))")
        }
    }

    @Test("ids and table names are percent-escaped in the path")
    func escapedId() async throws {
        let requests = try await against(ScriptedResponse(status: 404)) { remote in
            _ = try await remote.lookup(id: "a b/c?d'é", in: "todoitem")
        }
        #expect(requests.first?.target == "/tables/todoitem/a%20b%2Fc%3Fd%27%C3%A9")
    }
}
