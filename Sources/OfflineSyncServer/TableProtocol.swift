import OfflineSync
import OfflineSyncProtocol
import Synchronization

/// The table protocol on the server side: turns one HTTP request into one answer by calling a
/// ``TableService``, independent of the HTTP framework.
///
/// What it adds to the service is the protocol itself: routes, query options, JSON bodies,
/// `If-Match`/`ETag`, PATCH as a merge of the given columns into the stored item, the answers of
/// the Azure Node server (201 for inserts, 200 with the deleted row for deletes, 404 with
/// `{"error": …}`, 409/412 with the server's item) and, with a dynamic schema, tables created on
/// first write. Calls are serialised, so a merge or a table creation is atomic.
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
    }

    let service: TableService
    let createsTables: Bool
    private let lock = Mutex(())

    init(service: TableService, createsTables: Bool) {
        self.service = service
        self.createsTables = createsTables
    }

    /// Answers one request; never throws: every failure becomes a JSON error answer.
    func respond(to request: Request) -> Answer {
        do {
            return try lock.withLock { _ in
                guard let target = try TableRequestTarget(request.target) else {
                    return Self.error(404, "no route for \(request.target); tables are under /tables/{table}")
                }
                return try route(request, target)
            }
        } catch let error as RemoteError {
            return failure(error)
        } catch let error as AnswerEncodingError {
            return Self.error(500, "the answer could not be written as JSON: \(error.message)")
        } catch let error as OfflineSyncError {
            switch error.code {
            case .unknownTable: return Self.error(404, error.message)
            case .syntax, .invalidQuery, .unknownColumn, .invalidValue, .invalidName, .invalidSchema:
                return Self.error(400, error.message)
            default: return Self.error(500, error.message)
            }
        } catch let error as WireFormatError {
            return Self.error(400, "the request body could not be read: \(error.message)")
        } catch {
            return Self.error(500, "\(error)")
        }
    }

    // MARK: Routes

    private func route(_ request: Request, _ target: TableRequestTarget) throws -> Answer {
        if let version = request.header("ZUMO-API-VERSION"), !version.hasPrefix("2.") {
            return Self.error(400, "ZUMO-API-VERSION \(version) is not supported; this server speaks 2.0.0")
        }
        switch (request.method, target.id) {
        case ("GET", nil): return try read(target)
        case ("GET", let id?): return try lookup(id, target)
        case ("POST", nil): return try insert(request, target)
        case ("PATCH", let id?): return try update(id, request, target)
        case ("DELETE", let id?): return try delete(id, request, target)
        default:
            let allowed = target.id == nil ? "GET, POST" : "GET, PATCH, DELETE"
            var answer = Self.error(405, "\(request.method) is not allowed on \(request.target); use \(allowed)")
            answer.headers.append(("Allow", allowed))
            return answer
        }
    }

    private func read(_ target: TableRequestTarget) throws -> Answer {
        let query = try target.query()
        guard try tableExists(target.table) else {
            if createsTables {
                try Identifier.validateUserTable(target.table)
                return try Self.json(
                    200,
                    encoded {
                        try WireJSON.encodePage(QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil))
                    })
            }
            throw OfflineSyncError(.unknownTable, "the server has no table '\(target.table)'")
        }
        let page = try service.readPage(query, includeDeleted: target.includeDeleted)
        return try Self.json(200, encoded { try WireJSON.encodePage(page) })
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
        try createTableIfNeeded(target.table)
        let stored = try service.insert(Item(id: id, values: Self.withoutSystemProperties(values)), into: target.table)
        return try itemAnswer(201, stored, table: target.table)
    }

    private func update(_ id: String, _ request: Request, _ target: TableRequestTarget) throws -> Answer {
        var values = try WireJSON.decodeObject(request.body)
        if let bodyId = values.removeValue(forKey: "id"), bodyId != .string(id), !bodyId.isNull {
            throw OfflineSyncError(.invalidValue, "the body's \"id\" \(bodyId) differs from the id '\(id)' in the URL")
        }
        let version = try Self.ifMatch(request) ?? values[SystemProperty.version.rawValue]?.stringValue
        guard let existing = try service.lookup(id: id, in: target.table) else {
            return Self.error(404, "The item does not exist")
        }
        var merged = Self.withoutSystemProperties(existing.values)
        for (key, value) in Self.withoutSystemProperties(values) { merged[key] = value }
        let stored = try service.update(Item(id: id, values: merged), in: target.table, ifMatch: version)
        return try itemAnswer(200, stored, table: target.table)
    }

    private func delete(_ id: String, _ request: Request, _ target: TableRequestTarget) throws -> Answer {
        let deleted = try service.delete(id: id, from: target.table, ifMatch: try Self.ifMatch(request))
        return try itemAnswer(200, deleted, table: target.table)
    }

    // MARK: Schema

    private func tableExists(_ table: String) throws -> Bool {
        try service.store.schema.table(named: table) != nil
    }

    /// With a dynamic schema, declares a missing table (columns come with the first write).
    private func createTableIfNeeded(_ table: String) throws {
        guard createsTables, try !tableExists(table) else { return }
        try Identifier.validateUserTable(table)
        let store = service.store
        try store.close()
        try store.open(schema: StoreSchema([TableService.served(TableSchema(table, columns: []))]))
    }

    // MARK: Answers

    private func itemAnswer(_ status: Int, _ item: Item, table: String) throws -> Answer {
        var answer = try Self.json(status, encoded { try WireJSON.encode(item) })
        if let version = item.version { answer.headers.append(("ETag", ETag.quoted(version))) }
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
                if let version = item.version { answer.headers.append(("ETag", ETag.quoted(version))) }
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

    static func error(_ status: Int, _ message: String) -> Answer {
        json(
            status,
            (try? WireJSON.encodeObject(["error": .string(message)])) ?? Array(#"{"error":"unprintable error"}"#.utf8))
    }

    /// The version of an `If-Match` header: `"v"`, `W/"v"` or a bare `v`; `*` and absence mean
    /// any version. Several tags are not supported (400).
    static func ifMatch(_ request: Request) throws -> String? {
        guard let raw = request.header("If-Match")?.trimmingCharacters(in: " \t"), !raw.isEmpty, raw != "*" else {
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
