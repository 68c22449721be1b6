import Foundation
import OfflineSync
import OfflineSyncProtocol
import OfflineSyncService

extension TableProtocol {
    /// Answers `POST /$batch`: an OData v4.01 JSON batch of table requests (``JSONBatch``).
    ///
    /// - The batch is read completely first: malformed JSON, a wrong shape, a repeated id, a
    ///   `dependsOn` naming no earlier request, an `atomicityGroup` or more requests than
    ///   ``maximumBatchRequests`` answer the whole batch with a 4xx JSON error, and
    ///   nothing is applied.
    /// - The batch's token was checked once (a refused one answers the whole batch 401); each
    ///   request is then authorized for its own table, as alone. A request carries no token of its
    ///   own (400 for that request); it inherits the batch's other headers (`ZUMO-API-VERSION`…)
    ///   unless it sets them.
    /// - Requests are applied in order, each answered exactly as alone (status, headers, body);
    ///   consecutive writes go to ``OfflineSyncService/TableService/apply(_:)`` together, so they
    ///   commit in as few store transactions as the rules allow; a read sees every write before it.
    /// - Only table requests (`/tables/...`) may be batched; any other URL is a 400 for that request.
    ///   A request whose `dependsOn` names a request that failed is answered 424.
    func batch(_ request: Request) -> Answer {
        guard request.method == "POST" else {
            var answer = Self.error(405, "\(JSONBatch.path) answers POST only; send the batch as a JSON body")
            answer.headers.append(("Allow", "POST"))
            return answer
        }
        if case .refused(let failure) = request.credential { return Self.unauthorized(failure) }
        let parts: [JSONBatch.Request]
        do {
            parts = try JSONBatch.decodeRequests(request.body)
        } catch {
            return Self.error(400, "the batch could not be read, so nothing was applied: \(error.message)")
        }
        guard parts.count <= maximumBatchRequests else {
            return Self.error(
                413,
                "the batch holds \(parts.count) requests; the server takes at most \(maximumBatchRequests) in one batch, so nothing was applied: send smaller batches"
            )
        }
        var answers: [Answer?] = Array(repeating: nil, count: parts.count)
        var position: [String: Int] = [:]
        var pending: [(index: Int, write: TableService.Write, status: Int)] = []
        var targets: [String: TableRequestTarget] = [:]
        func applyPending() {
            guard !pending.isEmpty else { return }
            let outcomes = service.apply(pending.map(\.write))
            announce(pending.map(\.write), outcomes)
            for (entry, outcome) in zip(pending, outcomes) {
                answers[entry.index] = answer(to: entry.write, status: entry.status, outcome)
            }
            pending.removeAll()
        }
        for (index, part) in parts.enumerated() {
            position[part.id] = index
            let dependencies = part.dependsOn.compactMap { position[$0] }
            if dependencies.contains(where: { answers[$0] == nil }) { applyPending() }
            if let failed = dependencies.first(where: { (answers[$0]?.status ?? 500) >= 400 }) {
                answers[index] = Self.error(
                    424,
                    "request '\(part.id.prefix(40))' was not applied: it depends on request '\(parts[failed].id.prefix(40))', which failed"
                )
                continue
            }
            switch prepare(part, in: request, targets: &targets) {
            case .answered(let answer):
                answers[index] = answer
            case .read(let read):
                applyPending()
                do {
                    answers[index] = try read()
                } catch {
                    answers[index] = answer(for: error)
                }
            case .write(let write, let status):
                pending.append((index, write, status))
            }
        }
        applyPending()
        var details: [String] = []
        let responses = zip(parts, answers).map { part, answer in
            let answer = answer ?? Self.error(500, "the server failed; see the server log")
            if let detail = answer.logDetail { details.append("request '\(part.id.prefix(40))': \(detail)") }
            return JSONBatch.Response(
                id: part.id, status: answer.status, headers: answer.headers.map { JSONBatch.Header($0.0, $0.1) },
                body: answer.body)
        }
        var batchAnswer = Self.json(200, JSONBatch.encode(responses: responses))
        batchAnswer.logDetail = details.isEmpty ? nil : details.joined(separator: "; ")
        return batchAnswer
    }

    /// One request of a batch as a request of its own: the batch's headers (but its token)
    /// under the request's, the batch's credential.
    private func prepare(
        _ part: JSONBatch.Request, in batch: Request, targets: inout [String: TableRequestTarget]
    ) -> Prepared {
        let target = Self.batchTarget(part.url)
        guard target.hasPrefix("/tables/") else {
            return .answered(
                Self.error(
                    400,
                    "request '\(part.id.prefix(40))' of the batch is for \(Self.shown(part.url)); a batch holds table requests only (/tables/...)"
                ))
        }
        if part.header("Authorization") != nil || part.header("X-ZUMO-AUTH") != nil {
            return .answered(
                Self.error(
                    400,
                    "request '\(part.id.prefix(40))' of the batch carries a token of its own; send the token once, on the batch"
                ))
        }
        let tokenHeaders: Set<String> = ["authorization", "x-zumo-auth"]
        var request = Request(
            method: part.method.uppercased(), target: target,
            header: { name in
                if let value = part.header(name) { return value }
                return tokenHeaders.contains(name.lowercased()) ? nil : batch.header(name)
            },
            body: part.body)
        request.credential = batch.credential
        return prepare(request, parsed: &targets)
    }

    /// The path and query of a batched request's URL: an absolute URL loses its scheme and
    /// host, a path relative to the service root gets its leading `/`.
    static func batchTarget(_ url: String) -> String {
        if url.utf8.first == UInt8(ascii: "/") { return url }
        let utf8 = url.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex, utf8[index] != UInt8(ascii: "/") {
            if utf8[index] == UInt8(ascii: ":"), utf8[index...].starts(with: "://".utf8) {
                let host = utf8.index(index, offsetBy: 3)
                let afterHost = url[host...].drop { $0 != "/" && $0 != "?" }
                return afterHost.hasPrefix("/") ? String(afterHost) : "/" + afterHost
            }
            index = utf8.index(after: index)
        }
        return "/" + url
    }
}
