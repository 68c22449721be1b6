import ArgumentParser
import Foundation
import Logging
import NIOSSL
import OfflineSync
import OfflineSyncService
import OfflineSyncPostgres
import OfflineSyncServer

/// `offline-sync serve`: the reference back end of the Azure Mobile Apps table protocol over a store.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a store over HTTP with the Azure Mobile Apps table protocol 2.0.0.",
        discussion: """
            Clients of that protocol (HTTPRemote, the Azure Mobile Apps SDKs) sync with the tables at \
            http://HOST:PORT/tables/{table}. Tables come from --schema (the format of 'import --schema'), \
            from the store itself, or, with --dynamic-schema, are created and widened on the first write, \
            like the Azure Node server's dynamic schema. A new store without --schema gets the demo table \
            'todoitem' (text, complete) and a dynamic schema. Each request is logged on standard error; \
            Ctrl-C or SIGTERM stops the server after the requests in progress. Several serve processes \
            (on one host or several) may serve one postgres:// store at once, behind a load balancer or \
            with clients choosing among them: writes are serialised by PostgreSQL and stamped inside that \
            lock, so every guarantee of one process holds across them (docs/ARCHITECTURE.md). GET /healthz \
            answers 200 while the store answers and 503 when it does not, without a token.

            Authentication: with --auth-secret-env, --auth-secret-file (HS256) or --auth-public-key \
            (RS256/ES256, a PEM public key or a JWKS file), every request's JWT (Authorization: Bearer \
            or X-ZUMO-AUTH) is checked, tables need a signed-in user unless the schema file says \
            "access": "anonymous", and "perUser": true tables show each user only their own rows. \
            Without auth the server listens on loopback only, unless --insecure-no-auth is given. \
            --tls-cert and --tls-key serve HTTPS; otherwise put a TLS-terminating proxy in front.

            Examples:
              offline-sync serve --store sqlite:./server.sqlite
              offline-sync serve --store memory: --port 0 --dynamic-schema
              offline-sync serve --store 'postgres://app@db:5432/app?schema=sync' \\
                --port 8081
              curl -H 'ZUMO-API-VERSION: 2.0.0' http://127.0.0.1:8080/tables/todoitem
              AUTH_SECRET=$(openssl rand -base64 48) offline-sync serve \\
                --store sqlite:./server.sqlite --schema schema.json \\
                --auth-secret-env AUTH_SECRET --auth-audience todo-app
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed on standard output).")
    var port = 8080

    @Option(help: ArgumentHelp("A JSON schema file declaring the tables to serve.", valueName: "file"))
    var schema: String?

    @Flag(help: "Create tables and add columns on the first write that needs them.")
    var dynamicSchema = false

    @Option(help: "The most rows one read returns (the server's page size cap).")
    var pageSize = 50

    @Option(
        help:
            "With --dynamic-schema, the most tables the store may hold for a write to create another; beyond it, 400.")
    var maxTables = 256

    @Option(help: "The largest request body accepted, in bytes; larger ones get 413.")
    var maxBodyBytes = 1 << 20

    @Flag(help: "Accept table requests without ZUMO-API-VERSION 2.0.x (old clients); the Azure servers answer 400.")
    var noApiVersionCheck = false

    @Option(
        help: ArgumentHelp(
            "Allow browser calls from this origin (CORS), e.g. https://app.example.com; repeat for several, '*' for any. Off by default.",
            valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(help: "Close a connection idle for this many seconds.")
    var idleTimeout = 60

    @Option(
        help: "Answer 408 and close when a request has not arrived completely this many seconds after its first byte.")
    var requestTimeout = 30

    @Option(help: "The most open connections; beyond it, new connections get 503.")
    var maxConnections = 512

    @Option(help: "The most open connections from one client address; beyond it, its new connections get 503.")
    var maxConnectionsPerAddress = 64

    @Option(
        help: ArgumentHelp(
            "How durable an acknowledged write is: 'power-loss' (the default: a file store syncs every commit to disk, as its sync=full does, so an answered write survives a power loss; batches pay for it) or 'store' (the store's own default or its ?sync= option, e.g. SQLite's sync=normal, which may lose the last writes to a power loss).",
            valueName: "power-loss|store"))
    var durability = "power-loss"

    @Option(help: "The most requests one POST /$batch may hold; larger batches get 413.")
    var maxBatchRequests = 1_000

    @Option(help: "The largest POST /$batch body accepted, in bytes; larger ones get 413.")
    var maxBatchBodyBytes = 16 << 20

    @Option(
        help: ArgumentHelp(
            "Check HS256 tokens with the secret in this environment variable (at least 32 bytes).",
            valueName: "VAR"))
    var authSecretEnv: String?

    @Option(
        help: ArgumentHelp(
            "Check HS256 tokens with the secret in this file (surrounding whitespace ignored).", valueName: "path"))
    var authSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "Check RS256/ES256 tokens with this PEM public key or JWKS file.", valueName: "path"))
    var authPublicKey: String?

    @Option(help: ArgumentHelp("Accept only tokens whose issuer (iss) is this.", valueName: "issuer"))
    var authIssuer: String?

    @Option(help: ArgumentHelp("Accept only tokens whose audience (aud) includes this.", valueName: "audience"))
    var authAudience: String?

    @Option(help: "The clock skew allowed when checking a token's exp and nbf, in seconds.")
    var authClockSkew = 60

    @Flag(
        help:
            "Listen on a non-loopback address without checking tokens (anyone who can reach it reads and writes every table)."
    )
    var insecureNoAuth = false

    @Option(help: ArgumentHelp("Serve HTTPS with this PEM certificate (chain); needs --tls-key.", valueName: "path"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "path"))
    var tlsKey: String?

    @Flag(help: "Do not serve the change stream (GET /changes answers 404, as on the Azure servers; clients poll).")
    var noChangeStream = false

    @Option(help: "Seconds between the heartbeat comments of an idle change stream.")
    var changesHeartbeat: Double = 15

    @Option(help: "The most open change streams; beyond it, 503 with Retry-After.")
    var changesMaxSubscribers = 10_000


    /// `configuration` with `sync=full` added when `powerLoss` is set, its scheme declares a
    /// durability option with a `full` level and the configuration names none: a server
    /// acknowledges only writes that survive a power loss, unless the store URL or `--durability
    /// store` says otherwise.
    static func durable(_ configuration: StoreConfiguration, powerLoss: Bool) -> StoreConfiguration {
        guard powerLoss, configuration.option("sync") == nil,
            let durability = try? StoreRegistry.shared.scheme(named: configuration.scheme).durability,
            durability.values?.contains("full") == true
        else { return configuration }
        return StoreConfiguration(
            scheme: configuration.scheme, path: configuration.path,
            options: configuration.options + [StoreConfiguration.Option("sync", "full")])
    }

    static let demoTable = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port \(port) is not a port number (0 to 65535)")
        }
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more") }
        guard maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes must be at least 1024") }
        guard durability == "power-loss" || durability == "store" else {
            throw ValidationError("--durability must be 'power-loss' or 'store', not '\(durability)'")
        }
        guard maxConnectionsPerAddress >= 1 else { throw ValidationError("--max-connections-per-address must be 1 or more") }
        guard maxBatchRequests >= 1 else { throw ValidationError("--max-batch-requests must be 1 or more") }
        guard maxBatchBodyBytes >= maxBodyBytes else {
            throw ValidationError("--max-batch-body-bytes must be at least --max-body-bytes (\(maxBodyBytes))")
        }
        guard idleTimeout >= 1 else { throw ValidationError("--idle-timeout must be 1 second or more") }
        guard requestTimeout >= 1 else { throw ValidationError("--request-timeout must be 1 second or more") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be 1 or more") }
        guard maxTables >= 1 else { throw ValidationError("--max-tables must be 1 or more") }
        guard changesHeartbeat >= 0.1, changesHeartbeat <= 3600 else {
            throw ValidationError("--changes-heartbeat must be between 0.1 and 3600 seconds")
        }
        guard changesMaxSubscribers >= 1 else { throw ValidationError("--changes-max-subscribers must be 1 or more") }
        for origin in corsOrigin where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--cors-origin '\(origin)' is not an origin; write it as https://host[:port], or '*'")
        }
        let keys = [authSecretEnv, authSecretFile, authPublicKey].compactMap { $0 }
        guard keys.count <= 1 else {
            throw ValidationError(
                "give one of --auth-secret-env, --auth-secret-file and --auth-public-key, not several")
        }
        if keys.isEmpty, authIssuer != nil || authAudience != nil {
            throw ValidationError(
                "--auth-issuer and --auth-audience need a key to check tokens with: add --auth-secret-env, --auth-secret-file or --auth-public-key"
            )
        }
        guard (0...3600).contains(authClockSkew) else {
            throw ValidationError("--auth-clock-skew must be 0 to 3600 seconds")
        }
        if keys.isEmpty, !insecureNoAuth, !Self.isLoopback(host) {
            throw ValidationError(
                "--host \(host) is not a loopback address and no authentication is configured: anyone who can reach it could read and rewrite every table. Add --auth-secret-env, --auth-secret-file or --auth-public-key, or --insecure-no-auth if that is really meant"
            )
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: give both, or neither")
        }
    }

    /// `true` for addresses only this machine can reach: `localhost`, `::1` and the IPv4 addresses
    /// 127.0.0.0/8 written as four decimal numbers (a name such as `127.example.com` is not one).
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && Int(part).map { $0 <= 255 } == true
        }
    }

    /// The token verifier the options ask for, or `nil` without any.
    func tokenVerifier() async throws -> TokenVerifier? {
        let options = TokenVerifier.Options(
            issuer: authIssuer, audience: authAudience, clockSkew: .seconds(authClockSkew))
        if let variable = authSecretEnv {
            return try await TokenVerifier.hmac(secret: try Self.secret(environment: variable), options: options)
        }
        if let path = authSecretFile {
            return try await TokenVerifier.hmac(secret: try Self.secret(file: path), options: options)
        }
        if let path = authPublicKey {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw OfflineSyncError(
                    .configuration, "cannot read the key file \(path) (--auth-public-key); check the path")
            }
            do {
                return try await TokenVerifier.publicKey(String(decoding: data, as: UTF8.self), options: options)
            } catch let error as OfflineSyncError {
                throw OfflineSyncError(error.code, "the key file \(path) (--auth-public-key): \(error.message)")
            }
        }
        return nil
    }

    /// The bytes of the secret in environment variable `variable` (surrounding whitespace dropped).
    static func secret(environment variable: String) throws -> [UInt8] {
        guard let value = ProcessInfo.processInfo.environment[variable] else {
            throw OfflineSyncError(
                .configuration, "the environment variable \(variable) is not set; export the token secret in it")
        }
        let secret = Array(value.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard !secret.isEmpty else {
            throw OfflineSyncError(
                .configuration, "the environment variable \(variable) is empty; put the token secret in it")
        }
        return secret
    }

    /// The bytes of the secret in the file at `path` (surrounding whitespace dropped).
    static func secret(file path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OfflineSyncError(
                .configuration, "cannot read the secret file \(path); check the path and its permissions")
        }
        let secret = Array(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard !secret.isEmpty else {
            throw OfflineSyncError(.configuration, "the secret file \(path) is empty; put the token secret in it")
        }
        return secret
    }

    /// The TLS configuration of --tls-cert and --tls-key, or `nil` without them.
    func tlsConfiguration() throws -> TLSConfiguration? {
        guard let certificatePath = tlsCert, let keyPath = tlsKey else { return nil }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw OfflineSyncError(
                .configuration, "cannot read a PEM certificate from \(certificatePath) (--tls-cert): \(error)")
        }
        guard !certificates.isEmpty else {
            throw OfflineSyncError(.configuration, "\(certificatePath) (--tls-cert) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw OfflineSyncError(
                .configuration, "cannot read a PEM private key from \(keyPath) (--tls-key); is it encrypted or not PEM?"
            )
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    func run() async throws {
        let logger = global.start("serve")
        var requestLogger = Logger(label: "offline-sync.serve")
        requestLogger.logLevel = .info
        let configuration = try Self.durable(selection.configuration(), powerLoss: durability == "power-loss")
        if let sync = configuration.option("sync"), durability == "power-loss", sync.lowercased() != "full" {
            logger.warning(
                "the store's sync=\(sync) is weaker than a commit synced to disk: an acknowledged write may be lost to a power loss"
            )
        }
        let verifier = try await tokenVerifier()
        let tls = try tlsConfiguration()
        let served = try schema.map(SchemaFile.loadServed) ?? (schema: StoreSchema([]), access: [:])
        let declared = served.schema
        try TableAccess.validate(served.access, checksTokens: verifier != nil)
        let store = try StoreAccess.open(configuration, schema: declared, logger: logger)
        var dynamic = dynamicSchema
        if schema == nil, StoreAccess.userTables(try store.schema).isEmpty {
            try store.close()
            try store.open(schema: StoreSchema([Serve.demoTable]))
            dynamic = true
        }
        let failureLogger = requestLogger
        // A file store is checked after every call against the file opened (see StoreFileGuard):
        // when another process replaces or deletes it, requests get 503 and the server stops, so
        // that no write is acknowledged into a file nothing reads again.
        let guarded = StoreAccess.dataFile(of: configuration).map { file in
            StoreFileGuard(store, file: file) { replaced in
                failureLogger.error("\(replaced)")
                // Stopped as by SIGTERM, once the 503 answers in progress are sent.
                Task.detached {
                    try? await Task.sleep(for: .milliseconds(300))
                    kill(getpid(), SIGTERM)
                }
            }
        }
        let service = try TableService(
            store: guarded ?? store, options: .init(maximumPageSize: pageSize, widensSchema: dynamic, maximumTableCount: maxTables),
            failureLog: { failureLogger.error("\($0)") })
        var serverConfiguration = TableServer.Configuration(
            host: host, port: port, maximumBodyBytes: maxBodyBytes, createsTables: dynamic, logger: requestLogger)
        serverConfiguration.checksAPIVersion = !noApiVersionCheck
        serverConfiguration.cors = CORSPolicy(allowedOrigins: corsOrigin)
        serverConfiguration.idleTimeout = .seconds(idleTimeout)
        serverConfiguration.requestReadTimeout = .seconds(requestTimeout)
        serverConfiguration.maximumConnections = maxConnections
        serverConfiguration.authentication = verifier
        serverConfiguration.tableAccess = served.access
        serverConfiguration.tls = tls
        serverConfiguration.maximumConnectionsPerAddress = maxConnectionsPerAddress
        serverConfiguration.maximumBatchRequests = maxBatchRequests
        serverConfiguration.maximumBatchBodyBytes = maxBatchBodyBytes
        serverConfiguration.changeStream = ChangeStreamConfiguration(
            isEnabled: !noChangeStream, heartbeat: .milliseconds(Int64(changesHeartbeat * 1000)),
            maximumSubscribers: changesMaxSubscribers,
            // Several serve processes may share a PostgreSQL schema: each relays its writes to the others.
            relay: configuration.scheme == "postgres" ? PostgresChangeRelay(settings: try PostgresConnectionSettings(configuration)) : nil)
        let server = TableServer(service: service, configuration: serverConfiguration)
        let host = TableServer.urlHost(self.host)
        let scheme = tls == nil ? "http" : "https"
        let security =
            verifier.map { " checking \($0.algorithms.sorted().joined(separator: "/")) tokens" }
            ?? " without authentication"
        try await server.run(untilSignal: true) { bound in
            var output = StandardOutput()
            output.write("serving \(configuration) on \(scheme)://\(host):\(bound)/tables/\(security)\n")
            output.flush()
        }
        try store.close()
        if let replaced = guarded?.replacement {
            throw OfflineSyncError(.storage, "\(replaced)")
        }
    }
}
