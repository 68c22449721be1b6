import OfflineSync
import OfflineSyncProtocol

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

    /// The telemetry codes of `X-ZUMO-FEATURES`.
    typealias Feature = WireHeader.Feature

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
        var target = TablePath.table(query.table)
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
            method: .get, target: TablePath.item(table, id), headers: baseHeaders(clientVersion, [.offlineSync]), body: nil)
    }

    /// `POST /tables/{table}` with the item's columns (system properties stripped; an empty id
    /// is left out so the server assigns one).
    static func insert(_ item: Item, into table: String, clientVersion: String) throws(WireFormatError) -> TableRequest
    {
        TableRequest(
            method: .post, target: TablePath.table(table),
            headers: baseHeaders(clientVersion, [.offlineSync]) + [("Content-Type", "application/json")],
            body: try WireJSON.encodeForWrite(item))
    }

    /// `PATCH /tables/{table}/{id}` with `If-Match: "version"` when a version is known.
    static func update(_ item: Item, in table: String, ifMatch version: String?, clientVersion: String)
        throws(WireFormatError) -> TableRequest
    {
        let headers = conditionalHeaders(clientVersion, ifMatch: version)
        return TableRequest(
            method: .patch, target: TablePath.item(table, item.id), headers: headers + [("Content-Type", "application/json")],
            body: try WireJSON.encodeForWrite(item))
    }

    /// `DELETE /tables/{table}/{id}` with `If-Match: "version"` when a version is known.
    static func delete(id: String, from table: String, ifMatch version: String?, clientVersion: String) -> TableRequest
    {
        TableRequest(
            method: .delete, target: TablePath.item(table, id), headers: conditionalHeaders(clientVersion, ifMatch: version),
            body: nil)
    }

    /// `POST /$batch` with a JSON batch of write requests (see `JSONBatch`).
    static func batch(_ body: [UInt8], clientVersion: String) -> TableRequest {
        TableRequest(
            method: .post, target: JSONBatch.path,
            headers: baseHeaders(clientVersion, [.offlineSync]) + [("Content-Type", "application/json")], body: body)
    }

    /// `Accept`, the protocol and client versions and the features, in the recorded order.
    private static func baseHeaders(_ clientVersion: String, _ features: [Feature]) -> [(name: String, value: String)] {
        [
            ("Accept", "*/*"), (WireHeader.apiVersion, WireHeader.apiVersionValue), (WireHeader.clientVersion, clientVersion),
            (WireHeader.features, features.map(\.rawValue).joined(separator: ",")),
        ]
    }

    /// The headers of an update or delete: with a version, `If-Match` after `Accept` and the
    /// optimistic-concurrency feature (`OL,OC`).
    private static func conditionalHeaders(_ clientVersion: String, ifMatch version: String?) -> [(
        name: String, value: String
    )] {
        guard let version else { return baseHeaders(clientVersion, [.offlineSync]) }
        var headers = baseHeaders(clientVersion, [.offlineSync, .optimisticConcurrency])
        headers.insert((WireHeader.ifMatch, ETag.quoted(version)), at: 1)
        return headers
    }
}
