package import OfflineSync

/// The JSON batch format of OData v4.01 ("OData JSON Format Version 4.01", section "Batch
/// Requests and Responses"), as the table protocol's `POST /$batch` extension uses it: the client
/// writes requests and reads responses, the server the other way round.
///
/// A batch request is `{"requests": [{"id", "method", "url", "headers", "body", "dependsOn"}, …]}`
/// and its answer `{"responses": [{"id", "status", "headers", "body"}, …]}`. Bodies are JSON values
/// embedded as they are (the table protocol's bodies are all JSON), kept here as their raw text so
/// that no number or string changes on the way through. `atomicityGroup` is refused: a batch of
/// this protocol is applied request by request (see docs/PROTOCOL.md), and a client asking for
/// all-or-nothing must learn that it does not get it.
package enum JSONBatch {
    /// The path of the batch endpoint.
    package static let path = "/$batch"

    /// One request of a batch.
    package struct Request: Sendable, Equatable {
        /// Names the request within its batch; its response carries the same id.
        package var id: String
        /// The HTTP method, as sent (`POST`, `patch`, …).
        package var method: String
        /// The request target: an absolute path (`/tables/todo/1`), a path relative to the
        /// service root (`tables/todo/1`) or an absolute URL.
        package var url: String
        /// The request's own headers, in the order given.
        package var headers: [Header]
        /// The body's JSON text; empty when the request has none.
        package var body: [UInt8]
        /// The ids of earlier requests of the batch this one needs to have succeeded.
        package var dependsOn: [String]

        /// Creates a request.
        package init(
            id: String, method: String, url: String, headers: [Header] = [], body: [UInt8] = [],
            dependsOn: [String] = []
        ) {
            self.id = id
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.dependsOn = dependsOn
        }

        /// The value of the header named `name` (letter case ignored), repeated ones joined by `,`.
        package func header(_ name: String) -> String? {
            let values = headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
    }

    /// One response of a batch.
    package struct Response: Sendable, Equatable {
        /// The id of the request answered.
        package var id: String
        /// The HTTP status of the answer.
        package var status: Int
        /// The answer's headers.
        package var headers: [Header]
        /// The body's JSON text; empty when the answer has none.
        package var body: [UInt8]

        /// Creates a response.
        package init(id: String, status: Int, headers: [Header] = [], body: [UInt8] = []) {
            self.id = id
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// The value of the header named `name` (letter case ignored).
        package func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// A header of a request or response in a batch.
    package struct Header: Sendable, Equatable {
        /// The name, as sent.
        package var name: String
        /// The value.
        package var value: String

        /// Creates a header.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    // MARK: Writing

    /// The body of a batch request.
    package static func encode(requests: [Request]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + requests.reduce(0) { $0 + $1.body.count + $1.url.utf8.count + 96 })
        bytes += #"{"requests":["#.utf8
        for (index, request) in requests.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += #"{"id":"#.utf8
            JSONCodec.appendString(request.id, to: &bytes)
            bytes += #","method":"#.utf8
            JSONCodec.appendString(request.method, to: &bytes)
            bytes += #","url":"#.utf8
            JSONCodec.appendString(request.url, to: &bytes)
            if !request.headers.isEmpty {
                bytes += #","headers":"#.utf8
                append(request.headers, to: &bytes)
            }
            if !request.dependsOn.isEmpty {
                bytes += #","dependsOn":["#.utf8
                for (position, id) in request.dependsOn.enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONCodec.appendString(id, to: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            }
            if !request.body.isEmpty {
                bytes += #","body":"#.utf8
                bytes += request.body
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += "]}".utf8
        return bytes
    }

    /// The body of a batch answer. A response body that is not JSON text (none of the table
    /// protocol's are) would break the envelope, so it is sent as a JSON string instead.
    package static func encode(responses: [Response]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + responses.reduce(0) { $0 + $1.body.count + 160 })
        bytes += #"{"responses":["#.utf8
        for (index, response) in responses.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += #"{"id":"#.utf8
            JSONCodec.appendString(response.id, to: &bytes)
            bytes += #","status":\#(response.status)"#.utf8
            if !response.headers.isEmpty {
                bytes += #","headers":"#.utf8
                append(response.headers, to: &bytes)
            }
            if !response.body.isEmpty {
                bytes += #","body":"#.utf8
                if (try? JSONCodec.validate(response.body)) != nil {
                    bytes += response.body
                } else {
                    JSONCodec.appendString(String(decoding: response.body, as: UTF8.self), to: &bytes)
                }
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += "]}".utf8
        return bytes
    }

    private static func append(_ headers: [Header], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, header) in headers.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONCodec.appendString(header.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONCodec.appendString(header.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    // MARK: Reading

    /// Reads a batch request. Throws ``WireFormatError`` naming the first fault: text that is
    /// not JSON, a shape other than `{"requests": [...]}`, a request without a string `id`,
    /// `method` or `url`, a repeated id, a header value that is not a string, a `dependsOn` naming
    /// no earlier request, or an `atomicityGroup`.
    package static func decodeRequests(_ body: [UInt8]) throws(WireFormatError) -> [Request] {
        var scanner = try Scanner(validating: body, what: "the batch")
        var requests: [Request] = []
        var seen: Set<String> = []
        var sawRequests = false
        try scanner.object { scanner, key throws(WireFormatError) in
            guard key == "requests" else {
                try scanner.skipValue()
                return
            }
            sawRequests = true
            try scanner.array(named: "\"requests\"") { scanner throws(WireFormatError) in
                let number = requests.count + 1
                let request = try readRequest(&scanner, number: number)
                guard seen.insert(request.id).inserted else {
                    throw WireFormatError(
                        "request \(number) of the batch repeats the id '\(request.id.prefix(40))'; ids must be unique within a batch"
                    )
                }
                for dependency in request.dependsOn where dependency == request.id || !seen.contains(dependency) {
                    throw WireFormatError(
                        "request '\(request.id.prefix(40))' depends on '\(dependency.prefix(40))', which is not an earlier request of the batch"
                    )
                }
                requests.append(request)
            }
        }
        guard sawRequests else {
            throw WireFormatError(#"the batch has no "requests" array; send {"requests": [...]}"#)
        }
        return requests
    }

    private static func readRequest(_ scanner: inout Scanner, number: Int) throws(WireFormatError) -> Request {
        var id: String?
        var method: String?
        var url: String?
        var headers: [Header] = []
        var body: [UInt8] = []
        var dependsOn: [String] = []
        let what = "request \(number) of the batch"
        try scanner.object(named: what) { scanner, key throws(WireFormatError) in
            switch key {
            case "id": id = try scanner.string(named: "the \"id\" of \(what)")
            case "method": method = try scanner.string(named: "the \"method\" of \(what)")
            case "url": url = try scanner.string(named: "the \"url\" of \(what)")
            case "headers": headers = try readHeaders(&scanner, of: what)
            case "body":
                let range = try scanner.skipValue()
                if scanner.bytes[range] != ArraySlice("null".utf8) { body = Array(scanner.bytes[range]) }
            case "dependsOn":
                try scanner.array(named: "the \"dependsOn\" of \(what)") { scanner throws(WireFormatError) in
                    dependsOn.append(try scanner.string(named: "an entry of the \"dependsOn\" of \(what)"))
                }
            case "atomicityGroup":
                throw WireFormatError(
                    "\(what) names an atomicityGroup; this server applies the requests of a batch one by one, each committed or failed on its own: leave atomicityGroup out"
                )
            default: try scanner.skipValue()
            }
        }
        guard let id, let method, let url else {
            let missing = [("id", id), ("method", method), ("url", url)].first { $0.1 == nil }?.0 ?? "id"
            throw WireFormatError(
                "\(what) has no \"\(missing)\"; each request needs a string id, method and url")
        }
        return Request(id: id, method: method, url: url, headers: headers, body: body, dependsOn: dependsOn)
    }

    private static func readHeaders(_ scanner: inout Scanner, of what: String) throws(WireFormatError) -> [Header] {
        var headers: [Header] = []
        try scanner.object(named: "the \"headers\" of \(what)") { scanner, name throws(WireFormatError) in
            headers.append(Header(name, try scanner.string(named: "header '\(name.prefix(40))' of \(what)")))
        }
        return headers
    }

    /// Reads a batch answer. Throws ``WireFormatError`` for text that is not JSON or a shape
    /// other than `{"responses": [{"id", "status", …}]}`.
    package static func decodeResponses(_ body: [UInt8]) throws(WireFormatError) -> [Response] {
        var scanner = try Scanner(validating: body, what: "the batch answer")
        var responses: [Response] = []
        var sawResponses = false
        try scanner.object { scanner, key throws(WireFormatError) in
            guard key == "responses" else {
                try scanner.skipValue()
                return
            }
            sawResponses = true
            try scanner.array(named: "\"responses\"") { scanner throws(WireFormatError) in
                let what = "response \(responses.count + 1) of the batch answer"
                var id: String?
                var status: Int?
                var headers: [Header] = []
                var body: [UInt8] = []
                try scanner.object(named: what) { scanner, key throws(WireFormatError) in
                    switch key {
                    case "id": id = try scanner.string(named: "the \"id\" of \(what)")
                    case "status": status = try scanner.integer(named: "the \"status\" of \(what)")
                    case "headers": headers = try readHeaders(&scanner, of: what)
                    case "body":
                        let range = try scanner.skipValue()
                        if scanner.bytes[range] != ArraySlice("null".utf8) { body = Array(scanner.bytes[range]) }
                    default: try scanner.skipValue()
                    }
                }
                guard let id, let status else {
                    throw WireFormatError("\(what) has no \(id == nil ? "\"id\"" : "\"status\"")")
                }
                responses.append(Response(id: id, status: status, headers: headers, body: body))
            }
        }
        guard sawResponses else { throw WireFormatError(#"the batch answer has no "responses" array"#) }
        return responses
    }

    /// Walks JSON text already checked to be valid, member by member, keeping the raw text of the
    /// values it skips. Only shape errors (a value of the wrong kind) are reported here.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        /// Checks that `bytes` is one JSON value with the core's reader (which names the fault and
        /// its offset), then starts at its beginning.
        init(validating bytes: [UInt8], what: String) throws(WireFormatError) {
            guard !bytes.isEmpty else { throw WireFormatError("\(what) is empty; expected a JSON object") }
            do {
                try JSONCodec.validate(bytes)
            } catch let error as OfflineSyncError {
                throw WireFormatError("\(what) is not valid JSON: \(error.message)")
            } catch {
                throw WireFormatError("\(what) is not valid JSON")
            }
            self.bytes = bytes
            // A byte order mark the reader accepted.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
                || bytes[index] == 0x09
            {
                index += 1
            }
        }

        private func kind() -> String {
            guard index < bytes.count else { return "nothing" }
            switch bytes[index] {
            case UInt8(ascii: "{"): return "an object"
            case UInt8(ascii: "["): return "an array"
            case UInt8(ascii: "\""): return "a string"
            case UInt8(ascii: "t"), UInt8(ascii: "f"): return "true or false"
            case UInt8(ascii: "n"): return "null"
            default: return "a number"
            }
        }

        /// Calls `member` for each member of the object at the current position, positioned at
        /// its value; `member` must consume the value.
        mutating func object(
            named what: String = "the batch",
            _ member: (inout Scanner, String) throws(WireFormatError) -> Void
        ) throws(WireFormatError) {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
                throw WireFormatError("\(what) is \(kind()), not a JSON object")
            }
            index += 1
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                let key = try rawString()
                skipWhitespace()
                index += 1  // ':'
                skipWhitespace()
                try member(&self, key)
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator == UInt8(ascii: "}") { return }
            }
        }

        /// Calls `element` for each element of the array at the current position.
        mutating func array(named what: String, _ element: (inout Scanner) throws(WireFormatError) -> Void)
            throws(WireFormatError)
        {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else {
                throw WireFormatError("\(what) is \(kind()), not an array")
            }
            index += 1
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                try element(&self)
                skipWhitespace()
                let separator = bytes[index]
                index += 1
                if separator == UInt8(ascii: "]") { return }
            }
        }

        /// The string at the current position.
        mutating func string(named what: String) throws(WireFormatError) -> String {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw WireFormatError("\(what) is \(kind()), not a string")
            }
            return try rawString()
        }

        /// The integer at the current position.
        mutating func integer(named what: String) throws(WireFormatError) -> Int {
            skipWhitespace()
            let range = skipScalar()
            guard let value = Int(String(decoding: bytes[range], as: UTF8.self)) else {
                index = range.lowerBound
                throw WireFormatError("\(what) is \(kind()), not an integer")
            }
            return value
        }

        /// Reads the string starting at the current quote.
        private mutating func rawString() throws(WireFormatError) -> String {
            let start = index
            index += 1
            var escaped = false
            while bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                }
                index += 1
            }
            index += 1
            guard escaped else { return String(decoding: bytes[(start + 1)..<(index - 1)], as: UTF8.self) }
            guard case .string(let text)? = try? JSONCodec.decodeValue(bytes[start..<index]) else {
                throw WireFormatError("a string of the batch could not be read")
            }
            return text
        }

        /// Skips the value at the current position and returns its range.
        @discardableResult
        mutating func skipValue() throws(WireFormatError) -> Range<Int> {
            skipWhitespace()
            let start = index
            switch bytes[index] {
            case UInt8(ascii: "\""):
                _ = try rawString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                repeat {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        _ = try rawString()
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    index += 1
                } while depth > 0
            default:
                return skipScalar()
            }
            return start..<index
        }

        /// Skips a number, `true`, `false` or `null`.
        private mutating func skipScalar() -> Range<Int> {
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return start..<index
                default: index += 1
                }
            }
            return start..<index
        }
    }
}
