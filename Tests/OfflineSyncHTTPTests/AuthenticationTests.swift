import Foundation
import JWTKit
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncService
import OfflineSyncHTTP
import OfflineSyncServer
import Testing

/// Tokens checked by the server, per-table access and per-user data, through raw HTTP and through
/// the real client (HTTPRemote + SyncContext). Every security check has a case here that fails
/// when the check is removed.
@Suite("Authentication and per-user data")
struct AuthenticationTests {
    /// The server's todo table with the owner column of per-user data.
    static let ownedTodo = TableSchema(
        "todoitem", columns: [Column("text", .string), Column("complete", .bool), Column("userId", .string)])
    /// A table every user shares.
    static let notes = TableSchema("notes", columns: [Column("text", .string)])
    static let news = TableSchema("news", columns: [Column("text", .string)])
    static let secrets = TableSchema("secrets", columns: [Column("text", .string)])

    /// Runs a server checking HS256 tokens: `todoitem` per-user, `notes` authenticated (the
    /// default), `news` anonymous, `secrets` disabled.
    func withServer<Result: Sendable>(
        verifier: TokenVerifier? = nil, store: any LocalStore = InMemoryStore(),
        _ body: @Sendable (Int) async throws -> Result
    ) async throws -> Result {
        let verifier = if let verifier { verifier } else { try await Tokens.verifier() }
        return try await withTableServer(
            store: store, tables: [Self.ownedTodo, Self.notes, Self.news, Self.secrets],
            configure: {
                $0.authentication = verifier
                $0.tableAccess = ["todoitem": .perUser(), "news": .anonymous, "secrets": .disabled]
            }, body)
    }

    /// Headers of a request with `token` as a bearer token.
    static func headers(_ token: String?, zumo: Bool = false) -> [(String, String)] {
        var headers = [("ZUMO-API-VERSION", "2.0.0"), ("Content-Type", "application/json")]
        if let token { headers.append(zumo ? ("X-ZUMO-AUTH", token) : ("Authorization", "Bearer \(token)")) }
        return headers
    }

    static func request(
        _ method: String, _ target: String, port: Int, token: String?, body: String? = nil,
        extra: [(String, String)] = []
    ) async throws -> RawAnswer {
        try await send(
            method, target, port: port, headers: headers(token) + extra, body: body.map { Array($0.utf8) })
    }

    static func error(_ answer: RawAnswer) -> String {
        ((answer.json as? [String: Any])?["error"] as? String) ?? ""
    }

    static func text(_ answer: RawAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

    /// The ids of a read's answer.
    static func ids(_ answer: RawAnswer) -> [String] {
        ((answer.json as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }.sorted()
    }

    // MARK: Tokens

    @Test("a valid token is accepted from Authorization: Bearer and from X-ZUMO-AUTH")
    func validTokens() async throws {
        try await withServer { port in
            let token = try await Tokens.hs256("alice")
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: token).status == 200)
            let zumo = try await send(
                "GET", "/tables/notes", port: port, headers: Self.headers(token, zumo: true))
            #expect(zumo.status == 200)
        }
    }

    @Test("no token: 401 with WWW-Authenticate: Bearer and a message naming the headers")
    func missingToken() async throws {
        try await withServer { port in
            let answer = try await Self.request("GET", "/tables/notes", port: port, token: nil)
            #expect(answer.status == 401)
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(Self.error(answer).contains("Authorization: Bearer"))
            let basic = try await send(
                "GET", "/tables/notes", port: port, headers: Self.headers(nil) + [("Authorization", "Basic YTpi")])
            #expect(basic.status == 401)
        }
    }

