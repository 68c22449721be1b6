import OfflineSync
import OfflineSyncProtocol

/// The table protocol on the server side: turns one HTTP request into one answer by calling a
/// ``TableService``, independent of the HTTP framework.
///
/// What it adds to the service is the protocol itself: routes, query options, JSON bodies,
/// `If-Match`/`ETag`, PATCH as a merge of the given columns into the stored item, the answers of
/// the Azure Node server (201 for inserts, 200 with the deleted row for deletes, 404 with
/// `{"error": …}`, 409/412 with the server's item), undelete, CORS, the `ZUMO-API-VERSION` check,
/// the limits on the size of a query (``QueryLimits``) and, with a dynamic schema, tables created on
/// first write. It holds no lock of its own: ``TableService`` makes a merge, an undelete or a
/// table creation atomic, and lets reads run concurrently.
final class TableProtocol: Sendable {
    /// A request as the framework hands it over.
    struct Request: Sendable {
        var method: String
        /// Path and query, still percent-encoded.
        var target: String
        /// Returns the value of a header (case-insensitive name); repeated headers joined by `,`.
        var header: @Sendable (String) -> String?
        var body: [UInt8]
    }

    /// The answer to send.
    struct Answer: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        /// What the server log should say about a failure beyond the answer's message.
        var logDetail: String? = nil
    }

    let service: TableService
    let createsTables: Bool
    let checksAPIVersion: Bool
    let cors: CORSPolicy
    let limits: QueryLimits

    init(
        service: TableService, createsTables: Bool, checksAPIVersion: Bool = true, cors: CORSPolicy = CORSPolicy(),
        limits: QueryLimits = QueryLimits()
    ) {
        self.service = service
        self.createsTables = createsTables
        self.checksAPIVersion = checksAPIVersion
        self.cors = cors
        self.limits = limits
    }

    /// Answers one request; never throws: every failure becomes a JSON error answer, with the
    /// CORS headers an allowed origin needs to read it.
    func respond(to request: Request) -> Answer {
        var answer = answerIgnoringCORS(request)
        answer.headers += cors.headers(origin: request.header("Origin"))
        return answer
    }

    private func answerIgnoringCORS(_ request: Request) -> Answer {
        do {
            guard let target = try TableRequestTarget(request.target) else {
                return Self.error(404, "no route for \(Self.shown(request.target)); tables are under /tables/{table}")
            }
            return try route(request, target)
        } catch let error as RemoteError {
            return failure(error)
        } catch let error as AnswerEncodingError {
            return Self.error(500, "the answer could not be written as JSON; see the server log", detail: error.message)
        } catch let error as OfflineSyncError {
            switch error.code {
            case .unknownTable: return Self.error(404, error.message)
            case .syntax, .invalidQuery, .unknownColumn, .invalidValue, .invalidName, .invalidSchema:
                return Self.error(400, error.message)
            default: return Self.error(500, "the server failed (\(error.code)); see the server log", detail: error.message)
            }
        } catch let error as WireFormatError {
            return Self.error(400, "the request body could not be read: \(error.message)")
        } catch {
            return Self.error(500, "the server failed; see the server log", detail: "\(error)")
        }
    }

    /// A request target cut to a length fit for an error message.
    static func shown(_ target: String) -> String {
        target.utf8.count <= 200 ? target : String(target.prefix(200)) + "…"
    }

    // MARK: Routes

    private func route(_ request: Request, _ target: TableRequestTarget) throws -> Answer {
        let allowed = target.id == nil ? "GET, POST" : "GET, POST, PATCH, DELETE"
        if request.method == "OPTIONS" {
            var answer = Answer(status: 204, headers: [("Allow", allowed + ", OPTIONS")], body: [])
            answer.headers += cors.preflightHeaders(
                origin: request.header("Origin"), requestedHeaders: request.header("Access-Control-Request-Headers"))
            return answer
        }
        if checksAPIVersion {
            let version = request.header(WireHeader.apiVersion) ?? target.options[WireHeader.apiVersion.lowercased()]
            guard let version, WireHeader.isSupportedAPIVersion(version) else {
                let given = version.map { "'\($0.prefix(40))' is not supported" } ?? "is missing"
                return Self.error(
                    400,
                    "the ZUMO-API-VERSION header \(given); this server speaks the table protocol 2.0.x: send 'ZUMO-API-VERSION: 2.0.0'"
                )
            }
        }
        switch (request.method, target.id) {
        case ("GET", nil): return try read(target)
        case ("GET", let id?): return try lookup(id, target)
        case ("POST", nil): return try insert(request, target)
        case ("POST", let id?): return try undelete(id, request, target)
        case ("PATCH", let id?): return try update(id, request, target)
        case ("DELETE", let id?): return try delete(id, request, target)
        default:
            var answer = Self.error(
                405, "\(request.method.prefix(20)) is not allowed on \(Self.shown(request.target)); use \(allowed)")
            answer.headers.append(("Allow", allowed))
            return answer
        }
    }

    private func read(_ target: TableRequestTarget) throws -> Answer {
        guard try service.hasTable(target.table) else {
            throw OfflineSyncError(.unknownTable, "the server has no table '\(target.table)'")
        }
        let query = try target.query()
        try limits.check(query)
        let page = try service.readPage(query, includeDeleted: target.includeDeleted)
        guard let selection = query.selection else { return try Self.json(200, encoded { try WireJSON.encodePage(page) }) }
        return try Self.json(200, encoded { try Self.encode(page, selecting: selection) })
    }

    /// A page with exactly the selected columns (a selected column that is null is `null`; `id`
    /// only when selected), as the Azure servers answer `$select`.
    private static func encode(_ page: QueryResult, selecting columns: [String]) throws -> [UInt8] {
        var array: [UInt8] = [UInt8(ascii: "[")]
        for (index, item) in page.items.enumerated() {
            if index > 0 { array.append(UInt8(ascii: ",")) }
            var members: [String: Value] = [:]
            for column in columns {
                members[column] = column == "id" ? .string(item.id) : item[column]
            }
            array += try WireJSON.encodeObject(members, first: columns.contains("id") ? "id" : nil)
        }
        array.append(UInt8(ascii: "]"))
        guard let count = page.totalCount else { return array }
        return Array(#"{"results":"#.utf8) + array + Array(#","count":\#(count)}"#.utf8)
    }

    private func lookup(_ id: String, _ target: TableRequestTarget) throws -> Answer {
        let item: Item?
        if target.includeDeleted {
            let query = Query(
                table: target.table, filter: .comparison(.column("id"), .eq, .literal(.string(id))), top: 1)
            item = try service.readPage(query, includeDeleted: true).items.first
        } else {
            item = try service.lookup(id: id, in: target.table)
        }
        guard let item else { return Self.error(404, "The item does not exist") }
        return try itemAnswer(200, item, table: target.table)
    }

    private func insert(_ request: Request, _ target: TableRequestTarget) throws -> Answer {
        var values = try WireJSON.decodeObject(request.body)
        let id: String
        switch values.removeValue(forKey: "id") {
        case nil, .null?: id = ""
        case .string(let text)?: id = text
        case let other?: throw OfflineSyncError(.invalidValue, "the item's \"id\" is \(other); ids must be strings")
        }
        let stored = try service.insert(
            Item(id: id, values: Self.withoutSystemProperties(values)), into: target.table, creatingTable: createsTables)
        return try itemAnswer(201, stored, table: target.table)
    }

    private func undelete(_ id: String, _ request: Request, _ target: TableRequestTarget) throws -> Answer {
        let restored = try service.undelete(id: id, in: target.table, ifMatch: try Self.ifMatch(request))
        return try itemAnswer(200, restored, table: target.table)
    }

    private func update(_ id: String, _ request: Request, _ target: TableRequestTarget) throws -> Answer {
        var values = try WireJSON.decodeObject(request.body)
        if let bodyId = values.removeValue(forKey: "id"), bodyId != .string(id), !bodyId.isNull {
            throw OfflineSyncError(.invalidValue, "the body's \"id\" \(bodyId) differs from the id '\(id)' in the URL")
        }
        let version = try Self.ifMatch(request) ?? values[SystemProperty.version.rawValue]?.stringValue
        let stored = try service.merge(
            Item(id: id, values: Self.withoutSystemProperties(values)), in: target.table, ifMatch: version)
        return try itemAnswer(200, stored, table: target.table)
    }

    private func delete(_ id: String, _ request: Request, _ target: TableRequestTarget) throws -> Answer {
        let deleted = try service.delete(id: id, from: target.table, ifMatch: try Self.ifMatch(request))
        return try itemAnswer(200, deleted, table: target.table)
    }

    // MARK: Answers

    private func itemAnswer(_ status: Int, _ item: Item, table: String) throws -> Answer {
        var answer = try Self.json(status, encoded { try WireJSON.encode(item) })
        if let version = item.version { answer.headers.append((WireHeader.etag, ETag.quoted(version))) }
        return answer
    }

    private func failure(_ error: RemoteError) -> Answer {
        let status =
            error.status
            ?? {
                switch error.kind {
                case .conflict: return 409
                case .notFound: return 404
                case .authentication: return 401
                default: return 500
                }
            }()
        if let item = error.serverItem, status == 409 || status == 412 {
            if var answer = try? Self.json(status, WireJSON.encode(item)) {
                if let version = item.version { answer.headers.append((WireHeader.etag, ETag.quoted(version))) }
                return answer
            }
        }
        return Self.error(status, error.message)
    }

    /// Runs an encoding of the answer; its failure is the server's fault (500), not the request's.
    private func encoded(_ body: () throws -> [UInt8]) throws(AnswerEncodingError) -> [UInt8] {
        do {
            return try body()
        } catch {
            throw AnswerEncodingError(message: "\(error)")
        }
    }

    static func json(_ status: Int, _ body: [UInt8]) -> Answer {
        Answer(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-cache")], body: body)
    }

    /// A JSON error answer; `detail`, when given, is for the server log only (it may name
    /// internals the client must not see).
    static func error(_ status: Int, _ message: String, detail: String? = nil) -> Answer {
        var answer = json(
            status,
            (try? WireJSON.encodeObject(["error": .string(message)])) ?? Array(#"{"error":"unprintable error"}"#.utf8))
        answer.logDetail = detail
        return answer
    }

    /// The version of an `If-Match` header: `"v"`, `W/"v"` or a bare `v`; `*` and absence mean
    /// any version. Several tags are not supported (400).
    static func ifMatch(_ request: Request) throws -> String? {
        guard let raw = request.header(WireHeader.ifMatch)?.trimmingCharacters(in: " \t"), !raw.isEmpty, raw != "*" else {
            return nil
        }
        var tag = Substring(raw)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        if tag.count >= 2, tag.first == "\"", tag.last == "\"" { return String(tag.dropFirst().dropLast()) }
        if tag.contains("\"") || tag.contains(",") {
            throw OfflineSyncError(
                .syntax, "If-Match '\(raw)' is not one entity tag; send the item's version in double quotes")
        }
        return String(tag)
    }

    static func withoutSystemProperties(_ values: [String: Value]) -> [String: Value] {
        values.filter { SystemProperty(rawValue: $0.key) == nil && $0.key != "id" }
    }
}

/// An answer that could not be encoded (a stored value JSON cannot carry).
struct AnswerEncodingError: Error {
    var message: String
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        return String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
