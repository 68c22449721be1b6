import NIOCore
import NIOHTTP1
import OfflineSync

/// A push's chunk on the pipelining transport: all its writes handed over at once, each answer
/// read on the connection's event loop as it arrives.
extension HTTPRemote {
    /// Sends writes on the pipelining connection with one credential and answers each one's
    /// outcome in order, or `nil` for a write that met a 401 when `renewable` (to send again
    /// after renewing the credential).
    ///
    /// The requests are encoded and handed over a few at a time, so the server starts on the
    /// first while the others are encoded, and each answer is read on the connection's event
    /// loop as it arrives, so only one hop back to this task is paid for all of them. A write
    /// that cannot be encoded fails on its own and is not sent. Cancelling closes the connection.
    func sendPipelined(
        _ writes: [RemoteWrite], token: String?, on transport: PipelinedTransport,
        renewable: Bool
    ) async throws(RemoteError) -> [Result<Item?, any Error>?] {
        if Task.isCancelled { throw RemoteError(.cancelled, message: "the push was cancelled") }
        let credential = try await credential(token, for: "sending \(writes.count) writes")
        let eventLoop = transport.eventLoop
        var outcomes: [EventLoopFuture<Result<Item?, any Error>?>] = []
        outcomes.reserveCapacity(writes.count)
        for start in stride(from: 0, to: writes.count, by: 8) {
            var slice: [(write: RemoteWrite, request: TableRequest)] = []
            for write in writes[start..<min(writes.count, start + 8)] {
                do {
                    slice.append((write, try request(for: write)))
                } catch {
                    if !slice.isEmpty {
                        outcomes += read(
                            slice, transport.submit(slice.map { outgoing($0.request) }), on: transport, renewable)
                    }
                    slice = []
                    outcomes.append(eventLoop.makeSucceededFuture(.failure(error)))
                }
            }
            if !slice.isEmpty {
                outcomes += read(slice, transport.submit(slice.map { outgoing($0.request) }), on: transport, renewable)
            }
        }
        func outgoing(_ request: TableRequest) -> (request: TableRequest, headers: HTTPHeaders) {
            (request, Self.headers(of: request, credential: credential))
        }
        let all = EventLoopFuture.whenAllSucceed(outcomes, on: eventLoop)
        let answers = await withTaskCancellationHandler {
            (try? await all.get()) ?? []
        } onCancel: {
            transport.cancelInFlight()
        }
        if Task.isCancelled { throw RemoteError(.cancelled, message: "the push was cancelled") }
        return answers
    }

    /// Reads the answers to writes on the event loop as they arrive: the server's copy, the
    /// failure the answer says, or `nil` for a 401 to send again after a renewal.
    func read(
        _ sent: [(write: RemoteWrite, request: TableRequest)], _ responses: [EventLoopFuture<WireResponse>],
        on transport: PipelinedTransport, _ renewable: Bool
    ) -> [EventLoopFuture<Result<Item?, any Error>?>] {
        zip(sent, responses).map { sent, response in
            response.map { response -> Result<Item?, any Error>? in
                if response.status == 401 && renewable { return nil }
                return Result { try self.answer(to: sent.write, sent.request, response) }
            }.recover { error in
                .failure(transport.failure(of: sent.request, error))
            }
        }
    }
}
