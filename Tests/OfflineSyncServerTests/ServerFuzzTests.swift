import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import OfflineSyncServer
import Testing

/// A bounded, seeded fuzz of the reference server: every answer to bad input is a 4xx JSON error,
/// nothing hangs, the server keeps answering, and a rejected request changes nothing stored;
/// within a `POST /$batch` too, where every request of the batch is answered below 500 and a
/// batch whose requests all failed changes nothing.
@Suite("TableServer fuzz", .tags(.slow), .skippedInFastRuns)
struct ServerFuzzTests {
    /// Requests per backend and seed: enough to reach every generator many times, few enough to
    /// keep the suite fast.
    static let requestCount = 400

    @Test("random malformed requests get 4xx answers and change nothing", arguments: [ServerBackend.memory, .sqlite])
    func fuzz(backend: ServerBackend) async throws {
        let directory = try TemporaryDirectory()
        let store = try backend.makeStore(in: directory)
        defer { try? store.close() }
        try await withTableServer(
            store: store, tables: [todoItemSchema], options: .init(widensSchema: true), createsTables: true,
            maximumBodyBytes: 64 << 10, configure: { $0.requestReadTimeout = .seconds(2) }
        ) { port in
            for id in ["a", "b", "c"] {
                let seeded = try await send(
                    "POST", "/tables/todoitem", port: port, headers: [("ZUMO-API-VERSION", "2.0.0")],
                    body: Array(#"{"id": "\#(id)", "text": "seed \#(id)", "complete": false}"#.utf8))
                #expect(seeded.status == 201)
            }
            var generator = FuzzRequests(seed: 0x5eed_f00d)
            for index in 0..<Self.requestCount {
                let request = generator.next()
                let before = try StoreSnapshot(store)
                let (answer, closed) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    connection.send(request.bytes)
                    if request.isPartial { connection.finishSending() }
                    return connection.readUntilClosed()
                }
                #expect(closed, "request \(index) (\(request.kind)) left the connection open: no answer within 10 s")
                guard let status = Int(answer.dropFirst("HTTP/1.1 ".count).prefix(3)) else {
                    #expect(request.isPartial, "request \(index) (\(request.kind)) got no answer: \(request.preview)")
                    continue
                }
                #expect(status < 500, "request \(index) (\(request.kind)) answered \(status): \(request.preview)")
                if status == 200, request.isBatch {
                    let statuses = Self.batchStatuses(answer)
                    #expect(
                        statuses.allSatisfy { $0 < 500 },
                        "request \(index) (\(request.kind)) answered \(statuses) within the batch: \(request.preview)")
                    if statuses.allSatisfy({ $0 >= 400 }) {
                        #expect(
                            try StoreSnapshot(store) == before,
                            "request \(index) (\(request.kind)): every request of the batch failed, yet the store changed")
                    }
                }
                if status >= 400 {
                    #expect(
                        answer.contains(#"{"error":"#) || status == 409 || status == 412,
                        "request \(index) (\(request.kind)): a \(status) without a JSON error")
                    #expect(
                        try StoreSnapshot(store) == before,
                        "request \(index) (\(request.kind)) was rejected with \(status) but changed the store")
                }
            }
            let page = try await send("GET", "/tables/todoitem", port: port, headers: [("ZUMO-API-VERSION", "2.0.0")])
            #expect(page.status == 200, "the server still answers after the fuzz")
        }
    }

    /// The statuses of the requests of a batch answer (the raw text of the HTTP answer).
    static func batchStatuses(_ answer: String) -> [Int] {
        guard let start = answer.range(of: "\r\n\r\n"),
            let object = try? JSONSerialization.jsonObject(with: Data(answer[start.upperBound...].utf8)) as? [String: Any],
            let responses = object["responses"] as? [[String: Any]]
        else { return [] }
        return responses.compactMap { $0["status"] as? Int }
    }
}

/// A seeded generator of hostile requests, each closing its connection.
struct FuzzRequests {
    struct Request: Sendable {
        var kind: String
        var bytes: [UInt8]
        /// Sent incomplete on purpose: the server may close without an answer.
        var isPartial = false
        /// A `POST /$batch`.
        var isBatch = false

