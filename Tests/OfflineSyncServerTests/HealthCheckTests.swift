import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncSQLite
import OfflineSyncServer
import Testing

/// `GET /healthz`: what a load balancer or orchestrator probes before sending a server process
/// traffic. It needs no token and no ZUMO-API-VERSION, and says 503 when the store does not
/// answer, without putting the store's error in the answer.
@Suite("Health check")
struct HealthCheckTests {
    @Test("a server whose store answers is healthy, without a token or an API version, even when tables need one")
    func healthy() async throws {
        let verifier = try await Tokens.verifier()
        try await withTableServer(configure: { $0.authentication = verifier }) { port in
            for target in ["/healthz", "/healthz?probe=1"] {
                let answer = try await send("GET", target, port: port)
                #expect(answer.status == 200)
                #expect(String(decoding: answer.body, as: UTF8.self) == #"{"status":"ok"}"#)
            }
            // The tables still need the token.
            #expect(try await send("GET", "/tables/todoitem", port: port, headers: [("ZUMO-API-VERSION", "2.0.0")]).status == 401)
            let post = try await send("POST", "/healthz", port: port, body: Array("{}".utf8))
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET")
        }
    }

    @Test("a server whose store fails is unhealthy: 503 with Retry-After, the store's error kept out of the answer")
    func unhealthy() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("served.sqlite")
        let store = SQLiteStore(path: path)
        try await withTableServer(store: store) { port in
            #expect(try await send("GET", "/healthz", port: port).status == 200)
            // The store stops answering (closed under the service: every call throws notOpen).
            try store.close()
            let answer = try await send("GET", "/healthz", port: port)
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "5")
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(text == #"{"status":"unavailable","error":"the store does not answer; see the server log"}"#)
            #expect(!text.contains(path) && !text.contains("sqlite"))
        }
    }
}
