import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import OfflineSyncProtocol

extension TableServer {
    /// The server's router: its middleware and its routes, the way Hummingbird's users write a
    /// server. Every route answers through `TableProtocol`, with the store work on `threadPool`;
    /// a request no route takes gets the protocol's JSON answer too (404 naming the table paths,
    /// 405 with `Allow`).
    static func router(
        tableProtocol: TableProtocol, threadPool: NIOThreadPool, configuration: Configuration
    ) -> Router<TableRequestContext> {
        let router = Router(context: TableRequestContext.self)
        router.add(middleware: RequestLogMiddleware(logger: configuration.logger))
        router.add(middleware: CORSPolicyMiddleware(policy: configuration.cors))
        if let verifier = configuration.authentication { router.add(middleware: TokenMiddleware(verifier: verifier)) }
        let endpoint = TableEndpoint(
            tableProtocol: tableProtocol, threadPool: threadPool, maximumBodyBytes: configuration.maximumBodyBytes)
        router.add(middleware: UnroutedRequestMiddleware(endpoint: endpoint))
        addRoutes(to: router, endpoint: endpoint, configuration: configuration)
        return router
    }

    /// The routes of the server; a new endpoint is added here, after the middleware (logging,
    /// CORS, tokens), which Hummingbird applies to the routes added after it.
    private static func addRoutes(
        to router: Router<TableRequestContext>, endpoint: TableEndpoint, configuration: Configuration
    ) {
        let answer: @Sendable (Request, TableRequestContext) async -> Response = { request, context in
            await endpoint.answer(request, context: context)
        }
        for path: RouterPath in ["/tables/:table", "/tables/:table/:id"] {
            for method: HTTPRequest.Method in [.get, .post, .patch, .delete, .options] {
                router.on(path, method: method, use: answer)
            }
        }
        let batch = TableEndpoint(
            tableProtocol: endpoint.tableProtocol, threadPool: endpoint.threadPool,
            maximumBodyBytes: configuration.maximumBatchBodyBytes)
        router.post(RouterPath(JSONBatch.path)) { request, context in await batch.answer(request, context: context) }
        router.get(RouterPath(TableProtocol.healthPath), use: answer)
    }
}

extension TableServer {
    /// The framework-independent form of a request; throws `NIOTooManyBytesError` for a body
    /// over the limit.
    static func tableRequest(_ request: Request, maximumBodyBytes: Int) async throws -> TableProtocol.Request {
        let body = try await request.body.collect(upTo: maximumBodyBytes)
        return TableProtocol.Request(
            method: request.method.rawValue, target: request.head.path ?? "/", fields: request.headers,
            body: Array(body.readableBytesView))
    }
}

/// Answers a request through `TableProtocol`: its body gathered up to a limit (413 beyond), its
/// answer computed on the store's thread pool, never on an event loop.
///
/// The router's request path (an async channel, a task per request) costs one-at-a-time inserts
/// about 160 µs of server CPU more than the channel handler it replaced, 0.70–0.78 of its
/// inserts per second; pages are as fast (BENCHMARKS.md, "serve under concurrent clients, before
/// and after the router"). A push does not pay it per write: it sends a `$batch` per chunk.
struct TableEndpoint: Sendable {
    let tableProtocol: TableProtocol
    let threadPool: NIOThreadPool
    let maximumBodyBytes: Int

    func answer(_ request: Request, context: TableRequestContext) async -> Response {
        var answer: TableProtocol.Answer
        do {
            var tableRequest = try await TableServer.tableRequest(request, maximumBodyBytes: maximumBodyBytes)
            tableRequest.credential = context.credential
            let ready = tableRequest
            let tableProtocol = self.tableProtocol
            answer = try await threadPool.runIfActive { tableProtocol.answer(to: ready) }
        } catch is NIOTooManyBytesError {
            answer = TableProtocol.bodyTooLarge(limit: maximumBodyBytes)
        } catch {
            // The thread pool has stopped (the server is stopping) or the connection broke.
            answer = TableProtocol.error(503, "the server is stopping; retry in a moment")
            answer.headers.append(("Retry-After", "1"))
        }
        if let detail = answer.logDetail { context.failureDetail.text = detail }
        return TableServer.response(answer)
    }
}

/// Answers the requests no route takes (Hummingbird's router throws 404 for them) through
/// `TableProtocol`, so they get its JSON answers: 404 naming the table paths, 405 with `Allow`
/// for a method a table path does not take.
struct UnroutedRequestMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let endpoint: TableEndpoint

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            return await endpoint.answer(request, context: context)
        }
    }
}
