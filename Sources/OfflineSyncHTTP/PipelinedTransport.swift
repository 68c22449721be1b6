import NIOCore
import NIOHTTP1
import OfflineSync

/// The transport of a push's writes when ``HTTPRemote/Configuration/pushPipelineDepth`` is above
/// 1: a ``PipelinedConnection`` of the remote's own (SwiftNIO, NIOSSL for `https`), which keeps
/// up to that many requests in flight on one HTTP/1.1 connection, in the order they were handed
/// over, and matches the answers in order. AsyncHTTPClient does not pipeline.
final class PipelinedTransport: HTTPTransport {
    private let connection: PipelinedConnection
    /// The path of the base URL, which every target is put under.
    private let path: String
    /// The base URL, for messages.
    private let baseURL: String

    init(connection: PipelinedConnection, path: String, baseURL: String) {
        self.connection = connection
        self.path = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.baseURL = baseURL
    }

    deinit {
        connection.close()
    }

    /// The event loop the connection's answers are read on.
    var eventLoop: any EventLoop { connection.eventLoop }

    func shutdown() async throws {
        connection.close()
    }

    /// One attempt: the request is handed over, `queued` is called, and the answer awaited.
    /// Cancelling closes the connection (an answer can only be given up with the connection),
    /// which fails the requests still waiting on it. The connection retries its own connecting,
    /// keeping the requests waiting for it in order.
    func send(_ request: TableRequest, headers: HTTPHeaders, queued: (@Sendable () -> Void)?) async throws
        -> WireResponse
    {
        let answer = connection.submit(PipelinedConnection.Request(request, under: path, headers: headers))
        queued?()
        do {
            return try await withTaskCancellationHandler {
                try await answer.get()
            } onCancel: {
                connection.close(reopening: true)
            }
        } catch {
            let failure = failure(of: request, error)
            if case .unconnected? = error as? PipelinedConnection.PipelineFailure { throw Unconnected(error: failure) }
            throw failure
        }
    }

    /// Hands requests over together, in order, and returns the futures of their answers (failed
    /// with a ``PipelinedConnection/PipelineFailure`` when there is none; see
    /// ``failure(of:_:)``). Requests handed over in the same event-loop turn are flushed together.
    func submit(_ requests: [(request: TableRequest, headers: HTTPHeaders)]) -> [EventLoopFuture<WireResponse>] {
        connection.submit(requests.map { PipelinedConnection.Request($0.request, under: path, headers: $0.headers) })
    }

    /// Gives up the answers still awaited by closing the connection; the next request opens a new
    /// one.
    func cancelInFlight() {
        connection.close(reopening: true)
    }

    /// The error for a request that got no answer on the connection.
    func failure(of request: TableRequest, _ error: any Error) -> RemoteError {
        let what = "\(request.method.rawValue) \(request.target)"
        if Task.isCancelled { return RemoteError(.cancelled, message: "\(what) was cancelled") }
        switch error as? PipelinedConnection.PipelineFailure {
        case .unconnected(let cause)?:
            let reason = TransportFailure.connectFailure(cause) ?? TransportFailure.describe(cause)
            return RemoteError(.network, message: "\(what) could not connect to \(baseURL): \(reason)")
        case .broken(let reason)?:
            return RemoteError(.network, message: "\(what) did not complete: \(reason)")
        case .timedOut?:
            return RemoteError(.network, message: "\(what) did not complete: the request timed out")
        case .tooLarge(let limit)?:
            return RemoteError(
                .server, message: "\(what): the answer is larger than \(limit) bytes; raise maximumResponseBytes")
        case nil:
            return RemoteError(.network, message: "\(what) did not complete: \(error)")
        }
    }
}

extension PipelinedConnection.Request {
    /// A table request as the pipelining connection writes it: its target under the base URL's
    /// path, with the given headers (the request's own and the credential).
    init(_ request: TableRequest, under path: String, headers: HTTPHeaders) {
        self.init(
            method: HTTPMethod(rawValue: request.method.rawValue), target: path + request.target, headers: headers,
            body: request.body)
    }
}
