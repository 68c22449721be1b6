import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the reference server accepts and how it refuses, beyond the recorded sessions.
@Suite("TableServer behaviour")
struct ServerBehaviourTests {
    static let api = [("ZUMO-API-VERSION", "2.0.0")]
    static let json = api + [("Content-Type", "application/json")]

    func post(_ port: Int, _ body: String, table: String = "todoitem") async throws -> RawAnswer {
        try await send("POST", "/tables/\(table)", port: port, headers: Self.json, body: Array(body.utf8))
    }

    func errorText(_ answer: RawAnswer) -> String {
        ((answer.json as? [String: Any])?["error"] as? String) ?? ""
    }

    @Test("a malformed $filter is a 400 naming the position")
    func malformedFilter() async throws {
        try await withTableServer { port in
            let answer = try await send("GET", "/tables/todoitem?$filter=(text%20eq%20)", port: port, headers: Self.api)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("column"), "\(errorText(answer))")
        }
    }

    @Test("a filter on an unknown column is a 400 naming it")
    func unknownColumnFilter() async throws {
        try await withTableServer { port in
            let answer = try await send(
                "GET", "/tables/todoitem?$filter=colour%20eq%20%27red%27", port: port, headers: Self.api)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("colour"))
        }
    }

    @Test("a body that is not JSON is a 400")
    func malformedJSON() async throws {
        try await withTableServer { port in
            let answer = try await post(port, #"{"id": "a", "text": "#)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("not valid JSON"))
        }
    }

    @Test("a value of the wrong type is a 400 naming the column")
    func wrongType() async throws {
        try await withTableServer { port in
            let answer = try await post(port, #"{"id": "a", "complete": "yes"}"#)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("complete"))
        }
    }

    @Test("a body over the limit is a 413")
    func bodyTooLarge() async throws {
        try await withTableServer(maximumBodyBytes: 1024) { port in
            let answer = try await post(port, #"{"id": "a", "text": "\#(String(repeating: "x", count: 4096))"}"#)
            #expect(answer.status == 413)
        }
    }

    @Test("datetime and datetimeoffset literals both filter dates")
    func dateLiterals() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "x"}"#)
            for literal in [
                "datetimeoffset%272000-01-01T00:00:00.000Z%27", "datetime%272000-01-01T00:00:00%27",
                "datetime'2000-01-01T00:00:00.000Z'",
            ] {
                let answer = try await send(
                    "GET", "/tables/todoitem?$filter=updatedAt%20gt%20\(literal)", port: port, headers: Self.api)
                #expect(answer.status == 200, "\(literal): \(errorText(answer))")
                #expect((answer.json as? [Any])?.count == 1, "\(literal)")
            }
        }
    }

    @Test("__includeDeleted works in any letter case; deleted rows are hidden otherwise")
    func includeDeletedAnyCase() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "x"}"#)
            _ = try await send("DELETE", "/tables/todoitem/a", port: port, headers: Self.api)
            let unfiltered = try await send("GET", "/tables/todoitem", port: port, headers: Self.api)
            #expect((unfiltered.json as? [Any])?.count == 0)
            for name in ["__includeDeleted", "__INCLUDEDELETED", "__includedeleted"] {
                let answer = try await send("GET", "/tables/todoitem?\(name)=true", port: port, headers: Self.api)
                let items = answer.json as? [[String: Any]]
                #expect(items?.count == 1 && items?.first?["deleted"] as? Bool == true, "\(name)")
            }
            let lookup = try await send(
                "GET", "/tables/todoitem/a?__includeDeleted=true", port: port, headers: Self.api)
            #expect(lookup.status == 200)
        }
    }

    @Test("$inlinecount=allpages answers {results, count} counting every match")
    func inlineCount() async throws {
        try await withTableServer { port in
            for id in ["a", "b", "c"] { _ = try await post(port, #"{"id": "\#(id)"}"#) }
            let answer = try await send(
                "GET", "/tables/todoitem?$top=1&$inlinecount=allpages", port: port, headers: Self.api)
            let page = answer.json as? [String: Any]
            #expect((page?["results"] as? [Any])?.count == 1)
            #expect(page?["count"] as? Int == 3)
        }
    }

    @Test("reads return at most the page size cap")
    func pageSizeCap() async throws {
        try await withTableServer(options: .init(maximumPageSize: 2)) { port in
            for id in ["a", "b", "c"] { _ = try await post(port, #"{"id": "\#(id)"}"#) }
            for target in ["/tables/todoitem", "/tables/todoitem?$top=100"] {
                let page = try await send("GET", target, port: port, headers: Self.api)
                #expect((page.json as? [Any])?.count == 2, "\(target)")
            }
        }
    }

    @Test("repeated and unknown X-ZUMO-FEATURES headers are accepted")
    func featuresHeaders() async throws {
        try await withTableServer { port in
            let answer = try await send(
                "GET", "/tables/todoitem", port: port,
                headers: Self.api + [("X-ZUMO-FEATURES", "OL,IP,TR,QS,TR,QS"), ("X-ZUMO-FEATURES", "ZZ")])
            #expect(answer.status == 200)
        }
    }

    @Test("a PATCH without system properties changes only the given columns")
    func patchMerges() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "x", "complete": true}"#)
            let answer = try await send(
                "PATCH", "/tables/todoitem/a", port: port, headers: Self.json, body: Array(#"{"text": "y"}"#.utf8))
            let item = answer.json as? [String: Any]
            #expect(answer.status == 200 && item?["text"] as? String == "y" && item?["complete"] as? Bool == true)
        }
    }

    @Test("If-Match quoted, weak or as the body's version: a stale one is a 412 with the server's item")
    func ifMatchForms() async throws {
        try await withTableServer { port in
            let created = try await post(port, #"{"id": "a", "text": "x"}"#)
            let version = try #require((created.json as? [String: Any])?["version"] as? String)
            #expect(created.header("ETag") == "\"\(version)\"")
            for (header, body) in [
                ("W/\"\(version)\"", #"{"text": "w"}"#), (nil, #"{"text": "b", "version": "\#(version)"}"#),
            ] {
                let current = try await send("GET", "/tables/todoitem/a", port: port, headers: Self.api)
                let now = try #require((current.json as? [String: Any])?["version"] as? String)
                let ok = try await send(
                    "PATCH", "/tables/todoitem/a", port: port,
                    headers: Self.json + [("If-Match", "\"\(now)\"")], body: Array(#"{"text": "fresh"}"#.utf8))
                #expect(ok.status == 200)
                let stale = try await send(
                    "PATCH", "/tables/todoitem/a", port: port,
                    headers: Self.json + (header.map { [("If-Match", $0)] } ?? []), body: Array(body.utf8))
                #expect(stale.status == 412, "\(header ?? "body version")")
                #expect((stale.json as? [String: Any])?["text"] as? String == "fresh")
                #expect(stale.header("ETag") != nil)
            }
        }
    }

    @Test("with a dynamic schema, a write creates the table and widens it with new columns; a read does not")
    func dynamicSchema() async throws {
        try await withTableServer(tables: [], options: .init(widensSchema: true), createsTables: true) { port in
            let missingTable = try await send("GET", "/tables/notes", port: port, headers: Self.api)
            #expect(missingTable.status == 404, "a table is created by its first write, not by a read")
            let created = try await post(port, #"{"id": "n1", "title": "hello", "stars": 3}"#, table: "notes")
            #expect(created.status == 201, "\(errorText(created))")
            let widened = try await post(port, #"{"id": "n2", "title": "more", "tags": ["a", "b"]}"#, table: "notes")
            #expect(widened.status == 201, "\(errorText(widened))")
            let page = try await send("GET", "/tables/notes?$filter=stars%20eq%203", port: port, headers: Self.api)
            #expect((page.json as? [[String: Any]])?.map { $0["id"] as? String } == ["n1"])
        }
    }

    @Test("without a dynamic schema, an unknown table is a 404 and an unknown column a 400")
    func staticSchema() async throws {
        try await withTableServer { port in
            let unknownTable = try await send("GET", "/tables/notes", port: port, headers: Self.api)
            #expect(unknownTable.status == 404)
            let unknownColumn = try await post(port, #"{"id": "a", "colour": "red"}"#)
            #expect(unknownColumn.status == 400)
        }
    }

    @Test("unknown routes are 404 and unsupported methods 405")
    func routes() async throws {
        try await withTableServer { port in
            let otherRoute = try await send("GET", "/api/other", port: port)
            #expect(otherRoute.status == 404)
            let put = try await send(
                "PUT", "/tables/todoitem/a", port: port, headers: Self.json, body: Array("{}".utf8))
            #expect(put.status == 405)
            let tableDelete = try await send("DELETE", "/tables/todoitem", port: port, headers: Self.api)
            #expect(tableDelete.status == 405)
        }
    }

    @Test("an insert of an existing id is a 409 with the server's item")
    func duplicateInsert() async throws {
        try await withTableServer { port in
            _ = try await post(port, #"{"id": "a", "text": "first"}"#)
            let again = try await post(port, #"{"id": "a", "text": "second"}"#)
            #expect(again.status == 409)
            #expect((again.json as? [String: Any])?["text"] as? String == "first")
        }
    }

    /// Writes `bytes` on a new connection to the port and reads until the server closes it (or
    /// 10 s pass); answers what was read and whether the server closed the connection.
    func exchange(_ bytes: [UInt8], port: Int) throws -> (text: String, closed: Bool) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            written += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return (String(decoding: received, as: UTF8.self), count == 0) }
            received += buffer[0..<count]
        }
    }

    @Test("requests pipelined on one connection are answered in order, a 413 among them, until Connection: close")
    func pipelinedRequests() async throws {
        try await withTableServer(maximumBodyBytes: 1024) { port in
            func request(_ method: String, _ target: String, _ body: String? = nil, close: Bool = false) -> String {
                var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\n"
                if close { text += "Connection: close\r\n" }
                if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
                return text + "\r\n" + (body ?? "")
            }
            // A body over the limit whose length is declared is refused before it arrives, and the
            // connection closed; a chunked one is read and dropped, and the connection goes on.
            func chunked(_ method: String, _ target: String, _ body: String) -> String {
                "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\n"
                    + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "\(String(body.utf8.count, radix: 16))\r\n\(body)\r\n0\r\n\r\n"
            }
            let sent =
                request("POST", "/tables/todoitem", #"{"id": "a", "text": "first"}"#)
                + chunked(
                    "POST", "/tables/todoitem", #"{"id": "b", "text": "\#(String(repeating: "x", count: 4096))"}"#)
                + request("PATCH", "/tables/todoitem/a", #"{"text": "second"}"#)
                + request("POST", "/tables/todoitem", #"{"id": "a", "text": "again"}"#)
                + request("GET", "/tables/todoitem/a", close: true)
            let (answers, closed) = try await onOwnThread {
                try ServerBehaviourTests().exchange(Array(sent.utf8), port: port)
            }
            #expect(closed, "the server closes the connection after the answer to 'Connection: close'")
            let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["201", "413", "200", "409", "200"], "\(answers)")
            #expect(
                answers.hasSuffix(#""text":"second","updatedAt""#) || answers.contains(#""text":"second""#),
                "the read sees the update")
            #expect(
                answers.components(separatedBy: "\r\nServer: offline-sync\r\n").count == 6,
                "every answer names the server")
            #expect(answers.components(separatedBy: "\r\nDate: ").count == 6, "every answer is dated")
        }
    }

    /// Bodies that are not JSON, and what the 400 must say about each.
    static let malformedBodies: [([UInt8], String)] = [
        (
            Array(String(repeating: "[", count: 513).utf8) + Array(String(repeating: "]", count: 513).utf8),
            "nested deeper than 512"
        ),
        (Array(#"{"id": "a", "text": ""#.utf8) + [0xFF] + Array(#""}"#.utf8), "UTF-8"),
        (Array(#"{"id": "a", "text": 1e400}"#.utf8), "beyond the range of a double"),
        (Array(#"{"text": NaN}"#.utf8), "byte offset 9"),
    ]

    @Test("a body that is not JSON is a 400 saying what is wrong, as import does", arguments: malformedBodies)
    func malformedJSONReason(body: [UInt8], reason: String) async throws {
        try await withTableServer { port in
            let answer = try await send("POST", "/tables/todoitem", port: port, headers: Self.json, body: body)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains(reason), "\(errorText(answer))")
        }
    }

    @Test("a body with a Content-Encoding other than identity is a 415 naming it")
    func encodedBodyIsRefused() async throws {
        try await withTableServer { port in
            for coding in ["br", "gzip"] {
                let answer = try await send(
                    "POST", "/tables/todoitem", port: port, headers: Self.json + [("Content-Encoding", coding)],
                    body: Array(#"{"id": "a", "text": "x"}"#.utf8))
                #expect(answer.status == 415, "\(coding)")
                #expect(errorText(answer).contains("'\(coding)'"), "\(errorText(answer))")
            }
            let plain = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.json + [("Content-Encoding", "identity")],
                body: Array(#"{"id": "a", "text": "x"}"#.utf8))
            #expect(plain.status == 201)
        }
    }

    @Test("an If-Match listing several tags is a 400 on every conditional write, even with the current version")
    func ifMatchList() async throws {
        try await withTableServer { port in
            let created = try await post(port, #"{"id": "e1", "text": "x"}"#)
            let version = try #require((created.json as? [String: Any])?["version"] as? String)
            let lists = [
                #""zzz", "\#(version)""#, #"W/"zzz", W/"\#(version)""#, #""zzz", *"#, #""\#(version)", "\#(version)""#,
            ]
            for list in lists {
                for (method, body) in [("PATCH", #"{"text": "y"}"#), ("DELETE", nil), ("POST", nil)] {
                    let answer = try await send(
                        method, "/tables/todoitem/e1", port: port, headers: Self.json + [("If-Match", list)],
                        body: body.map { Array($0.utf8) })
                    #expect(answer.status == 400, "\(method) \(list): \(answer.status)")
                    #expect(errorText(answer).contains("If-Match lists 2 entity tags"), "\(errorText(answer))")
                }
            }
            let stored = try await send("GET", "/tables/todoitem/e1", port: port, headers: Self.api)
            #expect((stored.json as? [String: Any])?["version"] as? String == version, "nothing was written")
            var current = version
            let singles: [@Sendable (String) -> String] = [
                { "\"\($0)\"" }, { "W/\"\($0)\"" }, { _ in "*" }, { _ in " * " },
            ]
            for single in singles {
                let answer = try await send(
                    "PATCH", "/tables/todoitem/e1", port: port, headers: Self.json + [("If-Match", single(current))],
                    body: Array(#"{"text": "y"}"#.utf8))
                #expect(answer.status == 200, "\(single(current)): \(errorText(answer))")
                current = try #require((answer.json as? [String: Any])?["version"] as? String)
            }
        }
    }

    @Test("percent escapes that decode to bytes that are not UTF-8 are a 400 saying so")
    func escapesThatAreNotUTF8() async throws {
        try await withTableServer { port in
            let answer = try await send(
                "GET", "/tables/todoitem?$filter=text%20eq%20%27%ff%fe%27", port: port, headers: Self.api)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("not UTF-8"), "\(errorText(answer))")
            // Sent raw: an HTTP client would re-encode the lone '%'.
            let malformed = try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(
                    "GET /tables/todoitem?$filter=text%2 HTTP/1.1\r\nHost: x\r\nZUMO-API-VERSION: 2.0.0\r\n\r\n")
                return connection.readAnswers(1)
            }
            #expect(malformed.contains("malformed percent escape"), "\(malformed)")
        }
    }

    @Test("a system query option given twice is a 400 naming it")
    func repeatedSystemQueryOption() async throws {
        try await withTableServer { port in
            let answer = try await send(
                "GET", "/tables/todoitem?$filter=text%20eq%20%27a%27&$FILTER=text%20eq%20%27b%27", port: port,
                headers: Self.api)
            #expect(answer.status == 400)
            #expect(errorText(answer).contains("$FILTER") && errorText(answer).contains("more than once"))
        }
    }

    @Test(
        "a PATCH body whose version is not a string is a 400 naming it, with or without If-Match, and changes nothing")
    func patchWithNonStringBodyVersion() async throws {
        try await withTableServer { port in
            let created = try await post(port, #"{"id": "v1", "text": "kept"}"#)
            let version = try #require((created.json as? [String: Any])?["version"] as? String)
            for (body, ifMatch) in [
                (#"{"text": "d", "version": 12345}"#, nil), (#"{"text": "d", "version": true}"#, nil),
                (#"{"text": "d", "version": {"v": 1}}"#, nil), (#"{"text": "d", "version": 12345}"#, version),
            ] {
                let answer = try await send(
                    "PATCH", "/tables/todoitem/v1", port: port,
                    headers: Self.json + (ifMatch.map { [("If-Match", "\"\($0)\"")] } ?? []), body: Array(body.utf8))
                #expect(answer.status == 400, "\(body): \(answer.status)")
                #expect(errorText(answer).contains(#"the body's "version" is"#), "\(body): \(errorText(answer))")
                #expect(!errorText(answer).contains("12345"), "the message does not repeat the value")
            }
            let stored = try await send("GET", "/tables/todoitem/v1", port: port, headers: Self.api)
            #expect((stored.json as? [String: Any])?["text"] as? String == "kept")
            #expect((stored.json as? [String: Any])?["version"] as? String == version)
            let unconditional = try await send(
                "PATCH", "/tables/todoitem/v1", port: port, headers: Self.json,
                body: Array(#"{"text": "e", "version": null}"#.utf8))
            #expect(unconditional.status == 200, "a null version is no condition, as an absent one")
        }
    }

    @Test("createdAt, updatedAt and deleted in a body are ignored whatever their type: the server sets them")
    func systemPropertiesInBodiesAreIgnored() async throws {
        try await withTableServer { port in
            let inserted = try await post(
                port, #"{"id": "s1", "text": "a", "createdAt": 5, "updatedAt": "soon", "deleted": "yes", "version": 7}"#
            )
            #expect(inserted.status == 201, "\(errorText(inserted))")
            let item = try #require(inserted.json as? [String: Any])
            #expect(item["deleted"] as? Bool == false)
            #expect(item["createdAt"] is String && item["updatedAt"] is String && item["version"] is String)
            let patched = try await send(
                "PATCH", "/tables/todoitem/s1", port: port, headers: Self.json,
                body: Array(#"{"text": "b", "createdAt": true, "updatedAt": [1], "deleted": 1}"#.utf8))
            #expect(patched.status == 200, "\(errorText(patched))")
            #expect((patched.json as? [String: Any])?["deleted"] as? Bool == false)
            #expect((patched.json as? [String: Any])?["createdAt"] as? String == item["createdAt"] as? String)
        }
    }
}
