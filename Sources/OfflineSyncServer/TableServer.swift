import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import HummingbirdCore
import HummingbirdTLS
public import Logging
public import NIOCore
import NIOPosix
public import NIOSSL
public import OfflineSync
public import OfflineSyncService
import UnixSignals

/// A reference back end of the Azure Mobile Apps table protocol 2.0.0, on Hummingbird, serving a
/// `TableService` (and through it any `LocalStore`).
///
/// It answers what the original clients send the way the Azure Node server does (see
/// `TableProtocol`): `GET/POST /tables/{table}`, `GET/PATCH/DELETE /tables/{table}/{id}`, OData v3
/// and v4 `$filter` literals, `__includeDeleted` in any letter case, `$inlinecount=allpages` as
/// `{"results": [...], "count": N}`, quoted `If-Match`, PATCH bodies without system properties.
/// Bodies larger than ``Configuration/maximumBodyBytes`` get 413, malformed filters and JSON 400,
/// each with `{"error": "…"}` naming the fault (never SQL, paths or other internals: a 500's
/// detail goes to the log only). `POST /tables/{table}/{id}` undeletes, `OPTIONS` answers a CORS
/// preflight (CORS is off unless ``Configuration/cors`` allows origins), and table requests need
/// `ZUMO-API-VERSION: 2.0.x` unless ``Configuration/checksAPIVersion`` is off. Store work runs on
/// a thread pool of ``Configuration/storeThreads`` threads, never on the event loops; idle and
/// slow connections are closed and open connections capped (see ``Configuration``). Every
/// request is logged at `info` level with its status and duration.
///
/// With ``Configuration/authentication``, each request's token (`Authorization: Bearer` or
/// `X-ZUMO-AUTH`) is checked before the request is answered, and ``Configuration/tableAccess``
/// decides per table who may use it and whether its rows belong to users (see ``TableAccess``).
/// A refused token is answered 401 with `WWW-Authenticate: Bearer` and a message saying what was
/// wrong. With ``Configuration/tls``, the server speaks HTTPS itself.
///
/// ```swift
/// let service = try TableService(store: store, options: .init(maximumPageSize: 50, widensSchema: true))
/// let server = TableServer(service: service, configuration: .init(port: 8080, createsTables: true))
/// try await server.run()
/// ```
public struct TableServer: Sendable {
    /// Where to listen and what to accept.
    public struct Configuration: Sendable {
        /// The address to bind, `127.0.0.1` by default.
        public var host: String
        /// The port; `0` picks a free one (reported to `onRunning`).
        public var port: Int
        /// The largest request body accepted; larger ones get 413. Default 1 MiB.
        public var maximumBodyBytes: Int
        /// Create a table on its first write when it is not in the schema (dynamic schema). Use
        /// it with a service whose `TableService.Options.widensSchema` is set, so new columns
        /// are added too.
        public var createsTables: Bool
        /// Receives one line per request and the start and stop of the server.
        public var logger: Logger
        /// The event loops the server's connections run on; `nil` for NIO's shared singleton
        /// group. A server in the same process as its clients (tests, benchmarks) can be given
        /// its own, so its connections never share a thread with theirs, as a server in another
        /// process would not.
        public var eventLoopGroup: (any EventLoopGroup)?
        /// The threads that run store work (the event loops never wait for a store). Default: one
        /// per core, and at least 4: a store thread can also wait (for the writer lock while
        /// another write commits, for a read connection, for the disk), and with only as many
        /// threads as a small machine has cores, writes queued behind the writer lock would hold
        /// every thread and a read would wait for them although the store could answer it.
        public var storeThreads: Int
        /// A connection with no request in progress for this long is closed. Default 60 s.
        public var idleTimeout: Duration
        /// A request must arrive completely (head and body) within this time of its first byte,
        /// or it is answered 408 and its connection closed. Default 30 s.
        public var requestReadTimeout: Duration
        /// The most open connections; beyond it, a new connection's request is answered 503 with
        /// `Retry-After` and the connection closed. Default 512; ``run(untilSignal:onRunning:)``
        /// lowers it, with a warning, when the process may not open enough files for it.
        public var maximumConnections: Int
        /// The most open connections from one client address; beyond it, a new connection's
        /// request from that address is answered 503 with `Retry-After` and the connection closed,
        /// so one source cannot hold every connection idle. Default 64.
        public var maximumConnectionsPerAddress: Int
        /// Answer 400 to table requests without a `ZUMO-API-VERSION` of 2.0.x (header or query
        /// option), as the Azure servers do. Default `true`; turn off for old clients.
        public var checksAPIVersion: Bool
        /// The browser origins allowed to call the server (CORS); none by default.
        public var cors: CORSPolicy
        /// The largest query answered; larger ones get 400.
        public var queryLimits: QueryLimits
        /// Checks the tokens of requests; `nil` (the default) checks none, and every table is
        /// anonymous.
        public var authentication: TokenVerifier?
        /// The access rule of each table by name (letter case ignored); a table not named is
        /// ``TableAccess/authenticated`` when ``authentication`` is set, else anonymous.
        public var tableAccess: [String: TableAccess]
        /// The most requests one `POST /$batch` may hold; a larger batch is answered 413 and
        /// nothing of it applied. Default 1,000.
        public var maximumBatchRequests: Int
        /// The largest `POST /$batch` body accepted (each request in it is still held to
        /// ``maximumBodyBytes``); a larger one gets 413. Default 16 MiB.
        public var maximumBatchBodyBytes: Int
        /// The change stream (`GET /changes`): on by default, with its heartbeat, subscriber cap
        /// and the relay to the other processes serving the same database.
        public var changeStream: ChangeStreamConfiguration
        /// Serve HTTPS with this configuration (certificate and key); `nil` (the default) serves
        /// plain HTTP, for loopback or behind a TLS-terminating proxy.
        public var tls: TLSConfiguration?

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, maximumBodyBytes: Int = 1 << 20,
            createsTables: Bool = false, logger: Logger = Logger(label: "offline-sync.serve")
        ) {
            self.host = host
            self.port = port
            self.maximumBodyBytes = maximumBodyBytes
            self.createsTables = createsTables
            self.logger = logger
            self.eventLoopGroup = nil
            self.storeThreads = max(4, System.coreCount)
            self.idleTimeout = .seconds(60)
            self.requestReadTimeout = .seconds(30)
            self.maximumConnections = 512
            self.maximumConnectionsPerAddress = 64
            self.checksAPIVersion = true
            self.cors = CORSPolicy()
            self.queryLimits = QueryLimits()
            self.authentication = nil
            self.tableAccess = [:]
            self.tls = nil
            self.maximumBatchRequests = 1_000
            self.maximumBatchBodyBytes = 16 << 20
            self.changeStream = ChangeStreamConfiguration()
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let tableProtocol: TableProtocol
    /// Where committed writes are announced to the change stream's subscribers; `nil` when
    /// ``Configuration/changeStream`` is off.
    public let changes: ChangeBroadcaster?

    /// Creates a server for a service; nothing listens until ``run(untilSignal:onRunning:)``.
    public init(service: TableService, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let changes =
            configuration.changeStream.isEnabled
            ? ChangeBroadcaster(
                maximumSubscribers: configuration.changeStream.maximumSubscribers,
                relay: configuration.changeStream.relay, logger: configuration.logger) : nil
        self.changes = changes
        self.tableProtocol = TableProtocol(
            service: service, createsTables: configuration.createsTables,
            checksAPIVersion: configuration.checksAPIVersion, cors: configuration.cors,
            limits: configuration.queryLimits,
            access: AccessPolicy(
                rules: configuration.tableAccess, checksTokens: configuration.authentication != nil),
            maximumBatchRequests: configuration.maximumBatchRequests, changes: changes)
    }

    /// Listens and answers until the task is cancelled, until the service group it runs in
    /// shuts down gracefully, or, with `untilSignal`, until SIGINT or SIGTERM; then stops
    /// accepting connections, lets the requests in progress finish, and returns once every
    /// connection is closed (the event loops it ran on can be shut down right after).
    /// Throws `OfflineSyncError` `.configuration` before listening when ``Configuration/tableAccess``
    /// needs tokens the server does not check (or is contradictory), and when the address is
    /// already in use.
    /// - Parameters:
    ///   - untilSignal: also stop on SIGINT or SIGTERM.
    ///   - onRunning: called once with the bound port when the server accepts requests.
    public func run(untilSignal: Bool = false, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        async throws
    {
        try TableAccess.validate(configuration.tableAccess, checksTokens: configuration.authentication != nil)
        let threadPool = NIOThreadPool(numberOfThreads: max(1, configuration.storeThreads))
        threadPool.start()
        // The pool is shut down and awaited before `run` returns: work still running for a
        // connection that closed completes its promise on that connection's event loop, which the
        // caller may shut down as soon as `run` returns (SwiftNIO then logs "Cannot schedule
        // tasks on an EventLoop that has already shut down").
        do {
            try await serve(untilSignal: untilSignal, threadPool: threadPool, onRunning: onRunning)
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            try? await threadPool.shutdownGracefully()
            throw OfflineSyncError(
                .configuration,
                "cannot listen on \(Self.urlHost(configuration.host)):\(configuration.port): the address is already in use; stop the other server or choose another port (--port)"
            )
        } catch {
            try? await threadPool.shutdownGracefully()
            throw error
        }
        try? await threadPool.shutdownGracefully()
    }

    /// ``run(untilSignal:onRunning:)`` with the store's thread pool started.
    private func serve(
        untilSignal: Bool, threadPool: NIOThreadPool, onRunning: @escaping @Sendable (Int) async -> Void
    ) async throws {
        let configuration = self.configuration
        let logger = configuration.logger
        let serverName = "offline-sync"
        let group = configuration.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        let router = Self.router(tableProtocol: tableProtocol, threadPool: threadPool, configuration: configuration)
        let changes = self.changes
        if let changes {
            Self.addChangeStream(
                to: router,
                endpoint: ChangeStreamEndpoint(
                    broadcaster: changes, heartbeat: configuration.changeStream.heartbeat,
                    access: tableProtocol.access, checksAPIVersion: configuration.checksAPIVersion))
        }
        let responder = router.buildResponder()
        // Other processes' writes reach this process's subscribers while the server runs.
        let relay = Task { await changes?.runRelay() }
        defer { relay.cancel() }
        let dates = ResponseDate()
        // Every connection is a file descriptor: running out of them would leave new clients
        // unanswered (accept fails), so the cap stays below what the process may open.
        let (cap, fileLimit) = OpenFileLimit.connectionCap(requested: configuration.maximumConnections)
        if cap < configuration.maximumConnections {
            logger.warning(
                "the process may open \(fileLimit ?? 0) files (ulimit -n) and cannot raise that: serving at most \(cap) connections instead of \(configuration.maximumConnections); raise the limit to serve more"
            )
        }
        let gauge = ConnectionGauge(limit: cap, perAddressLimit: configuration.maximumConnectionsPerAddress)
        let settings = ConnectionGuard.Settings(
            maximumBodyBytes: configuration.maximumBodyBytes,
            maximumBatchBodyBytes: configuration.maximumBatchBodyBytes,
            requestReadTimeout: configuration.requestReadTimeout, idleTimeout: configuration.idleTimeout,
            serverName: serverName, dates: dates)
        // What Hummingbird's `Application` does with a request: a context for the router, the
        // router's answer, the Date and Server headers.
        let channel = TableHTTPChannel(
            responder: { request, writer, channel in
                let context = TableRequestContext(source: .init(channel: channel, logger: logger))
                var response = try await responder.respond(to: request, context: context)
                response.headers[.date] = dates.now
                response.headers[.server] = serverName
                try await writer.write(response: response.head, body: response.body)
            },
            makeGuard: { ConnectionGuard(settings: settings, gauge: gauge, logger: logger) },
            idleTimeout: .init(configuration.idleTimeout))
        let scheme = configuration.tls == nil ? "http" : "https"
        let serverConfiguration = ServerConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: serverName)
        let running: @Sendable (any Channel) async -> Void = { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.info("serving the table protocol on \(scheme)://\(Self.urlHost(configuration.host)):\(port)/tables/")
            await onRunning(port)
        }
        /// Runs a Hummingbird server of `child` connections until it is stopped.
        func serve<Child: ServerChildChannel>(_ child: Child) async throws {
            try await Self.runUntilStopped(
                Server(
                    childChannelSetup: child, configuration: serverConfiguration, onServerRunning: running,
                    eventLoopGroup: group, logger: logger),
                untilSignal: untilSignal, logger: logger, beforeStopping: { changes?.closeAll() })
        }
        if let tls = configuration.tls {
            try await serve(TLSChannel(channel, tlsConfiguration: tls))
        } else {
            try await serve(channel)
        }
    }

    /// `host` as a URL writes it: an IPv6 address in brackets (`[::1]`).
    package static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// Runs `server` until it is stopped, then shuts it down gracefully (no new connections,
    /// requests in progress finish, idle connections close) and returns once it has.
    ///
    /// The server is shut down by this function itself, awaited, not through a service group:
    /// Hummingbird answers a service group's graceful shutdown from a task of its own, which
    /// could still touch the server's event loop after `run` had returned; the caller, having
    /// been told the server had stopped, shut that loop down, and SwiftNIO printed "Cannot
    /// schedule tasks on an EventLoop that has already shut down" (seen in the loopback
    /// benchmark on a loaded machine).
    /// `beforeStopping` runs first: it ends the change streams, which a graceful shutdown would
    /// otherwise wait for forever.
    private static func runUntilStopped<Child: ServerChildChannel>(
        _ server: Server<Child>, untilSignal: Bool, logger: Logger, beforeStopping: @escaping @Sendable () -> Void
    ) async throws {
        do {
            try await runUntilStopped(
                untilSignal: untilSignal, logger: logger, run: { try await server.run() },
                stop: {
                    beforeStopping()
                    try? await server.shutdownGracefully()
                })
        } catch Server<Child>.Error.serverShutdown {
            // Stopped before it started listening.
            logger.info("server stopped")
        }
    }

    /// Calls `run` until it returns by itself (it failed, or the server could not listen), or
    /// until the server is asked to stop: by SIGTERM or SIGINT with `untilSignal`, by the
    /// graceful shutdown of a service group the calling task runs in (how ``Running/stop()``
    /// stops it), or by the cancellation of the calling task. Then calls `stop`, waits for `run`
    /// to return and logs that the server stopped.
    ///
    /// `run` goes in a detached task, which the caller's cancellation does not reach: passed on
    /// as cancellation, it would abandon the connections still open (Hummingbird then logs
    /// "Waiting on child channel: CancellationError()" and "Server shutdown error").
    private static func runUntilStopped(
        untilSignal: Bool, logger: Logger, run: @escaping @Sendable () async throws -> Void,
        stop: @Sendable () async -> Void
    ) async throws {
        if Task.isCancelled { return }
        // The signals are trapped before the server listens: a SIGTERM right after it does
        // stops it gracefully instead of ending the process.
        let trapped = untilSignal ? await UnixSignalsSequence(trapping: .sigterm, .sigint) : nil
        let (events, event) = AsyncStream<Void>.makeStream()
        // Detached: a task would inherit the graceful shutdown of a service group this function
        // runs in (``Running`` runs it in one), and Hummingbird would answer it with a task of
        // its own again.
        let running = Task.detached {
            defer { event.yield() }
            try await run()
        }
        let signals = trapped.map { trapped in
            Task {
                for await signal in trapped {
                    logger.info("received \(signal): stopping the server")
                    event.yield()
                    return
                }
            }
        }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                var iterator = events.makeAsyncIterator()
                _ = await iterator.next()
            } onCancel: {
                event.yield()
            }
        } onGracefulShutdown: {
            event.yield()
        }
        signals?.cancel()
        await stop()
        try await running.value
        logger.info("server stopped")
    }

    /// The framework's form of an answer.
    static func response(_ answer: TableProtocol.Answer) -> Response {
        Response(
            status: HTTPResponse.Status(code: answer.status), headers: answer.fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

extension TableProtocol.Request {
    /// A request whose headers are HTTP fields (repeated ones joined by `,`).
    init(method: String, target: String, fields: HTTPFields, body: [UInt8]) {
        self.init(
            method: method, target: target,
            header: { name in
                guard let field = HTTPField.Name(name) else { return nil }
                let values = fields[values: field]
                return values.isEmpty ? nil : values.joined(separator: ",")
            }, body: body)
    }
}

extension TableProtocol.Answer {
    /// The answer's headers as HTTP fields.
    var fields: HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        return fields
    }
}
