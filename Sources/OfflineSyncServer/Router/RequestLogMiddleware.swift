import HTTPTypes
import Hummingbird
import Logging

/// Logs one line per request, once it is answered: method, path (with the values of credential
/// query options redacted, see `TableProtocol.shown`), status and duration, at `info` level, and at
/// `error` level with the detail of a server failure (which the answer itself does not name).
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = (ContinuousClock.now - start).components
        let microseconds = elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000
        let line =
            "\(request.method.rawValue) \(TableProtocol.shown(request.head.path ?? "/")) \(response.status.code) \(microseconds / 1000).\(microseconds % 1000 / 100) ms"
        if let detail = context.failureDetail.text {
            logger.error("\(line): \(detail)")
        } else {
            logger.info("\(line)")
        }
        return response
    }
}

