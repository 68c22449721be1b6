import OfflineSync

/// One request of the table protocol, before it is sent: method, target, headers and body.
///
/// Building requests is separate from sending them so the exact wire form (the percent-encoding
/// of the target, the header set, the body) is decided in one place and can be compared with the
/// recorded traffic of the original clients.
struct TableRequest: Sendable {
    /// The HTTP methods the table protocol uses.
    enum Method: String, Sendable {
        case get = "GET", post = "POST", patch = "PATCH", delete = "DELETE"

        /// Reads may be retried; writes never are (the server may have applied them).
        var isIdempotentRead: Bool { self == .get }
    }

    var method: Method
    /// The path and query, percent-encoded, e.g. `/tables/todoitem?$top=10`.
    var target: String
    /// Request headers in sending order, excluding authentication (added per attempt).
    var headers: [(name: String, value: String)]
    /// The JSON body, when the method carries one.
    var body: [UInt8]?

    /// The protocol version header every request carries.
    static let apiVersion = (name: "ZUMO-API-VERSION", value: "2.0.0")

    /// The codes of the `X-ZUMO-FEATURES` telemetry header, as the Azure Mobile Apps clients
    /// define them. Servers log them; none changes an answer.
    enum Feature: String {
        /// Table operations performed as part of offline sync (push and pull): every request of
        /// this client, which is a sync engine's remote.
        case offlineSync = "OL"
        /// Table reads performed as part of an incremental pull.
        case incrementalPull = "IP"
        /// Table reads given as a query string built by the caller.
        case tableReadRaw = "TR"
        /// Requests with query parameters beyond OData (`__includeDeleted`).
        case additionalQueryParameters = "QS"
        /// Updates and deletes sent with `If-Match` (optimistic concurrency).
        case optimisticConcurrency = "OC"
    }

    /// `GET /tables/{table}?…` for one page of a query.
    ///
    /// Parameters appear in the order the Azure clients send them: `$filter`, `$orderby`, `$skip`
    /// (only when positive), `$top`, `$select`, `$inlinecount=allpages`, `__includeDeleted=true`.
    /// The filter is printed in the OData v3 dialect. `X-ZUMO-FEATURES` is `OL,IP,TR,QS` for a
    /// page of an incremental pull (ordered by `updatedAt` first, with deleted rows), as the
    /// JavaScript client sends it; `IP` only when ordered by `updatedAt` first, `QS` only with
    /// `__includeDeleted`.
    static func read(_ query: Query, includeDeleted: Bool, clientVersion: String) -> TableRequest {
        var parameters: [(String, String)] = []
        if let filter = query.filter {
            parameters.append(("$filter", ODataPrinter.filter(filter, dialect: .v3)))
        }
        if !query.orderBy.isEmpty {
            parameters.append(("$orderby", ODataPrinter.orderBy(query.orderBy)))
        }
        if query.skip > 0 { parameters.append(("$skip", String(query.skip))) }
        if let top = query.top { parameters.append(("$top", String(top))) }
        if let selection = query.selection {
            // Servers answer exactly the selected columns; a query's result always carries ids.
            let columns = selection.contains("id") ? selection : ["id"] + selection
            parameters.append(("$select", columns.joined(separator: ",")))
        }
        if query.includeTotalCount { parameters.append(("$inlinecount", "allpages")) }
        if includeDeleted { parameters.append(("__includeDeleted", "true")) }
        var target = tablePath(query.table)
        if !parameters.isEmpty {
            target += "?" + parameters.map { "\($0.0)=\(PercentEncoding.queryValue($0.1))" }.joined(separator: "&")
        }
        let incremental = query.orderBy.first == SortKey(SystemProperty.updatedAt.rawValue)
        let features: [Feature] =
            [.offlineSync] + (incremental ? [.incrementalPull] : []) + [.tableReadRaw]
            + (includeDeleted ? [.additionalQueryParameters] : [])
        return TableRequest(method: .get, target: target, headers: baseHeaders(clientVersion, features), body: nil)
    }

    /// `GET /tables/{table}/{id}`.
    static func lookup(id: String, in table: String, clientVersion: String) -> TableRequest {
        TableRequest(
            method: .get, target: itemPath(table, id), headers: baseHeaders(clientVersion, [.offlineSync]), body: nil)
    }

