import HTTPTypes
import Hummingbird

/// Adds the CORS headers an allowed origin needs to every answer (``CORSPolicy``); preflight
/// requests are answered by the table routes, which know the methods of each path.
struct CORSPolicyMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let policy: CORSPolicy

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        let origin = request.headers[values: .origin].first
        for (name, value) in policy.headers(origin: origin) {
            if let field = HTTPField.Name(name) { response.headers.append(HTTPField(name: field, value: value)) }
        }
        return response
    }
}
