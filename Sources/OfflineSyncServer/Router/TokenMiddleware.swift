import HTTPTypes
import Hummingbird

/// Checks the token of each request once, before its route runs (``TokenVerifier``, jwt-kit),
/// and leaves the outcome in ``TableRequestContext/credential``: table access is decided per
/// table by `TableProtocol` (per request of a batch too), so a refused or missing token is not
/// answered here.
struct TokenMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let verifier: TokenVerifier

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.credential = await TableProtocol.authenticate(
            TableProtocol.Request(method: "", target: "", fields: request.headers, body: []), with: verifier)
        return try await next(request, context)
    }
}
