import OfflineSync
import OfflineSyncService
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
        /// What the request's token proved, checked before the request reaches the protocol
        /// (``TableProtocol/authenticate(_:with:)``); `.none` when the server checks no tokens.
        var credential: Credential = .none
    }

    /// The outcome of a request's token check.
    enum Credential: Sendable, Equatable {
        /// No token was sent (or the server checks none).
        case none
        /// A valid token naming this user.
        case user(AuthenticatedUser)
        /// A token was sent and refused.
        case refused(AuthenticationFailure)
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
    let access: AccessPolicy
    /// The most requests one `POST /$batch` may hold (see ``batch(_:)``).
    let maximumBatchRequests: Int
    /// Where committed writes are announced to the change stream's subscribers, if it is served.
    let changes: ChangeBroadcaster?

    init(
        service: TableService, createsTables: Bool, checksAPIVersion: Bool = true, cors: CORSPolicy = CORSPolicy(),
        limits: QueryLimits = QueryLimits(), access: AccessPolicy = AccessPolicy(rules: [:], checksTokens: false),
        maximumBatchRequests: Int = 1_000, changes: ChangeBroadcaster? = nil
    ) {
        self.maximumBatchRequests = maximumBatchRequests
        self.changes = changes
        self.service = service
        self.createsTables = createsTables
        self.checksAPIVersion = checksAPIVersion
        self.cors = cors
        self.limits = limits
        self.access = access
    }

    // MARK: Authentication

    /// The token of a request: `Authorization: Bearer <token>` or, without it, `X-ZUMO-AUTH:
    /// <token>` (App Service authentication's header); `nil` when neither is sent.
    static func token(of request: Request) -> Result<String, AuthenticationFailure>? {
        if let authorization = request.header("Authorization")?.trimmingCharacters(in: " \t"), !authorization.isEmpty {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                return .failure(
                    AuthenticationFailure(
                        .malformed, "the Authorization header is not 'Bearer <token>'; send the JWT as a bearer token"))
            }
            return .success(String(parts[1]).trimmingCharacters(in: " \t"))
        }
        if let zumo = request.header("X-ZUMO-AUTH")?.trimmingCharacters(in: " \t"), !zumo.isEmpty {
            return .success(zumo)
        }
        return nil
    }

    /// Checks the token a request carries with `verifier`.
    static func authenticate(_ request: Request, with verifier: TokenVerifier) async -> Credential {
        switch token(of: request) {
        case nil: return .none
        case .failure(let failure)?: return .refused(failure)
        case .success(let token)?:
            switch await verifier.verify(token) {
            case .success(let user): return .user(user)
            case .failure(let failure): return .refused(failure)
            }
        }
    }

    /// A 401 with `WWW-Authenticate: Bearer` (so clients renew their token) and the reason.
    static func unauthorized(_ failure: AuthenticationFailure) -> Answer {
        var answer = error(401, failure.message)
        var challenge = #"Bearer realm="offline-sync""#
        if failure.reason != .missing { challenge += #", error="invalid_token""# }
        answer.headers.append(("WWW-Authenticate", challenge))
        return answer
    }

    /// The owner a request acts for on `table`, or the answer refusing it.
    private func authorize(_ request: Request, table: String) -> Authorization {
        if case .refused(let failure) = request.credential { return .refused(Self.unauthorized(failure)) }
        let rule = access.access(table)
        switch rule.level {
        case .disabled:
            var answer = Self.error(405, "table '\(Self.shown(table))' is disabled on this server")
            answer.headers.append(("Allow", ""))
            return .refused(answer)
        case .anonymous:
            return .allowed(nil)
        case .authenticated:
            guard case .user(let user) = request.credential else {
                return .refused(
                    Self.unauthorized(
                        AuthenticationFailure(
                            .missing,
                            "table '\(Self.shown(table))' needs a signed-in user: send 'Authorization: Bearer <token>' or 'X-ZUMO-AUTH: <token>'"
                        )))
            }
            return .allowed(rule.ownerColumn.map { RowOwner(userId: user.subject, column: $0) })
        }
    }

    /// What ``authorize(_:table:)`` decided.
    private enum Authorization {
        /// Go on, acting for this owner (`nil`: rows are shared).
        case allowed(RowOwner?)
        /// Answer this instead.
        case refused(Answer)
    }

    /// Answers one request; never throws: every failure becomes a JSON error answer, with the
    /// CORS headers an allowed origin needs to read it.
    func respond(to request: Request) -> Answer {
        var answer = answer(to: request)
        answer.headers += cors.headers(origin: request.header("Origin"))
        return answer
    }

    /// Answers one request without the CORS headers (which the server's middleware adds); never
    /// throws: every failure becomes a JSON error answer.
    func answer(to request: Request) -> Answer {
        if let health = healthCheck(request) { return health }
        if request.target.prefix(while: { $0 != "?" }) == JSONBatch.path { return batch(request) }
        switch prepare(request) {
        case .answered(let answer): return answer
        case .read(let read): return answering(read)
        case .write(let write, let status):
            let outcomes = service.apply([write])
            announce([write], outcomes)
            return answer(to: write, status: status, outcomes[0])
        }
    }

    /// What a table request asks, parsed and checked but not yet applied to the store.
    enum Prepared {
        /// Answered without the store (a refusal, a malformed request, a preflight).
        case answered(Answer)
        /// A read, answered when called.
        case read(() throws -> Answer)
        /// A write for ``OfflineSyncService/TableService/apply(_:)``, answered with `status` when
        /// it succeeds.
        case write(TableService.Write, status: Int)
    }

    /// Parses and checks a table request (route, token, table access, API version, body), as far
    /// as it can without the store.
    func prepare(_ request: Request) -> Prepared {
        var parsed: [String: TableRequestTarget] = [:]
        return prepare(request, parsed: &parsed)
    }

    /// ``prepare(_:)`` that takes the request's target from `parsed` when an earlier request had
    /// the same one (the inserts of a batch share theirs), and adds it there otherwise.
    func prepare(_ request: Request, parsed: inout [String: TableRequestTarget]) -> Prepared {
        do {
            let target: TableRequestTarget
            if let known = parsed[request.target] {
                target = known
            } else {
                guard let found = try TableRequestTarget(request.target) else {
                    return .answered(
                        Self.error(404, "no route for \(Self.shown(request.target)); tables are under /tables/{table}"))
                }
                parsed[request.target] = found
                target = found
            }
            return try route(request, target)
        } catch {
            return .answered(answer(for: error))
        }
    }

    /// The answer to a write's outcome, as the request alone would have had it.
    func answer(to write: TableService.Write, status: Int, _ outcome: Result<Item, any Error>) -> Answer {
        switch outcome {
        case .success(let item):
            return answering { try itemAnswer(status, item, table: write.table, owner: write.owner) }
        case .failure(var error as RemoteError) where write.owner != nil:
            // Another user's row never travels in an answer (see `hidingOwner`).
            error.serverItem = error.serverItem.map { Self.hidingOwner($0, write.owner) }
            return answer(for: error)
        case .failure(let error):
            return answer(for: error)
        }
    }

    /// The answer `body` gives, or the one its failure does.
    private func answering(_ body: () throws -> Answer) -> Answer {
        do {
            return try body()
        } catch {
            return answer(for: error)
        }
    }

    /// The JSON error answer of a failure.
    func answer(for error: any Error) -> Answer {
        switch error {
        case let error as RemoteError:
            return failure(error)
        case let error as AnswerEncodingError:
            return Self.error(500, "the answer could not be written as JSON; see the server log", detail: error.message)
        case let error as OfflineSyncError:
            switch error.code {
            case .unknownTable: return Self.error(404, error.message)
            case .syntax, .invalidQuery, .unknownColumn, .invalidValue, .invalidName, .invalidSchema:
                return Self.error(400, error.message)
            default:
                return Self.error(500, "the server failed (\(error.code)); see the server log", detail: error.message)
            }
        case let error as WireFormatError:
            return Self.error(400, "the request body could not be read: \(error.message)")
        default:
            return Self.error(500, "the server failed; see the server log", detail: "\(error)")
        }
    }

    /// A request target cut to a length fit for an error message or the log, with the values of
    /// the query options that carry a token (``credentialOptions``) replaced by `<redacted>`.
    static func shown(_ target: String) -> String {
        let target = redactingCredentials(target)
        return target.utf8.count <= 200 ? target : String(target.prefix(200)) + "…"
    }

    /// The query options, by lower-cased decoded name, whose values are tokens (clients of App
    /// Service authentication put one in `access_token`); never written to the log.
    static let credentialOptions: Set<String> = ["access_token", "x-zumo-auth"]

    /// `target` with the value of every query option named in ``credentialOptions`` (in any
    /// letter case, percent-encoded or not) replaced by `<redacted>`.
    static func redactingCredentials(_ target: String) -> String {
        guard let question = target.firstIndex(of: "?") else { return target }
        let options = target[target.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        let redacted = options.map { option -> Substring in
            let name = option.prefix { $0 != "=" }
            guard name.count < option.count,
                credentialOptions.contains(
                    (PercentEncoding.decode(name, plusAsSpace: true) ?? String(name)).lowercased())
            else { return option }
            return name + "=<redacted>"
        }
        return String(target[...question]) + redacted.joined(separator: "&")
    }

    /// The path a load balancer or orchestrator probes (`GET /healthz`): answered without a token
    /// or `ZUMO-API-VERSION`, 200 `{"status":"ok"}` when the store answers
    /// (``OfflineSync/TableService/checkHealth()``), else 503 with `Retry-After` and the store's
    /// error in the server log only.
    static let healthPath = "/healthz"

    /// The answer to a health check, or `nil` for any other request.
    private func healthCheck(_ request: Request) -> Answer? {
        let path = request.target.prefix { $0 != "?" }
        guard path == Self.healthPath else { return nil }
        guard request.method == "GET" else {
            var answer = Self.error(405, "\(Self.healthPath) answers GET only")
            answer.headers.append(("Allow", "GET"))
            return answer
        }
        do {
            try service.checkHealth()
            return Self.json(200, Array(#"{"status":"ok"}"#.utf8))
        } catch {
            var answer = Self.json(
                503, Array(#"{"status":"unavailable","error":"the store does not answer; see the server log"}"#.utf8))
            answer.headers.append(("Retry-After", "5"))
            answer.logDetail = "health check: \(error)"
            return answer
        }
    }

    // MARK: Routes

    private func route(_ request: Request, _ target: TableRequestTarget) throws -> Prepared {
        let allowed = target.id == nil ? "GET, POST" : "GET, POST, PATCH, DELETE"
        if request.method == "OPTIONS" {
            var answer = Answer(status: 204, headers: [("Allow", allowed + ", OPTIONS")], body: [])
            answer.headers += cors.preflightHeaders(
                origin: request.header("Origin"), requestedHeaders: request.header("Access-Control-Request-Headers"))
            return .answered(answer)
        }
        let owner: RowOwner?
        switch authorize(request, table: target.table) {
        case .allowed(let allowed): owner = allowed
        case .refused(let refusal): return .answered(refusal)
        }
        if checksAPIVersion {
            let version = request.header(WireHeader.apiVersion) ?? target.options[WireHeader.apiVersion.lowercased()]
            guard let version, WireHeader.isSupportedAPIVersion(version) else {
                let given = version.map { "'\($0.prefix(40))' is not supported" } ?? "is missing"
                return .answered(Self.error(
                    400,
                    "the ZUMO-API-VERSION header \(given); this server speaks the table protocol 2.0.x: send 'ZUMO-API-VERSION: 2.0.0'"
                ))
            }
        }
        if let encoding = request.header("Content-Encoding"),
            let coding = encoding.split(separator: ",").map({ String($0).trimmingCharacters(in: " \t") })
                .first(where: { !$0.isEmpty && $0.lowercased() != "identity" })
        {
            return .answered(
                Self.error(
                    415,
                    "the request body is encoded with '\(coding.prefix(40))', which this server does not decode; send the JSON body without Content-Encoding"
                ))
        }
        return try operation(request, target, owner, allowed: allowed)
    }

    /// The per-user column is the server's business: its value is always the caller's own id,
    /// so answers leave it out (a client need not declare it); a `$select` naming it gets it.
    static func hidingOwner(_ item: Item, _ owner: RowOwner?) -> Item {
        guard let owner else { return item }
        var hidden = item
        hidden.values.removeValue(forKey: owner.column)
        return hidden
    }

    private func operation(_ request: Request, _ target: TableRequestTarget, _ owner: RowOwner?, allowed: String)
        throws -> Prepared
    {
        switch (request.method, target.id) {
        case ("GET", nil): return .read { try self.read(target, owner) }
        case ("GET", let id?): return .read { try self.lookup(id, target, owner) }
        case ("POST", nil): return .write(try insert(request, target, owner), status: 201)
        case ("POST", let id?):
            return .write(
                TableService.Write(
                    .undelete(ifMatch: try Self.ifMatch(request)), table: target.table, item: Item(id: id), owner: owner),
                status: 200)
        case ("PATCH", let id?): return .write(try update(id, request, target, owner), status: 200)
        case ("DELETE", let id?):
            return .write(
                TableService.Write(
                    .delete(ifMatch: try Self.ifMatch(request)), table: target.table, item: Item(id: id), owner: owner),
                status: 200)
        default:
            var answer = Self.error(
                405, "\(request.method.prefix(20)) is not allowed on \(Self.shown(request.target)); use \(allowed)")
            answer.headers.append(("Allow", allowed))
            return .answered(answer)
        }
    }

    private func read(_ target: TableRequestTarget, _ owner: RowOwner?) throws -> Answer {
        guard try service.hasTable(target.table) else {
            throw OfflineSyncError(.unknownTable, "the server has no table '\(target.table)'")
        }
        let query = try target.query()
        try limits.check(query)
        var page = try service.readPage(query, includeDeleted: target.includeDeleted, owner: owner)
        guard let selection = query.selection else {
            if owner != nil { page.items = page.items.map { Self.hidingOwner($0, owner) } }
            return try Self.json(200, encoded { try WireJSON.encodePage(page) })
        }
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

    private func lookup(_ id: String, _ target: TableRequestTarget, _ owner: RowOwner?) throws -> Answer {
        let item = try service.lookup(id: id, in: target.table, includeDeleted: target.includeDeleted, owner: owner)
        guard let item else { return Self.error(404, "The item does not exist") }
        return try itemAnswer(200, item, table: target.table, owner: owner)
    }

    private func insert(_ request: Request, _ target: TableRequestTarget, _ owner: RowOwner?) throws
        -> TableService.Write
    {
        // The common body, an object with a string id, is read straight into an item.
        if !request.body.isEmpty, var item = try? JSONCodec.decodeItem(request.body) {
            for property in SystemProperty.allCases { item.removeValue(forColumn: property.rawValue) }
            return TableService.Write(.insert(creatingTable: createsTables), table: target.table, item: item, owner: owner)
        }
        var values = try WireJSON.decodeObject(request.body)
        let id: String
        switch values.removeValue(forKey: "id") {
        case nil, .null?: id = ""
        case .string(let text)?: id = text
        case let other?:
            throw OfflineSyncError(.invalidValue, "the item's \"id\" is \(Self.kind(of: other)); ids must be strings")
        }
        return TableService.Write(
            .insert(creatingTable: createsTables), table: target.table,
            item: Item(id: id, values: Self.withoutSystemProperties(values)), owner: owner)
    }

    private func update(_ id: String, _ request: Request, _ target: TableRequestTarget, _ owner: RowOwner?) throws
        -> TableService.Write
    {
        var values = try WireJSON.decodeObject(request.body)
        if let bodyId = values.removeValue(forKey: "id"), bodyId != .string(id), !bodyId.isNull {
            throw OfflineSyncError(.invalidValue, "the body's \"id\" \(bodyId) differs from the id '\(id)' in the URL")
        }
        let bodyVersion: String?
        switch values[SystemProperty.version.rawValue] {
        case nil, .null?: bodyVersion = nil
        case .string(let text)?: bodyVersion = text
        case let other?:
            throw OfflineSyncError(
                .invalidValue,
                "the body's \"version\" is \(Self.kind(of: other)); a version is a string, the item's ETag without its quotes: send it as a JSON string, or in If-Match"
            )
        }
        let version = try Self.ifMatch(request) ?? bodyVersion
        return TableService.Write(
            .merge(ifMatch: version), table: target.table, item: Item(id: id, values: Self.withoutSystemProperties(values)),
            owner: owner)
    }

    // MARK: Answers

    private func itemAnswer(_ status: Int, _ item: Item, table: String, owner: RowOwner?) throws -> Answer {
        let item = Self.hidingOwner(item, owner)
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
        var answer = Self.error(status, error.message)
        if status == 503 { answer.headers.append(("Retry-After", "1")) }
        return answer
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

    /// The 413 for a request body over `limit` bytes.
    static func bodyTooLarge(limit: Int) -> Answer {
        error(
            413,
            "the request body is larger than \(limit) bytes, the server's limit; send a smaller body, or start the server with a larger --max-body-bytes"
        )
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

    /// The version a conditional write is checked against: the one tag `If-Match` names; `nil`
    /// for any version (no `If-Match`, or `*`). A list of several tags is a 400: an item has one
    /// version, and the Azure Node server takes the whole header as one version, so a list never
    /// matches there. The write checks the version atomically.
    static func ifMatch(_ request: Request) throws -> String? {
        guard let versions = try ifMatchTags(request) else { return nil }
        guard versions.count == 1 else {
            throw OfflineSyncError(
                .syntax,
                "If-Match lists \(versions.count) entity tags; an item has one version: send only the version the write is based on, in double quotes (or * for any version)"
            )
        }
        return versions[0]
    }

    /// The versions of an `If-Match` header, a comma-separated list of `"v"`, `W/"v"` or a bare
    /// `v`; `nil` when it is absent, empty or is `*` alone (any version). Throws `.syntax` for an
    /// unclosed or misplaced double quote. `*` in a list counts as one of its entries.
    private static func ifMatchTags(_ request: Request) throws -> [String]? {
        guard let raw = request.header(WireHeader.ifMatch) else { return nil }
        let malformed = OfflineSyncError(
            .syntax,
            "If-Match '\(raw.prefix(200))' is not a list of entity tags; send the item's version in double quotes")
        var versions: [String] = []
        var rest = Substring(raw)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { break }
            if rest.hasPrefix("W/") { rest = rest.dropFirst(2) }
            if rest.first == "\"" {
                let inside = rest.dropFirst()
                guard let close = inside.firstIndex(of: "\"") else { throw malformed }
                versions.append(String(inside[..<close]))
                rest = inside[inside.index(after: close)...]
                guard rest.first.map({ $0 == "," || $0 == " " || $0 == "\t" }) ?? true else { throw malformed }
            } else {
                let entry = rest.prefix { $0 != "," }
                rest = rest[entry.endIndex...]
                let tag = String(entry).trimmingCharacters(in: " \t")
                if tag.contains("\"") { throw malformed }
                versions.append(tag)
            }
        }
        return versions.isEmpty || versions == ["*"] ? nil : versions
    }

    /// What a JSON value is, for an error message that must not repeat the value itself.
    static func kind(of value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "true or false"
        case .int, .double: return "a number"
        case .string, .date: return "a string"
        case .json: return "an object or an array"
        }
    }

    /// `values` without `id` and the system properties: the server sets `createdAt`,
    /// `updatedAt`, `version` and `deleted` itself, so a body's values for them are ignored,
    /// whatever their type (a PATCH body's `version` is read before, as its condition).
    static func withoutSystemProperties(_ values: [String: Value]) -> [String: Value] {
        values.filter { SystemProperty(columnName: $0.key) == nil && $0.key != "id" }
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