        var preview: String { String(decoding: bytes.prefix(160), as: UTF8.self) }
    }

    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(random.next() % UInt64(choices.count))]
    }

    private mutating func number(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next() % UInt64(range.count))
    }

    mutating func next() -> Request {
        switch number(0...11) {
        case 10: return batch()
        case 11: return malformedBatch()
        case 0: return request("malformed JSON", "POST", "/tables/todoitem", body: malformedJSON())
        case 1:
            return request(
                "wrong types", pick(["POST", "PATCH"]), pick(["/tables/todoitem", "/tables/todoitem/a"]),
                body: wrongTypes())
        case 2: return request("deep nesting", "POST", "/tables/todoitem", body: deepNesting())
        case 3: return request("huge values", "POST", "/tables/todoitem", body: hugeValues())
        case 4:
            return request("odd path", pick(["GET", "POST", "PATCH", "DELETE"]), oddPath(), body: #"{"text": "x"}"#)
        case 5: return request("bad $filter", "GET", "/tables/todoitem?$filter=" + percentEncoded(filter(depth: 0)))
        case 6:
            return request(
                "bad $orderby", "GET",
                "/tables/todoitem?$orderby=" + percentEncoded(orderBy()) + "&$top="
                    + pick(["-1", "x", "99999999999999999999", "5"]))
        case 7:
            return request(
                "bad If-Match", pick(["PATCH", "DELETE"]), "/tables/todoitem/" + pick(["a", "b", "zz"]),
                body: #"{"text": "y"}"#,
                headers: [
                    "If-Match: "
                        + pick([
                            "\"", "W/", "\"a\",\"b\"", "*x", String(repeating: "\"", count: 50), "\"AAAAAAAAAAA=\"",
                        ])
                ])
        case 8: return partial()
        default:
            return request(
                "random bytes", "POST", "/tables/todoitem",
                body: String(decoding: bytes(number(1...300)), as: UTF8.self))
        }
    }

    private mutating func request(
        _ kind: String, _ method: String, _ target: String, body: String? = nil, headers: [String] = []
    ) -> Request {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\nConnection: close\r\n"
        for header in headers { text += header + "\r\n" }
        let payload = Array((body ?? "").utf8)
        if body != nil { text += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        return Request(kind: kind, bytes: Array((text + "\r\n").utf8) + payload)
    }

    private mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    private mutating func malformedJSON() -> String {
        let valid = #"{"id": "m\#(number(0...999))", "text": "hello", "complete": true, "tags": [1, {"a": null}]}"#
        switch number(0...4) {
        case 0: return String(valid.prefix(number(0...valid.count - 1)))
        case 1:
            var characters = Array(valid)
            for _ in 0..<number(1...5) {
                characters[number(0...characters.count - 1)] = pick(["{", "}", "\"", ",", ":", "\\", "]"])
            }
            return String(characters)
        case 2: return pick(["", "null", "[]", "\"x\"", "1", "{}}", "{\"id\":}", "{,}", "{\"a\" 1}", "\u{FEFF}{}"])
        case 3: return #"{"id": "x", "text": "\#(pick(["\\u12", "\\x", "\\ud800", "\u{1}"]))"}"#
        default: return #"{"id": "x", "text": "a", "text": 5}"#
        }
    }

    private mutating func wrongTypes() -> String {
        let value = pick(["1", "true", "\"s\"", "[1]", "{\"a\":1}", "1.5", "-0", "\"2020-13-45T99:00:00Z\""])
        let column = pick(["text", "complete", "createdAt", "updatedAt", "version", "deleted", "id", "Text", "x y"])
        return "{\"\(column)\": \(value)}"
    }

    private mutating func deepNesting() -> String {
        let depth = pick([10, 100, 511, 513, 2000, 20000])
        let open = pick(["[", "{\"a\":"])
        let close = open == "[" ? "]" : "}"
        return #"{"id": "d\#(number(0...99))", "nested": "# + String(repeating: open, count: depth) + "1"
            + String(repeating: close, count: depth) + "}"
    }

    private mutating func hugeValues() -> String {
        let value = pick([
            "1e309", "-1e309", "123456789012345678901234567890", "-9223372036854775809", "9223372036854775807",
            "0.0000000000000000000000000000001e-400", "\"" + String(repeating: "é", count: number(1000...30000)) + "\"",
            "1" + String(repeating: "0", count: 400),
        ])
        return #"{"id": "h\#(number(0...99))", "\#(pick(["text", "big", "rank"]))": \#(value)}"#
    }

    private mutating func oddPath() -> String {
        let table = pick([
            "todoitem", "", "%00", "%zz", "__operations", "sqlite_master", "TODOITEM", "a%2Fb", "..", "%E2%82",
            String(repeating: "t", count: 300), "t%20t", "💥",
        ])
        let id = pick(["", "/a", "%00", "%", "a%20b", String(repeating: "i", count: 400), "..", "a?b", "%FF%FE"])
        return "/tables/\(table)" + (id.isEmpty ? "" : "/\(id)")
    }

    private mutating func filter(depth: Int) -> String {
        if depth > 6 || number(0...3) == 0 {
            return pick([
                "text eq 'a'", "complete", "1 eq 1", "text", "'a' eq", "eq", "(", ")", "text eq datetime'x'",
                "length(text) gt 2", "substring(text, -1)", "indexof(text, 'a') eq 0", "round(1.5) eq 2",
                "text in ('a', 'b')", "text in ()", "1 div 0 eq 1", "5 mod 0 eq 0", "unknownfn(text)",
                "text eq 'unterminated", "null", "-text", "9223372036854775807 add 1 eq 0", "text eq 0x12",
            ])
        }
        switch number(0...4) {
        case 0: return "(\(filter(depth: depth + 1)) and \(filter(depth: depth + 1)))"
        case 1: return "not (\(filter(depth: depth + 1)))"
        case 2: return String(repeating: "(", count: number(1...400)) + filter(depth: depth + 1)
        case 3: return "\(filter(depth: depth + 1)) or \(filter(depth: depth + 1))"
        default: return String(repeating: "not ", count: number(50...300)) + "complete"
        }
    }

    private mutating func orderBy() -> String {
        (0..<pick([1, 3, 20, 5000])).map { _ in
            pick(["text", "text desc", "x", "text asc desc", "", "id", "length(text)"])
        }
        .joined(separator: ",")
    }

    /// A well-formed batch of hostile requests: odd paths and methods, bodies of the wrong types
    /// or not objects, bad `If-Match`, bad filters, non-table URLs, tokens of their own, failed
    /// dependencies, next to valid writes.
    private mutating func batch() -> Request {
        let count = number(1...12)
        var parts: [String] = []
        for index in 0..<count {
            var fields = [#""id":"\#(index)""#]
            let method = pick(["GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS", "get", "", "CONNECT"])
            fields.append(#""method":"\#(method)""#)
            let url = pick([
                "/tables/todoitem", "/tables/todoitem/a", "tables/todoitem/b", "/tables/todoitem/zz", "/healthz",
                "/$batch", "http://x/tables/todoitem", "", "/tables/", "/tables/__operations",
                "/tables/todoitem?$filter=" + percentEncoded(filter(depth: 3)), oddPath(),
            ])
            fields.append(#""url":"\#(url.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))""#)
            switch number(0...5) {
            case 0: fields.append(#""headers":{"If-Match":"\#(pick(["\\\"", "*", "\\\"AAAAAAAAAAA=\\\"", "W/", "\\\"a\\\",\\\"b\\\""]))"}"#)
            case 1: fields.append(#""headers":{"Authorization":"Bearer x"}"#)
            case 2: fields.append(#""headers":{"ZUMO-API-VERSION":"\#(pick(["3.0.0", "2.0.1", ""]))"}"#)
            default: break
            }
            if index > 0, number(0...4) == 0 { fields.append(#""dependsOn":["\#(number(0...index - 1))"]"#) }
            switch number(0...4) {
            case 0: fields.append(#""body":\#(wrongTypes())"#)
            case 1: fields.append(#""body":{"id":"\#(pick(["a", "b", "n\(number(0...99))", ""]))","text":"batched"}"#)
            case 2: fields.append(#""body":\#(pick(["1", "null", "[]", "\"text\"", "true", "{}"]))"#)
            case 3: fields.append(#""body":{"text":"\#(pick(["x", "y"]))","complete":\#(pick(["true", "1", "null"]))}"#)
            default: break
            }
            parts.append("{" + fields.joined(separator: ",") + "}")
        }
        var request = self.request(
            "batch of hostile requests", "POST", "/$batch", body: #"{"requests":["# + parts.joined(separator: ",") + "]}")
        request.isBatch = true
        return request
    }

    /// A batch whose envelope is malformed or refused whole.
    private mutating func malformedBatch() -> Request {
        let valid = #"{"requests":[{"id":"1","method":"POST","url":"/tables/todoitem","body":{"id":"mb","text":"x"}},{"id":"2","method":"PATCH","url":"/tables/todoitem/a","body":{"text":"z"}}]}"#
        let body: String
        switch number(0...5) {
        case 0: body = String(valid.prefix(number(0...valid.count - 1)))
        case 1:
            var characters = Array(valid)
            for _ in 0..<number(1...4) {
                characters[number(0...characters.count - 1)] = pick(["{", "}", "\"", ",", ":", "[", "]"])
            }
            body = String(characters)
        case 2:
            body = pick([
                "", "[]", "{}", #"{"requests":{}}"#, #"{"requests":[1]}"#, #"{"requests":[{"id":1}]}"#,
                #"{"requests":[{"id":"1","method":"GET"}]}"#, "null",
            ])
        case 3: body = valid.replacingOccurrences(of: #""id":"2""#, with: #""id":"1""#)
        case 4: body = valid.replacingOccurrences(of: #""id":"2","#, with: #""id":"2","atomicityGroup":"g","#)
        default: body = valid.replacingOccurrences(of: #""id":"1","#, with: #""id":"1","dependsOn":["2"],"#)
        }
        var request = self.request("malformed batch", "POST", "/$batch", body: body)
        request.isBatch = true
        return request
    }

    private mutating func partial() -> Request {
        let full = Array(
            "POST /tables/todoitem HTTP/1.1\r\nHost: x\r\nZUMO-API-VERSION: 2.0.0\r\nContent-Length: 40\r\n\r\n{\"id\": \"p\", \"text\": \"partial\"}"
                .utf8)
        return Request(kind: "partial request", bytes: Array(full.prefix(number(1...full.count - 1))), isPartial: true)
    }

    private func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
