import Logging
import NIOHTTP1
public import OfflineSync
import OfflineSyncProtocol
import Synchronization

/// A push's chunk of writes as one `POST /$batch` (OData v4.01 JSON batch, see docs/PROTOCOL.md),
/// to a server that takes it; one request per write otherwise.
extension HTTPRemote {
    /// The most writes one batch request carries.
    static let maximumBatchWrites = 256
    /// The most body bytes one batch request carries (a chunk of larger items goes in several
    /// batches), well below what `offline-sync serve` takes by default (16 MiB).
    static let maximumBatchBytes = 4 << 20

    /// Sends the writes of a push in order and answers each one's outcome in order.
    ///
    /// To a server that takes batches (see ``Configuration/batchWrites``) they go in one
    /// `POST /$batch` (several when they are many or large), which the server applies in order,
    /// answering each write as alone; each answer is read as the answer to that write alone
    /// would be. A batch the server refuses as too large is sent again one write at a time. When
    /// a batch gets no answer (the network, cancellation, a refused credential), the answers stop
    /// there: the writes of that batch may or may not have been applied, and the next push sends
    /// them again (a re-sent write meets a 409, 412 or 404 that counts as done, as after a crash;
    /// see `SyncContext.push`). To other servers the writes go one after another, until one
    /// fails in a way that stops a push.
    public func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        guard !writes.isEmpty else { return [] }
        switch await batchesTaken() {
        case .failure(let error): return [.failure(error)]
        case .success(false): return await sendOneAfterAnother(writes)
        case .success(true): break
        }
        var answers: [Result<Item?, any Error>] = []
        var start = writes.startIndex
        while start < writes.endIndex {
            var batch: [(write: RemoteWrite, request: TableRequest)] = []
            var bytes = 0
            var end = start
            while end < writes.endIndex, batch.count < Self.maximumBatchWrites {
                let request: TableRequest
                do {
                    request = try self.request(for: writes[end])
                } catch {
                    // A write that cannot be sent fails alone, in its place.
                    if !batch.isEmpty { break }
                    answers.append(.failure(error))
                    end += 1
                    start = end
                    continue
                }
                let size = (request.body?.count ?? 0) + request.target.utf8.count + 128
                if !batch.isEmpty, bytes + size > Self.maximumBatchBytes { break }
                batch.append((writes[end], request))
                bytes += size
                end += 1
            }
            guard !batch.isEmpty else { continue }
            let outcomes = await sendBatch(batch)
            answers += outcomes
            if outcomes.count < batch.count { break }
            start = end
        }
        return answers
    }

    /// One batch request; the answers stop short when it got none.
    private func sendBatch(_ batch: [(write: RemoteWrite, request: TableRequest)]) async -> [Result<Item?, any Error>]
    {
        let parts = batch.enumerated().map { index, entry in
            JSONBatch.Request(
                id: String(index + 1), method: entry.request.method.rawValue, url: entry.request.target,
                headers: entry.request.headers.filter { Self.partHeaders.contains($0.name) }.map {
                    JSONBatch.Header($0.name, $0.value)
                },
                body: entry.request.body ?? [])
        }
        let request = TableRequest.batch(JSONBatch.encode(requests: parts), clientVersion: configuration.clientVersion)
        let response: WireResponse
        do {
            response = try await send(request)
        } catch {
            return [.failure(error)]
        }
        if response.status == 413 { return await sendOneAfterAnother(batch.map(\.write)) }
        guard response.status == 200 else {
            let error = failure(request, response)
            return error.abortsPush ? [.failure(error)] : batch.map { _ in .failure(error) }
        }
        let responses: [JSONBatch.Response]
        do {
            responses = try JSONBatch.decodeResponses(response.body)
        } catch {
            let failure = unreadable(request, response, error)
            return batch.map { _ in .failure(failure) }
        }
        var byId: [String: JSONBatch.Response] = [:]
        for answer in responses { byId[answer.id] = answer }
        return batch.enumerated().map { index, entry in
            guard let answer = byId[String(index + 1)] else {
                return .failure(
                    RemoteError(
                        .server,
                        message:
                            "\(entry.request.method.rawValue) \(entry.request.target): the batch answer has no response to it"
                    ))
            }
            var headers = HTTPHeaders()
            for header in answer.headers { headers.add(name: header.name, value: header.value) }
            let wire = WireResponse(status: answer.status, headers: headers, body: answer.body)
            return Result { () throws(RemoteError) -> Item? in try self.answer(to: entry.write, entry.request, wire) }
                .mapError { $0 as any Error }
        }
    }

    /// The headers a write's request in a batch carries itself; the others (`ZUMO-API-VERSION`,
    /// `X-ZUMO-VERSION`, the credential) it takes from the batch.
    private static let partHeaders: Set<String> = [WireHeader.ifMatch, "Content-Type"]

    /// Whether the server takes batches: as configured, or asked once with an empty batch (a
    /// server that takes it answers 200 with `{"responses":[]}`; the Azure servers answer 404).
    /// A network failure is the push's failure and is not remembered; a server error or a
    /// request to slow down (5xx, 408, 429) is not remembered either, and this push sends one
    /// write at a time.
    private func batchesTaken() async -> Result<Bool, RemoteError> {
        switch configuration.batchWrites {
        case .never: return .success(false)
        case .always: return .success(true)
        case .whenSupported: break
        }
        if let known = batchSupport.withLock({ $0 }) { return .success(known) }
        let request = TableRequest.batch(Array(#"{"requests":[]}"#.utf8), clientVersion: configuration.clientVersion)
        let response: WireResponse
        do {
            response = try await send(request)
        } catch {
            return .failure(error)
        }
        if response.status == 401 { return .failure(failure(request, response)) }
        if response.status >= 500 || response.status == 408 || response.status == 429 { return .success(false) }
        let taken = response.status == 200 && (try? JSONBatch.decodeResponses(response.body)) != nil
        batchSupport.withLock { $0 = taken }
        configuration.logger.debug(
            "\(baseURL) \(taken ? "takes" : "does not take") POST /$batch: pushes send \(taken ? "a batch per chunk" : "one request per write")"
        )
        return .success(taken)
    }
}
