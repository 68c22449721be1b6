import HTTPTypes
import Hummingbird
import OfflineSync
import OfflineSyncService

extension TableServer {
    /// Adds `GET /changes` to the router (after its middleware: logging, CORS, tokens).
    static func addChangeStream(to router: Router<TableRequestContext>, endpoint: ChangeStreamEndpoint) {
        router.get(RouterPath(ChangeStreamEndpoint.path)) { request, context in
            endpoint.answer(request, context: context)
        }
    }
}

extension ChangeStreamEndpoint {
    /// The answer to `GET /changes`: 401 for a refused token, the refusals of ``admit(target:header:user:)``
    /// as JSON errors, else the stream.
    func answer(_ request: Request, context: TableRequestContext) -> Response {
        let user: String?
        switch context.credential {
        case .refused(let failure): return TableServer.response(TableProtocol.unauthorized(failure))
        case .user(let authenticated): user = authenticated.subject
        case .none: user = nil
        }
        let headers = request.headers
        let admitted = admit(target: request.head.path ?? "/", header: { name in
            HTTPField.Name(name).flatMap { headers[values: $0].isEmpty ? nil : headers[values: $0].joined(separator: ",") }
        }, user: user)
        switch admitted {
        case .success(let filter):
            return response(for: filter)
        case .failure(let refusal):
            var answer = TableProtocol.error(refusal.status, refusal.message)
            answer.headers.append(contentsOf: refusal.headers)
            return TableServer.response(answer)
        }
    }
}

extension TableProtocol {
    /// Announces the writes of `writes` that succeeded (`outcomes`, in the same order) to the
    /// change stream's subscribers: the table, the stored `updatedAt`, the owner of a per-user row.
    func announce(_ writes: [TableService.Write], _ outcomes: [Result<Item, any Error>]) {
        guard let changes else { return }
        for (write, outcome) in zip(writes, outcomes) {
            guard case .success(let item) = outcome, let updatedAt = item.updatedAt else { continue }
            changes.publish(TableChange(table: write.table, updatedAt: updatedAt.iso8601, owner: write.owner?.userId))
        }
    }
}
