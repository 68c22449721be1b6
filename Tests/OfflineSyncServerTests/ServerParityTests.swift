import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncTestSupport
import OfflineSyncServer
import Testing

/// Where the reference server behaves as the Azure servers do: undelete, CORS, unknown tables,
/// `$select`.
@Suite("TableServer parity with the Azure servers")
struct ServerParityTests {
    static let api = [("ZUMO-API-VERSION", "2.0.0")]
    static let json = api + [("Content-Type", "application/json")]

    func post(_ port: Int, _ body: String, target: String = "/tables/todoitem") async throws -> RawAnswer {
        try await send("POST", target, port: port, headers: Self.json, body: Array(body.utf8))
    }

    @Test("POST /tables/{table}/{id} restores a soft-deleted item with a new version")
    func undeleteRestores() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "kept"}"#)
            let deleted = try await send("DELETE", "/tables/todoitem/a", port: port, headers: Self.api)
            #expect(deleted.status == 200)
            let restored = try await send("POST", "/tables/todoitem/a", port: port, headers: Self.api)
            #expect(restored.status == 200)
            let item = restored.json as? [String: Any]
            #expect(item?["deleted"] as? Bool == false)
            #expect(item?["text"] as? String == "kept")
            #expect(restored.header("ETag") != nil && restored.header("ETag") != deleted.header("ETag"))
            let read = try await send("GET", "/tables/todoitem/a", port: port, headers: Self.api)
            #expect(read.status == 200)
        }
    }

    @Test("an undelete with a stale If-Match is a 412 and of a missing id a 404")
    func undeleteRefusals() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "kept"}"#)
            _ = try await send("DELETE", "/tables/todoitem/a", port: port, headers: Self.api)
            let stale = try await send(
                "POST", "/tables/todoitem/a", port: port, headers: Self.api + [("If-Match", "\"AAAAAAAAAAA=\"")])
            #expect(stale.status == 412)
            let missing = try await send("POST", "/tables/todoitem/nothere", port: port, headers: Self.api)
            #expect(missing.status == 404)
        }
    }

    @Test("CORS is off by default: no Access-Control header, even on a preflight")
    func corsOffByDefault() async throws {
        try await withTableServer { port in
            let origin = [("Origin", "https://app.example.com")]
            let read = try await send("GET", "/tables/todoitem", port: port, headers: Self.api + origin)
            #expect(read.status == 200)
            #expect(read.header("Access-Control-Allow-Origin") == nil)
            let preflight = try await send(
                "OPTIONS", "/tables/todoitem", port: port, headers: origin + [("Access-Control-Request-Method", "POST")])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test("an allowed origin gets its preflight answered and Access-Control-Allow-Origin on answers; others do not")
    func corsAllowedOrigin() async throws {
        try await withTableServer(configure: { $0.cors = CORSPolicy(allowedOrigins: ["https://app.example.com"]) }) {
            port in
            let preflight = try await send(
                "OPTIONS", "/tables/todoitem/a", port: port,
                headers: [
                    ("Origin", "https://app.example.com"), ("Access-Control-Request-Method", "PATCH"),
                    ("Access-Control-Request-Headers", "zumo-api-version, content-type, if-match"),
                ])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
            #expect(preflight.header("Access-Control-Allow-Headers")?.contains("if-match") == true)
            let read = try await send(
                "GET", "/tables/todoitem", port: port, headers: Self.api + [("Origin", "https://app.example.com")])
            #expect(read.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(read.header("Access-Control-Expose-Headers")?.contains("ETag") == true)
            let other = try await send(
                "GET", "/tables/todoitem", port: port, headers: Self.api + [("Origin", "https://evil.example.com")])
            #expect(other.header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test("a read of an unknown table is a 404, with a dynamic schema too")
    func unknownTableReadIs404() async throws {
        try await withTableServer(tables: [], options: .init(widensSchema: true), createsTables: true) { port in
            let page = try await send("GET", "/tables/notes", port: port, headers: Self.api)
            #expect(page.status == 404)
            let item = try await send("GET", "/tables/notes/a", port: port, headers: Self.api)
            #expect(item.status == 404)
        }
    }

    @Test("$select returns exactly the selected columns")
    func selectIsExact() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "x", "complete": true}"#)
            let page = try await send("GET", "/tables/todoitem?$select=text,complete", port: port, headers: Self.api)
            let rows = page.json as? [[String: Any]]
            #expect(rows?.first.map { Set($0.keys) } == ["text", "complete"])
            let withId = try await send("GET", "/tables/todoitem?$select=id,text", port: port, headers: Self.api)
            #expect((withId.json as? [[String: Any]])?.first.map { Set($0.keys) } == ["id", "text"])
        }
    }
}