    /// `POST /tables/{table}` with the item's columns (system properties stripped; an empty id
    /// is left out so the server assigns one).
    static func insert(_ item: Item, into table: String, clientVersion: String) throws(WireFormatError) -> TableRequest
    {
        TableRequest(
            method: .post, target: tablePath(table),
            headers: baseHeaders(clientVersion, [.offlineSync]) + [("Content-Type", "application/json")],
            body: try WireJSON.encodeForWrite(item))
    }

    /// `PATCH /tables/{table}/{id}` with `If-Match: "version"` when a version is known.
    static func update(_ item: Item, in table: String, ifMatch version: String?, clientVersion: String)
        throws(WireFormatError) -> TableRequest
    {
        let headers = conditionalHeaders(clientVersion, ifMatch: version)
        return TableRequest(
            method: .patch, target: itemPath(table, item.id), headers: headers + [("Content-Type", "application/json")],
            body: try WireJSON.encodeForWrite(item))
    }

    /// `DELETE /tables/{table}/{id}` with `If-Match: "version"` when a version is known.
    static func delete(id: String, from table: String, ifMatch version: String?, clientVersion: String) -> TableRequest
    {
        TableRequest(
            method: .delete, target: itemPath(table, id), headers: conditionalHeaders(clientVersion, ifMatch: version),
            body: nil)
    }

    static func tablePath(_ table: String) -> String {
        "/tables/" + PercentEncoding.component(table)
    }

    static func itemPath(_ table: String, _ id: String) -> String {
        tablePath(table) + "/" + PercentEncoding.component(id)
    }

    /// `Accept`, the protocol and client versions and the features, in the recorded order.
    private static func baseHeaders(_ clientVersion: String, _ features: [Feature]) -> [(name: String, value: String)] {
        [
            ("Accept", "*/*"), apiVersion, ("X-ZUMO-VERSION", clientVersion),
            ("X-ZUMO-FEATURES", features.map(\.rawValue).joined(separator: ",")),
        ]
    }

    /// The headers of an update or delete: with a version, `If-Match` after `Accept` and the
    /// optimistic-concurrency feature (`OL,OC`).
    private static func conditionalHeaders(_ clientVersion: String, ifMatch version: String?) -> [(
        name: String, value: String
    )] {
        guard let version else { return baseHeaders(clientVersion, [.offlineSync]) }
        var headers = baseHeaders(clientVersion, [.offlineSync, .optimisticConcurrency])
        headers.insert(("If-Match", ETag.quoted(version)), at: 1)
        return headers
    }
}

/// Percent-encoding as the Azure Mobile Apps JavaScript client applies it.
package enum PercentEncoding {
    /// A path segment (table name, id): every byte of the UTF-8 form is escaped except ASCII
    /// letters, digits and `-_.!~*()` (JavaScript's `encodeURIComponent`, with `'` also escaped as
    /// `%27`), so `/`, `?` and `#` in an id never change the path.
    package static func component(_ text: String) -> String {
        encode(text, keeping: "")
    }

    /// A query option value: as ``component(_:)`` but `:`, `@`, `/`, `?`, `,`, `$` and `;` stay
    /// literal (they are plain characters in a query), as the recorded traffic shows for dates
    /// (`datetimeoffset%272026-11-22T00:04:43.885Z%27`). `&`, `=`, `+`, `#`, `%`, `'` and spaces
    /// are escaped.
    package static func queryValue(_ text: String) -> String {
        encode(text, keeping: ":@/?,$;")
    }

    private static func encode(_ text: String, keeping extra: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        let kept = Array(extra.utf8)
        for byte in text.utf8 {
            if isUnreserved(byte) || kept.contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`); `nil` for a malformed
    /// escape or bytes that are not UTF-8.
    package static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        var output: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                    return nil
                }
                output.append(high << 4 | low)
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"),
            UInt8(ascii: "~"), UInt8(ascii: "*"), UInt8(ascii: "("), UInt8(ascii: ")"):
            return true
        default:
            return false
        }
    }
}

/// Entity tags of the table protocol: the item version in double quotes.
package enum ETag {
    /// `"version"`.
    package static func quoted(_ version: String) -> String { "\"" + version + "\"" }

    /// The version inside a strong entity tag; `nil` for weak tags (`W/"…"`, which the Node
    /// server sends for lists) and for anything that is not a quoted string.
    package static func version(fromStrong tag: String) -> String? {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        return String(decoding: bytes[1..<bytes.count - 1], as: UTF8.self)
    }
}
