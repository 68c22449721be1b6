import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Testing

/// `POST /$batch` through a real `offline-sync serve` process on every backend, and a device
/// pushing through it in batches.
@Suite("offline-sync serve: batches")
struct ServeBatchTests {
    /// The store URL of `backend` in `directory`, and the environment it needs.
    static func store(_ backend: ServerBackend, in directory: TemporaryDirectory) -> (url: String, environment: [String: String]) {
        switch backend {
        case .memory: return ("memory:", [:])
        case .sqlite: return ("sqlite:" + directory.path("server.sqlite"), [:])
        case .sqlcipher:
            return ("sqlcipher:" + directory.path("server.sqlcipher") + "?key-env=SERVE_BATCH_KEY", ["SERVE_BATCH_KEY": "batch passphrase"])
        case .lmdb: return ("lmdb:" + directory.path("server.lmdb"), [:])
        }
    }

    @Test(
        "a batch through serve is answered request by request and a device's batched push lands whole",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)),
        arguments: ServerBackend.allCases)
    func batchThroughServe(backend: ServerBackend) async throws {
        let directory = try TemporaryDirectory()
        let (url, environment) = Self.store(backend, in: directory)
        let server = try ServeProcess(store: url, port: 0, environment: environment)
        defer { server.kill() }
        let headers = [("ZUMO-API-VERSION", "2.0.0"), ("Content-Type", "application/json")]
        let answer = try await send(
            "POST", "/$batch", port: server.port, headers: headers,
            body: Array(
                #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"one"}},{"id":"2","method":"POST","url":"/tables/todoitem","body":{"id":"a","text":"again"}},{"id":"3","method":"PATCH","url":"/tables/todoitem/a","headers":{"If-Match":"\"stale\""},"body":{"text":"x"}},{"id":"4","method":"PATCH","url":"/tables/todoitem/a","body":{"complete":true}},{"id":"5","method":"GET","url":"/tables/todoitem/a"},{"id":"6","method":"DELETE","url":"/tables/todoitem/missing"}]}"#
                    .utf8))
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let responses = ((answer.json as? [String: Any])?["responses"] as? [[String: Any]]) ?? []
        #expect(responses.compactMap { $0["status"] as? Int } == [201, 409, 412, 200, 200, 404])
        let read = (responses.count == 6 ? responses[4]["body"] as? [String: Any] : nil) ?? [:]
        #expect(read["text"] as? String == "one" && read["complete"] as? Bool == true, "\(read)")

        let device = try Device.make("device", store: InMemoryStore(), port: server.port)
        _ = try device.todo.insert((0..<150).map { Device.todo(String(format: "d%03d", $0), "pushed \($0)") })
        let pushed = try await device.context.push()
        #expect(pushed.completedCount == 150 && pushed.errors.isEmpty, "\(pushed.errors)")
        let page = try await send(
            "GET", "/tables/todoitem?$top=1&$inlinecount=allpages", port: server.port, headers: headers)
        #expect((page.json as? [String: Any])?["count"] as? Int == 151, "the batch's item and the device's 150")
        try await device.close()
    }
}