    @Test("refused tokens: forged, unsigned, another key, expired, not yet valid, wrong audience and issuer, garbage")
    func refusedTokens() async throws {
        let verifier = try await Tokens.verifier(issuer: "https://issuer.example", audience: "todo-app")
        try await withServer(verifier: verifier) { port in
            func claims(
                _ subject: String = "alice", lifetime: TimeInterval = 3600, notBefore: TimeInterval? = nil,
                issuer: String = "https://issuer.example", audience: String = "todo-app"
            ) -> Tokens.Claims {
                Tokens.claims(subject, lifetime: lifetime, notBefore: notBefore, issuer: issuer, audience: audience)
            }
            let good = try await Tokens.hs256(claims())
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: good).status == 200)
            let exp = Int(Date().timeIntervalSince1970) + 3600
            let cases: [(String, String, String)] = [
                (
                    "forged", "signature",
                    Tokens.forged(
                        good, claims: #"{"sub":"bob","exp":\#(exp),"iss":"https://issuer.example","aud":"todo-app"}"#)
                ),
                (
                    "unsigned", "accepts HS256",
                    Tokens.unsigned(
                        claims: #"{"sub":"alice","exp":\#(exp),"iss":"https://issuer.example","aud":"todo-app"}"#)
                ),
                ("another key", "signature", try await Tokens.hs256(claims(), secret: Tokens.otherSecret)),
                ("expired", "expired", try await Tokens.hs256(claims(lifetime: -3600))),
                ("not yet valid", "not valid before", try await Tokens.hs256(claims(notBefore: 3600))),
                ("wrong audience", "audience", try await Tokens.hs256(claims(audience: "another-app"))),
                ("wrong issuer", "issuer", try await Tokens.hs256(claims(issuer: "https://evil.example"))),
                (
                    "no subject", "subject",
                    try await Tokens.hs256(Tokens.claims(nil, issuer: "https://issuer.example", audience: "todo-app"))
                ),
                ("garbage", "not a JWT", "not.a-token"),
            ]
            for (name, reason, token) in cases {
                for zumo in [false, true] {
                    let answer = try await send(
                        "GET", "/tables/notes", port: port, headers: Self.headers(token, zumo: zumo))
                    #expect(answer.status == 401, "\(name)")
                    #expect(Self.error(answer).contains(reason), "\(name): \(Self.error(answer))")
                    #expect(!Self.text(answer).contains(token), "\(name): the answer echoes the token")
                    #expect(answer.header("WWW-Authenticate")?.contains("invalid_token") == true, "\(name)")
                }
                // An anonymous table still refuses a bad token (so the client renews it).
                #expect(
                    try await Self.request("GET", "/tables/news", port: port, token: token).status == 401, "\(name)")
            }
            // Inside the clock-skew allowance (60 s) a just-expired token still passes.
            let justExpired = try await Tokens.hs256(claims(lifetime: -10))
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: justExpired).status == 200)
        }
    }

    /// Claims whose registered claims have the wrong JSON types.
    struct MistypedClaims: JWTPayload {
        var sub: JSONFragment
        var exp: JSONFragment
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A claim value of any of the JSON types the test needs.
    enum JSONFragment: Codable, Sendable {
        case text(String)
        case number(Int)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }

    @Test("a correctly signed token with a claim of the wrong type: 401 naming the claim and the type it needs")
    func mistypedClaims() async throws {
        try await withServer { port in
            let exp = Int(Date().timeIntervalSince1970) + 3600
            let cases: [(MistypedClaims, String)] = [
                (MistypedClaims(sub: .text("alice"), exp: .text("tomorrow")), "the token's exp claim must be a number"),
                (MistypedClaims(sub: .number(5), exp: .number(exp)), "the token's sub claim must be a string"),
            ]
            for (claims, reason) in cases {
                let keys = JWTKeyCollection()
                await keys.add(hmac: HMACKey(from: Tokens.secret), digestAlgorithm: .sha256)
                let token = try await keys.sign(claims)
                let answer = try await Self.request("GET", "/tables/notes", port: port, token: token)
                #expect(answer.status == 401)
                #expect(Self.error(answer).contains(reason), "\(Self.error(answer))")
                #expect(!Self.text(answer).contains(token) && !Self.text(answer).contains("tomorrow"))
            }
        }
    }

    @Test("RS256 with a PEM public key and ES256 with a JWKS; tokens of other keys refused")
    func publicKeys() async throws {
        let directory = try TemporaryDirectory()
        let (rsaPrivate, rsaPublic) = try Tokens.rsaKeyPair(in: directory)
        let rsa = try await TokenVerifier.publicKey(rsaPublic)
        #expect(rsa.algorithms == ["RS256"])
        #expect(
            try await rsa.verify(Tokens.rs256(Tokens.claims("alice"), privateKey: rsaPrivate)).get().subject == "alice")
        let (otherPrivate, _) = try Tokens.rsaKeyPair(in: try TemporaryDirectory())
        let otherRSA = await rsa.verify(try await Tokens.rs256(Tokens.claims("alice"), privateKey: otherPrivate))
        #expect(throws: AuthenticationFailure.self) { try otherRSA.get() }
        // An HS256 token "signed" with the public key's text (algorithm confusion) is refused.
        // It is refused for its algorithm, before any signature check.
        let confused = await rsa.verify(try await Tokens.hs256(Tokens.claims("alice"), secret: Array(rsaPublic.utf8)))
        #expect((try? confused.get()) == nil)
        if case .failure(let failure) = confused {
            #expect(failure.message.contains("names 'HS256'"), "\(failure.message)")
        }

        let key = ES256PrivateKey()
        let parameters = try #require(key.publicKey.parameters)
        let jwks =
            #"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig","x":"\#(parameters.x)","y":"\#(parameters.y)"}]}"#
        let es = try await TokenVerifier.publicKey(jwks)
        try await withServer(verifier: es) { port in
            let token = try await Tokens.es256(Tokens.claims("alice"), key: key, kid: "k1")
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: token).status == 200)
            let stranger = try await Tokens.es256(Tokens.claims("alice"), key: ES256PrivateKey(), kid: "k1")
            let refused = try await Self.request("GET", "/tables/notes", port: port, token: stranger)
            #expect(refused.status == 401)
            #expect(Self.error(refused).contains("signature"))
            let hmac = try await Tokens.hs256("alice")
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: hmac).status == 401)
        }
        let pem = try await TokenVerifier.publicKey(key.publicKey.pemRepresentation)
        #expect(try await pem.verify(Tokens.es256(Tokens.claims("bob"), key: key)).get().subject == "bob")
        await #expect(throws: OfflineSyncError.self) { try await TokenVerifier.publicKey(key.pemRepresentation) }
        await #expect(throws: OfflineSyncError.self) { try await TokenVerifier.publicKey("not a key") }
        await #expect(throws: OfflineSyncError.self) { try await TokenVerifier.hmac(secret: Array("short".utf8)) }
    }

    // MARK: Access levels

    @Test("access: anonymous without a token, authenticated by default, disabled refused, letter case ignored")
    func accessLevels() async throws {
        try await withServer { port in
            let token = try await Tokens.hs256("alice")
            #expect(try await Self.request("GET", "/tables/news", port: port, token: nil).status == 200)
            #expect(
                try await Self.request("POST", "/tables/news", port: port, token: nil, body: #"{"text":"hi"}"#).status
                    == 201)
            #expect(try await Self.request("GET", "/tables/notes", port: port, token: nil).status == 401)
            #expect(try await Self.request("GET", "/tables/NOTES", port: port, token: nil).status == 401)
            #expect(try await Self.request("GET", "/tables/TodoItem", port: port, token: nil).status == 401)
            #expect(try await Self.request("GET", "/tables/unknown", port: port, token: nil).status == 401)
            #expect(try await Self.request("GET", "/tables/unknown", port: port, token: token).status == 404)
            let disabled = try await Self.request("GET", "/tables/secrets", port: port, token: token)
            #expect(disabled.status == 405)
            #expect(try await Self.request("GET", "/tables/Secrets", port: port, token: token).status == 405)
            #expect(try await Self.request("OPTIONS", "/tables/notes", port: port, token: nil).status == 204)
        }
    }

    @Test("access rules that need tokens are refused by a server that checks none")
    func rulesWithoutTokens() async throws {
        #expect(throws: OfflineSyncError.self) {
            try TableAccess.validate(["todoitem": .perUser()], checksTokens: false)
        }
        #expect(throws: OfflineSyncError.self) {
            try TableAccess.validate(["todoitem": .authenticated], checksTokens: false)
        }
        #expect(throws: OfflineSyncError.self) {
            try TableAccess.validate(["todoitem": TableAccess(.anonymous, ownerColumn: "userId")], checksTokens: true)
        }
        try TableAccess.validate(["todoitem": .anonymous, "other": .disabled], checksTokens: false)
        await #expect(throws: OfflineSyncError.self) {
            try await withTableServer(configure: { $0.tableAccess = ["todoitem": .perUser()] }) { _ in }
        }
    }

    // MARK: Per-user data

    /// Alice inserts `a1` and `a2`; Bob inserts `b1`.
    func seed(port: Int) async throws -> (alice: String, bob: String, a1: [String: Any]) {
        let alice = try await Tokens.hs256("alice")
        let bob = try await Tokens.hs256("bob")
        let a1 = try await Self.request(
            "POST", "/tables/todoitem", port: port, token: alice, body: #"{"id":"a1","text":"alice's secret"}"#)
        #expect(a1.status == 201)
        #expect(
            try await Self.request(
                "POST", "/tables/todoitem", port: port, token: alice, body: #"{"id":"a2","text":"alice two"}"#
            ).status == 201)
        #expect(
            try await Self.request(
                "POST", "/tables/todoitem", port: port, token: bob, body: #"{"id":"b1","text":"bob's"}"#
            ).status == 201)
        return (alice, bob, try #require(a1.json as? [String: Any]))
    }

    @Test("inserts are stamped with the token's subject; a userId in the body is ignored on insert and update")
    func userIdInBody() async throws {
        let store = InMemoryStore()
        try await withServer(store: store) { port in
            let (alice, bob, a1) = try await seed(port: port)
            #expect(a1["userId"] == nil, "answers leave the owner column out")
            #expect(try store.lookup(table: "todoitem", id: "a1")?["userId"] == "alice")
            let smuggled = try await Self.request(
                "POST", "/tables/todoitem", port: port, token: bob,
                body: #"{"id":"b2","text":"planted","userId":"alice","USERID":"alice"}"#)
            #expect(smuggled.status == 201)
            #expect((smuggled.json as? [String: Any])?["userId"] == nil)
            #expect(
                Self.ids(try await Self.request("GET", "/tables/todoitem", port: port, token: alice)) == ["a1", "a2"])
            let moved = try await Self.request(
                "PATCH", "/tables/todoitem/b1", port: port, token: bob, body: #"{"userId":"alice","text":"moved?"}"#)
            #expect(moved.status == 200)
            #expect((moved.json as? [String: Any])?["userId"] == nil)
            let selected = try await Self.request(
                "GET", "/tables/todoitem?$select=id,userId", port: port, token: bob)
            #expect((selected.json as? [[String: Any]])?.compactMap { $0["userId"] as? String } == ["bob", "bob"])
            #expect(try store.lookup(table: "todoitem", id: "b1")?["userId"] == "bob")
            #expect(try store.lookup(table: "todoitem", id: "b2")?["userId"] == "bob")
            #expect(
                Self.ids(try await Self.request("GET", "/tables/todoitem", port: port, token: alice)) == ["a1", "a2"])
        }
    }

    @Test("another user's id in the URL: lookup, update, delete and undelete are 404 (never 412 or 409 with the row)")
    func anotherUsersId() async throws {
        let store = InMemoryStore()
        try await withServer(store: store) { port in
            let (_, bob, a1) = try await seed(port: port)
            let version = try #require(a1["version"] as? String)
            let attempts: [(String, String, String?, [(String, String)])] = [
                ("GET", "/tables/todoitem/a1", nil, []),
                ("GET", "/tables/todoitem/a1?__includeDeleted=true", nil, []),
                ("PATCH", "/tables/todoitem/a1", #"{"text":"bob was here"}"#, []),
                ("PATCH", "/tables/todoitem/a1", #"{"text":"bob was here"}"#, [("If-Match", "\"\(version)\"")]),
                ("PATCH", "/tables/todoitem/a1", #"{"text":"bob was here"}"#, [("If-Match", "\"stale\"")]),
                ("DELETE", "/tables/todoitem/a1", nil, []),
                ("DELETE", "/tables/todoitem/a1", nil, [("If-Match", "\"stale\"")]),
                ("POST", "/tables/todoitem/a1", nil, []),
                ("POST", "/tables/todoitem/a1", nil, [("If-Match", "\"stale\"")]),
            ]
            for (method, target, body, extra) in attempts {
                let answer = try await Self.request(method, target, port: port, token: bob, body: body, extra: extra)
                #expect(answer.status == 404, "\(method) \(target) \(extra)")
                #expect(!Self.text(answer).contains("alice"), "\(method) \(target) leaks alice's row")
            }
            let duplicate = try await Self.request(
                "POST", "/tables/todoitem", port: port, token: bob, body: #"{"id":"a1","text":"mine now"}"#)
            #expect(duplicate.status == 409)
            #expect(!Self.text(duplicate).contains("alice"), "the 409 leaks alice's row")
            let stored = try #require(try store.lookup(table: "todoitem", id: "a1"))
            #expect(stored["text"] == "alice's secret")
            #expect(stored.isDeleted == false)
            #expect(stored.version == version)
        }
    }

    @Test("a soft-deleted row of another user cannot be undeleted or read with __includeDeleted")
    func deletedRowsOfOthers() async throws {
        try await withServer { port in
            let (alice, bob, _) = try await seed(port: port)
            #expect(try await Self.request("DELETE", "/tables/todoitem/a2", port: port, token: alice).status == 200)
            #expect(try await Self.request("POST", "/tables/todoitem/a2", port: port, token: bob).status == 404)
            let read = try await Self.request(
                "GET", "/tables/todoitem?__includeDeleted=true", port: port, token: bob)
            #expect(Self.ids(read) == ["b1"])
            #expect(try await Self.request("POST", "/tables/todoitem/a2", port: port, token: alice).status == 200)
        }
    }

    @Test("filter tricks cannot widen a user's rows")
    func filterTricks() async throws {
        try await withServer { port in
            let (_, bob, _) = try await seed(port: port)
            let filters = [
                "userId ne 'x'", "userId eq 'alice'", "userId eq 'alice' or true", "true or true",
                "text ne 'x' or userId ne 'bob'", "not (userId eq 'bob')", "(userId eq 'alice') or (1 eq 1)",
                "userId eq null or userId ne null", "substringof('alice', userId) or true",
            ]
            for filter in filters {
                let encoded = try #require(filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let answer = try await Self.request(
                    "GET", "/tables/todoitem?$filter=\(encoded)&__includeDeleted=true", port: port, token: bob)
                #expect(answer.status == 200 || answer.status == 400, "\(filter): \(answer.status)")
                #expect(Set(Self.ids(answer)).isSubset(of: ["b1"]), "\(filter) widened the rows: \(Self.ids(answer))")
                #expect(!Self.text(answer).contains("alice"), "\(filter)")
            }
            let counted = try await Self.request(
                "GET", "/tables/todoitem?$filter=true%20or%20true&$inlinecount=allpages", port: port, token: bob)
            #expect((counted.json as? [String: Any])?["count"] as? Int == 1)
        }
    }

    // MARK: Through the real client

    /// A server store holding the per-user todo table.
    static func ownedService(_ store: any LocalStore = InMemoryStore()) throws -> TableService {
        try store.open(schema: StoreSchema([ownedTodo]))
        return try TableService(store: store)
    }

    static func start(_ service: TableService) async throws -> TableServer.Running {
        let verifier = try await Tokens.verifier()
        return try await RunningServer.start(service) {
            $0.authentication = verifier
            $0.tableAccess = ["todoitem": .perUser()]
        }
    }

    @Test("two users syncing through one server see only their own rows", arguments: [HTTPRemote.BatchWrites.never, .always])
    func twoUsers(batchWrites: HTTPRemote.BatchWrites) async throws {
        let store = InMemoryStore()
        let server = try await Self.start(try Self.ownedService(store))
        let alice = try Device.make("alice", store: InMemoryStore(), port: server.port, batchWrites: batchWrites) {
            $0.authentication = Tokens.bearer("alice")
        }
        let bob = try Device.make("bob", store: InMemoryStore(), port: server.port, batchWrites: batchWrites) {
            $0.authentication = .zumo(token: { try await Tokens.hs256("bob") })
        }
        let anonymous = try Device.make("anonymous", store: InMemoryStore(), port: server.port)

        _ = try alice.todo.insert((0..<20).map { Device.todo("alice-\($0)", "alice \($0)") })
        _ = try bob.todo.insert((0..<15).map { Device.todo("bob-\($0)", "bob \($0)") })
        #expect(try await alice.context.push().succeeded)
        #expect(try await bob.context.push().succeeded)
        #expect(try await alice.pullAll().received == 20)
        #expect(try await bob.pullAll().received == 15)
        #expect(try alice.items().keys.allSatisfy { $0.hasPrefix("alice-") })
        #expect(try bob.items().keys.allSatisfy { $0.hasPrefix("bob-") })
        #expect(try bob.items().count == 15)

        // Bob edits and deletes his own rows; Alice's are untouched.
        var first = try #require(try bob.todo.lookup(id: "bob-0"))
        first["complete"] = true
        try bob.todo.update(first)
        try bob.todo.delete(id: "bob-1")
        #expect(try await bob.context.push().succeeded)
        try await alice.pullAll()
        #expect(try alice.items().count == 20)

        await #expect(throws: RemoteError.self) { try await anonymous.pullAll() }
        let rows = try store.read(Query(table: "todoitem", top: 1000)).items
        #expect(rows.count == 35)
        for row in rows { #expect(row["userId"] == .string(row.id.hasPrefix("alice-") ? "alice" : "bob")) }

        try await EndToEndTests.shutDown(alice, bob, anonymous, server: server)
    }

    @Test("two devices of one user on a per-user table: a conflict is resolved by either handler")
    func conflictOfOneUser() async throws {
        for handler in [ServerWinsPushHandler() as any PushHandler, ClientWinsPushHandler()] {
            let server = try await Self.start(try Self.ownedService())
            let phone = try Device.make("phone", store: InMemoryStore(), port: server.port) {
                $0.authentication = Tokens.bearer("alice")
            }
            let laptop = try Device.make("laptop", store: InMemoryStore(), port: server.port, handler: handler) {
                $0.authentication = Tokens.bearer("alice")
            }
            _ = try phone.todo.insert(Device.todo("shared", "original"))
            #expect(try await phone.context.push().succeeded)
            try await laptop.pullAll()
            var mine = try #require(try phone.todo.lookup(id: "shared"))
            mine["text"] = "phone's edit"
            try phone.todo.update(mine)
            #expect(try await phone.context.push().succeeded)
            var theirs = try #require(try laptop.todo.lookup(id: "shared"))
            theirs["text"] = "laptop's edit"
            try laptop.todo.update(theirs)
            let push = try await laptop.context.push()
            #expect(push.succeeded, "\(type(of: handler)): \(push.errors)")
            try await phone.pullAll()
            let expected = handler is ServerWinsPushHandler ? "phone's edit" : "laptop's edit"
            #expect(try phone.todo.lookup(id: "shared")?["text"] == .string(expected))
            #expect(try laptop.todo.lookup(id: "shared")?["text"] == .string(expected))
            try await EndToEndTests.shutDown(phone, laptop, server: server)
        }
    }

    @Test(
        "a token that expires mid-push is renewed once and the push completes, nothing lost or applied twice",
        arguments: [HTTPRemote.BatchWrites.never, .always])
    func tokenExpiresMidPush(batchWrites: HTTPRemote.BatchWrites) async throws {
        let store = InMemoryStore()
        let server = try await Self.start(try Self.ownedService(store))
        let source = try await TokenSource(subject: "alice")
        let alice = try Device.make("alice", store: InMemoryStore(), port: server.port, batchWrites: batchWrites) {
            $0.authentication = source.authentication
        }
        let count = 200
        _ = try alice.todo.insert((0..<count).map { Device.todo(String(format: "t%03d", $0), "todo \($0)") })
        // The token is fetched per write, or per `$batch` of 64 writes of a batched push: the
        // second fetch gets the expired one, after the first write or chunk was applied.
        source.expire(after: 2, with: try await Tokens.hs256(Tokens.claims("alice", lifetime: -3600)))
        let pushed = try await alice.context.push()
        #expect(pushed.succeeded, "\(pushed.errors)")
        #expect(source.refreshes == 1)
        #expect(try alice.context.pendingOperationCount() == 0)
        let rows = try store.read(Query(table: "todoitem", top: 1000)).items
        #expect(rows.count == count)
        for row in rows {
            #expect(row["userId"] == "alice")
            #expect(row.version == TableServiceVersion.first(of: row), "\(row.id) was written more than once")
        }
        try await alice.pullAll()
        #expect(try alice.items().count == count)
        try await EndToEndTests.shutDown(alice, server: server)
    }
}

/// Whether a stored row was written once: its `updatedAt` equals its `createdAt`.
enum TableServiceVersion {
    static func first(of row: Item) -> String? {
        row.updatedAt == row.createdAt ? row.version : nil
    }
}
