import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import OfflineSync
import OfflineSyncProtocol

/// A ``RemoteService`` that speaks the Azure Mobile Apps table protocol, version 2.0.0, over HTTP.
///
/// Requests have the form the original clients send (see `TableRequest`): `GET/POST
/// /tables/{table}`, `GET/PATCH/DELETE /tables/{table}/{id}`, `ZUMO-API-VERSION: 2.0.0`, OData v3
/// query options, `If-Match: "version"` on updates and deletes. Answers map to results and
/// ``RemoteError`` kinds:
///
/// | answer | result |
/// |---|---|
/// | 2xx with a readable body | the items (the `ETag` of an item answer becomes its `version`) |
/// | 409, 412 | `.conflict` with the server's item from the body |
/// | 401 (after one refresh, when configured) | `.authentication` |
/// | 404 | `nil` for ``lookup(id:in:)``, `.notFound` otherwise |
/// | connection failure, timeout, broken connection | `.network` |
/// | task cancellation | `.cancelled` |
/// | any other status, or a body that is not the expected JSON | `.server`, naming what was wrong |
///
/// Reads are repeated with exponential back-off after network failures and 502/503/504 (see
/// ``Configuration/readRetries``); writes only when their connection could not be established
/// (refused, unreachable: the request was never sent). A refused connection therefore fails
/// within a second, naming the URL, instead of waiting for the connect timeout. Call
/// ``shutdown()`` when done with a remote: it closes the HTTP client it created and the
/// pipelining connection.
///
/// Requests go through AsyncHTTPClient, except the writes of a push when
/// ``Configuration/pushPipelineDepth`` is above 1: those are pipelined, in queue order, on one
/// HTTP/1.1 connection of the remote's own (SwiftNIO, NIOSSL for `https`), since AsyncHTTPClient
/// does not pipeline. See "Pipelined pushes" in the module's documentation.
public final class HTTPRemote: RemoteService {
    /// The configuration the remote was created with.
    public let configuration: Configuration
    private let client: HTTPClient
    private let ownsClient: Bool
    private let baseURL: String
    /// The connection pushes pipeline their writes on, when ``Configuration/pushPipelineDepth``
    /// is above 1, and the path of the base URL its targets start with.
    private let pipeline: (connection: PipelinedConnection, path: String)?
    private let renewal = TokenRenewal()

    /// Creates a remote with its own HTTP client (connection pool), configured with the timeouts.
    /// Throws ``RemoteError`` `.server` when the base URL is not an `http` or `https` URL.
    public convenience init(configuration: Configuration) throws {
        let timeout = HTTPClient.Configuration.Timeout(
            connect: TimeAmount(configuration.connectTimeout),
            read: TimeAmount(configuration.readTimeout))
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration, timeout: timeout)
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 8
        // The client would retry a failed connection until the connect timeout, so a refused one
        // took 10 s per request; the remote retries it itself (`send`), a few times, briefly.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        try self.init(
            configuration: configuration,
            client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration),
            ownsClient: true)
    }

    /// Creates a remote on an HTTP client the caller owns (and shuts down). The client's own
    /// connect and read timeouts and TLS settings apply instead of the configuration's (the
    /// pipelining connection still uses the configuration's).
    public convenience init(configuration: Configuration, client: HTTPClient) throws {
        try self.init(configuration: configuration, client: client, ownsClient: false)
    }

    private init(configuration: Configuration, client: HTTPClient, ownsClient: Bool) throws {
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            if ownsClient { client.shutdown { _ in } }
            throw RemoteError(
                .server,
                message:
                    "the base URL '\(configuration.baseURL)' is not an http:// or https:// URL with a host (e.g. http://127.0.0.1:8080)"
            )
        }
        if configuration.pushPipelineDepth > 1 {
            let tls = scheme == "https" ? configuration.tlsConfiguration ?? .makeClientConfiguration() : nil
            do {
                let connection = try PipelinedConnection(
                    host: host, port: url.port ?? (tls == nil ? 80 : 443), tls: tls, group: client.eventLoopGroup,
                    window: configuration.pushPipelineDepth,
                    connectTimeout: TimeAmount(configuration.connectTimeout),
                    requestTimeout: TimeAmount(configuration.requestTimeout),
                    maximumResponseBytes: configuration.maximumResponseBytes, connectRetries: configuration.readRetries,
                    retryDelay: TimeAmount(configuration.retryDelay), logger: configuration.logger)
                pipeline = (connection, url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path)
            } catch {
                if ownsClient { client.shutdown { _ in } }
                throw RemoteError(.server, message: "the TLS client for \(base) cannot be set up: \(error)")
            }
        } else {
            pipeline = nil
        }
        self.configuration = configuration
        self.client = client
        self.ownsClient = ownsClient
        self.baseURL = base
    }

    deinit {
        pipeline?.connection.close()
        if ownsClient { client.shutdown { _ in } }
    }

    /// Closes the connections of the remote's own HTTP client and its pipelining connection.
    /// Requests after this fail.
    public func shutdown() async throws {
        pipeline?.connection.close()
        if ownsClient { try await client.shutdown() }
    }

    // MARK: RemoteService

    public func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        let request = TableRequest.read(
            query, includeDeleted: includeDeleted, clientVersion: configuration.clientVersion)
        let response = try await send(request)
        guard response.status == 200 else { throw failure(request, response) }
        do {
            return try WireJSON.decodePage(response.body)
        } catch {
            throw unreadable(request, response, error)
        }
    }

    public func lookup(id: String, in table: String) async throws -> Item? {
        let request = TableRequest.lookup(id: id, in: table, clientVersion: configuration.clientVersion)
        let response = try await send(request)
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw failure(request, response) }
        let item = try serverItem(request, response)
        return item.isDeleted ? nil : item
    }

    public func insert(_ item: Item, into table: String) async throws -> Item {
        try await writeItem(RemoteWrite(.insert, table: table, item: item))
    }

    public func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        try await writeItem(RemoteWrite(.update, table: table, item: item, ifMatch: version))
    }

    public func delete(id: String, from table: String, ifMatch version: String?) async throws {
        _ = try await write(RemoteWrite(.delete, table: table, item: Item(id: id), ifMatch: version), queued: nil)
    }

    /// ``Configuration/pushPipelineDepth``.
    public var pushPipelineDepth: Int { pipeline == nil ? 1 : configuration.pushPipelineDepth }

    /// Sends a write of a push. With a ``Configuration/pushPipelineDepth`` above 1 it is written
    /// on the remote's pipelining connection and `queued` is called once it is handed to that
    /// connection, behind the writes handed over before; otherwise it is sent as
    /// ``insert(_:into:)``, ``update(_:in:ifMatch:)`` and ``delete(id:from:ifMatch:)`` send it.
    public func send(_ write: RemoteWrite, queued: @escaping @Sendable () -> Void) async throws -> Item? {
        guard pipeline != nil else {
            defer { queued() }
            return try await self.write(write, queued: nil)
        }
        return try await self.write(write, queued: queued)
    }

    /// Sends an insert or update and answers the server's copy.
    private func writeItem(_ write: RemoteWrite) async throws -> Item {
        guard let copy = try await self.write(write, queued: nil) else {
            throw RemoteError(
                .server, message: "\(write.kind.rawValue) of '\(write.item.id)' in '\(write.table)' got no item back")
        }
        return copy
    }

    /// Sends a write (pipelined when `queued` is given) and reads the server's copy from the
    /// answer (`nil` after a delete).
    private func write(_ write: RemoteWrite, queued: (@Sendable () -> Void)?) async throws -> Item? {
        let request = try self.request(for: write)
        return try answer(to: write, request, try await send(request, queued: queued))
    }

    /// Sends the writes of a push in order. With a ``Configuration/pushPipelineDepth`` above 1
    /// they are handed to the pipelining connection together, which keeps up to that many in
    /// flight, and the answers are read as they come; writes that met a 401 are sent again,
    /// in order, after one renewal of the credential. Without pipelining they are sent one
    /// after another until one fails in a way that stops a push.
    public func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        guard let (connection, path) = pipeline else { return await sendOneAfterAnother(writes) }
        var answers = [Result<Item?, any Error>](
            repeating: .failure(RemoteError(.network, message: "not sent")), count: writes.count)
        var unanswered = Array(writes.indices)
        var renewed: String?
        while !unanswered.isEmpty {
            let round = renewal.round
            let renewable = renewed == nil && configuration.authentication?.refresh != nil
            let outcomes: [Result<Item?, any Error>?]
            do {
                outcomes = try await sendPipelined(
                    unanswered.map { writes[$0] }, token: renewed, on: connection, path: path,
                    renewable: renewable)
            } catch {
                for position in unanswered { answers[position] = .failure(error) }
                break
            }
            var refused: [Int] = []
            for (position, outcome) in zip(unanswered, outcomes) {
                if let outcome { answers[position] = outcome } else { refused.append(position) }
            }
            guard !refused.isEmpty, let refresh = configuration.authentication?.refresh else { break }
            do {
                renewed = try await renewal.renew(after: round, refresh)
            } catch {
                let failure = RemoteError(
                    .authentication, status: 401,
                    message: "the server refused the credentials and renewing them failed: \(error)")
                for position in refused { answers[position] = .failure(failure) }
                break
            }
            guard renewed != nil else {
                for position in refused {
                    answers[position] = .failure(
                        RemoteError(
                            .authentication, status: 401,
                            message:
                                "\(writes[position].kind.rawValue) of '\(writes[position].item.id)': the server refused the credentials; sign in again"
                        ))
                }
                break
            }
            unanswered = refused
        }
        return answers
    }

    /// The request of a write; an item that cannot be written as JSON fails with `.server`.
    private func request(for write: RemoteWrite) throws(RemoteError) -> TableRequest {
        let version = configuration.clientVersion
        switch write.kind {
        case .insert:
            return try writable(write.item, in: write.table) {
                try TableRequest.insert(write.item, into: write.table, clientVersion: version)
            }
        case .update:
            return try writable(write.item, in: write.table) {
                try TableRequest.update(write.item, in: write.table, ifMatch: write.ifMatch, clientVersion: version)
            }
        case .delete:
            return TableRequest.delete(
                id: write.item.id, from: write.table, ifMatch: write.ifMatch, clientVersion: version)
        }
    }

    /// The server's copy in the answer to a write (`nil` after a delete), or the failure it says.
    private func answer(to write: RemoteWrite, _ request: TableRequest, _ response: WireResponse) throws(RemoteError)
        -> Item?
    {
        switch write.kind {
        case .insert:
            guard response.status == 200 || response.status == 201 else { throw failure(request, response) }
            return try serverItem(request, response)
        case .update:
            guard response.status == 200 else { throw failure(request, response) }
            return try serverItem(request, response)
        case .delete:
            guard response.status == 200 || response.status == 204 else { throw failure(request, response) }
            return nil
        }
    }

    // MARK: Answers

    /// Builds a write request; an item that cannot be written as JSON is a `.server` failure of
    /// that operation (recorded, the push goes on).
    private func writable(_ item: Item, in table: String, _ build: () throws -> TableRequest) throws(RemoteError)
        -> TableRequest
    {
        do {
            return try build()
        } catch {
            throw RemoteError(.server, message: "item '\(item.id)' of '\(table)' cannot be sent: \(error)")
        }
    }

    /// The item of a successful answer, with the version from a strong `ETag` when present.
    private func serverItem(_ request: TableRequest, _ response: WireResponse) throws(RemoteError) -> Item {
        var item: Item
        do {
            item = try WireJSON.decodeItem(response.body)
        } catch {
            throw unreadable(request, response, error)
        }
        if let tag = response.etag, let version = ETag.version(fromStrong: tag) {
            item.values[SystemProperty.version.rawValue] = .string(version)
        }
        return item
    }

    /// The error for a non-success status.
    private func failure(_ request: TableRequest, _ response: WireResponse) -> RemoteError {
        let what = "\(request.method.rawValue) \(request.target)"
        switch response.status {
        case 409, 412:
            let item = try? WireJSON.decodeItem(response.body)
            let reason =
                response.status == 412
                ? "the server's version differs from If-Match" : "the item already exists on the server"
            let missing = item == nil ? "; the answer carried no readable server item" : ""
            return RemoteError(
                .conflict, status: response.status, serverItem: item, message: "\(what): conflict, \(reason)\(missing)")
        case 401:
            return RemoteError(
                .authentication, status: 401,
                message:
                    "\(what): the server refused the credentials\(response.summary.map { " (\($0))" } ?? ""); sign in again"
            )
        case 404:
            return RemoteError(
                .notFound, status: 404, message: "\(what): the item or table does not exist on the server")
        default:
            return RemoteError(
                .server, status: response.status, message: "\(what) failed\(response.summary.map { ": \($0)" } ?? "")")
        }
    }

    /// The error for a success status whose body is not what the protocol promises.
    private func unreadable(_ request: TableRequest, _ response: WireResponse, _ error: WireFormatError) -> RemoteError
    {
        let what = "\(request.method.rawValue) \(request.target)"
        if response.isHTML {
            return RemoteError(
                .server, status: response.status,
                message:
                    "\(what): the server answered with an HTML page\(response.summary.map { " (\($0))" } ?? "") instead of JSON; check that the base URL points at an Azure Mobile Apps back end"
            )
        }
        return RemoteError(
            .server, status: response.status, message: "\(what): the answer could not be read: \(error.message)")
    }

    // MARK: Sending

    /// Sends a request with authentication, the 401 refresh and the retries (reads after a
    /// network failure, any request whose connection failed); transport failures become
    /// `.network` or `.cancelled`.
    ///
    /// With `queued`, the request goes out on the pipelining connection and `queued` is called
    /// once it is handed over. Its connection is retried by the connection itself, which keeps
    /// the writes waiting for it in order; a write repeated after a 401 goes out behind the
    /// writes handed over meanwhile.
    private func send(_ request: TableRequest, queued: (@Sendable () -> Void)? = nil) async throws(RemoteError)
        -> WireResponse
    {
        var attempt = 0
        var renewed: String?
        while true {
            let result: Result<WireResponse, RemoteError>
            var neverSent = false
            let round = renewal.round
            do {
                result = .success(try await sendOnce(request, token: renewed, queued: queued))
            } catch let failure as Unconnected {
                result = .failure(failure.error)
                neverSent = queued == nil
            } catch {
                result = .failure(error as? RemoteError ?? RemoteError(.network, message: "\(error)"))
            }
            switch result {
            case .success(let response) where response.status == 401 && renewed == nil:
                guard let refresh = configuration.authentication?.refresh else { return response }
                do {
                    guard let token = try await renewal.renew(after: round, refresh) else { return response }
                    renewed = token
                } catch {
                    throw RemoteError(
                        .authentication, status: 401,
                        message:
                            "\(request.method.rawValue) \(request.target): the server refused the credentials and renewing them failed: \(error)"
                    )
                }
            case .success(let response)
            where request.method.isIdempotentRead && [502, 503, 504].contains(response.status)
                && attempt < configuration.readRetries:
                try await backOff(request, attempt: &attempt, reason: "HTTP \(response.status)")
            case .success(let response):
                return response
            case .failure(let error)
            where error.kind == .network && (request.method.isIdempotentRead || neverSent)
                && attempt < configuration.readRetries:
                try await backOff(request, attempt: &attempt, reason: error.message)
            case .failure(let error):
                throw error
            }
        }
    }

    private func backOff(_ request: TableRequest, attempt: inout Int, reason: String) async throws(RemoteError) {
        let delay = configuration.retryDelay * (1 << attempt)
        attempt += 1
        configuration.logger.warning(
            "retrying \(request.method.rawValue) \(request.target) in \(delay) after: \(reason)")
        do {
            try await Task.sleep(for: delay)
        } catch {
            throw RemoteError(.cancelled, message: "\(request.method.rawValue) \(request.target) was cancelled")
        }
    }

    /// One attempt. Throws ``Unconnected`` when no connection could be established (the request
    /// was not sent), ``RemoteError`` for every other failure.
    private func sendOnce(_ request: TableRequest, token: String?, queued: (@Sendable () -> Void)?) async throws
        -> WireResponse
    {
        let what = "\(request.method.rawValue) \(request.target)"
        if Task.isCancelled { throw RemoteError(.cancelled, message: "\(what) was cancelled") }
        let headers = Self.headers(of: request, credential: try await credential(token, for: what))
        let logger = configuration.logger
        logger.debug("\(what)")
        if let queued, let (connection, path) = pipeline {
            return try await sendPipelined(request, headers: headers, on: connection, path: path, queued: queued)
        }
        let outgoing: HTTPClient.Request
        do {
            outgoing = try HTTPClient.Request(
                url: baseURL + request.target, method: HTTPMethod(rawValue: request.method.rawValue),
                headers: headers, body: request.body.map { .byteBuffer(ByteBuffer(bytes: $0)) })
        } catch {
            throw RemoteError(
                .server, message: "\(what): the URL \(baseURL + request.target) cannot be requested: \(error)")
        }
        do {
            // The whole answer is gathered on the connection's event loop and handed over once:
            // one hop back to this task per request (the streaming API costs several).
            let task = client.execute(
                request: outgoing,
                delegate: ResponseAccumulator(request: outgoing, maxBodySize: configuration.maximumResponseBytes),
                eventLoop: .indifferent, deadline: .now() + TimeAmount(configuration.requestTimeout),
                logger: logger.logLevel <= .debug ? logger : nil)
            let response = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            return WireResponse(
                status: Int(response.status.code), headers: response.headers,
                body: response.body.map { Array($0.readableBytesView) } ?? [])
        } catch let error as ResponseAccumulator.ResponseTooBigError {
            throw RemoteError(
                .server,
                message:
                    "\(what): the answer is larger than \(error.maxBodySize) bytes; raise maximumResponseBytes or ask for smaller pages"
            )
        } catch {
            if Task.isCancelled || (error as? HTTPClientError) == .cancelled || error is CancellationError {
                throw RemoteError(.cancelled, message: "\(what) was cancelled")
            }
            if let reason = Self.connectFailure(error) {
                throw Unconnected(
                    error: RemoteError(.network, message: "\(what) could not connect to \(baseURL): \(reason)"))
            }
            throw RemoteError(.network, message: "\(what) did not complete: \(Self.describe(error))")
        }
    }

    /// The credential header to send: `token` (a renewed one), or the hook's current token.
    private func credential(_ token: String?, for what: @autoclosure () -> String) async throws(RemoteError) -> (
        name: String, value: String
    )? {
        guard let authentication = configuration.authentication else { return nil }
        if let token { return (authentication.headerName, authentication.prefix + token) }
        do {
            return (authentication.headerName, authentication.prefix + (try await authentication.token()))
        } catch {
            throw RemoteError(
                .authentication, message: "\(what()): the authentication token could not be obtained: \(error)")
        }
    }

    /// A request's headers, with the credential.
    private static func headers(of request: TableRequest, credential: (name: String, value: String)?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for header in request.headers { headers.add(name: header.name, value: header.value) }
        if let credential { headers.add(name: credential.name, value: credential.value) }
        return headers
    }

    /// Sends writes on the pipelining connection with one credential and answers each one's
    /// outcome in order, or `nil` for a write that met a 401 when `renewable` (to send again
    /// after renewing the credential).
    ///
    /// The requests are encoded and handed over a few at a time, so the server starts on the
    /// first while the others are encoded, and each answer is read on the connection's event
    /// loop as it arrives, so only one hop back to this task is paid for all of them. A write
    /// that cannot be encoded fails on its own and is not sent. Cancelling closes the connection.
    private func sendPipelined(
        _ writes: [RemoteWrite], token: String?, on connection: PipelinedConnection, path: String,
        renewable: Bool
    ) async throws(RemoteError) -> [Result<Item?, any Error>?] {
        if Task.isCancelled { throw RemoteError(.cancelled, message: "the push was cancelled") }
        let credential = try await credential(token, for: "sending \(writes.count) writes")
        let eventLoop = connection.eventLoop
        var outcomes: [EventLoopFuture<Result<Item?, any Error>?>] = []
        outcomes.reserveCapacity(writes.count)
        for start in stride(from: 0, to: writes.count, by: 8) {
            var slice: [(write: RemoteWrite, request: TableRequest)] = []
            for write in writes[start..<min(writes.count, start + 8)] {
                do {
                    slice.append((write, try request(for: write)))
                } catch {
                    if !slice.isEmpty {
                        outcomes += read(slice, connection.submit(slice.map { outgoing($0.request) }), renewable)
                    }
                    slice = []
                    outcomes.append(eventLoop.makeSucceededFuture(.failure(error)))
                }
            }
            if !slice.isEmpty {
                outcomes += read(slice, connection.submit(slice.map { outgoing($0.request) }), renewable)
            }
        }
        func outgoing(_ request: TableRequest) -> PipelinedConnection.Request {
            PipelinedConnection.Request(
                request, under: path, headers: Self.headers(of: request, credential: credential))
        }
        let all = EventLoopFuture.whenAllSucceed(outcomes, on: eventLoop)
        let answers = await withTaskCancellationHandler {
            (try? await all.get()) ?? []
        } onCancel: {
            connection.close(reopening: true)
        }
        if Task.isCancelled { throw RemoteError(.cancelled, message: "the push was cancelled") }
        return answers
    }

    /// Reads the answers to writes on the event loop as they arrive: the server's copy, the
    /// failure the answer says, or `nil` for a 401 to send again after a renewal.
    private func read(
        _ sent: [(write: RemoteWrite, request: TableRequest)], _ responses: [EventLoopFuture<WireResponse>],
        _ renewable: Bool
    ) -> [EventLoopFuture<Result<Item?, any Error>?>] {
        zip(sent, responses).map { sent, response in
            response.map { response -> Result<Item?, any Error>? in
                if response.status == 401 && renewable { return nil }
                return Result { try self.answer(to: sent.write, sent.request, response) }
            }.recover { error in
                .failure(self.pipelineFailure(sent.request, error))
            }
        }
    }

    /// The error for a request that got no answer on the pipelining connection.
    private func pipelineFailure(_ request: TableRequest, _ error: any Error) -> RemoteError {
        let what = "\(request.method.rawValue) \(request.target)"
        if Task.isCancelled { return RemoteError(.cancelled, message: "\(what) was cancelled") }
        switch error as? PipelinedConnection.PipelineFailure {
        case .unconnected(let cause)?:
            let reason = Self.connectFailure(cause) ?? Self.describe(cause)
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

    /// One attempt on the pipelining connection: the request is handed over, `queued` is called,
    /// and the answer awaited. Cancelling closes the connection (an answer can only be given up
    /// with the connection), which fails the requests still waiting on it.
    private func sendPipelined(
        _ request: TableRequest, headers: HTTPHeaders, on connection: PipelinedConnection, path: String,
        queued: @Sendable () -> Void
    ) async throws -> WireResponse {
        let answer = connection.submit(PipelinedConnection.Request(request, under: path, headers: headers))
        queued()
        do {
            return try await withTaskCancellationHandler {
                try await answer.get()
            } onCancel: {
                connection.close(reopening: true)
            }
        } catch {
            let failure = pipelineFailure(request, error)
            if case .unconnected? = error as? PipelinedConnection.PipelineFailure { throw Unconnected(error: failure) }
            throw failure
        }
    }

    /// A failed attempt whose connection could not be established: the request was never sent,
    /// so repeating it is safe for any method.
    private struct Unconnected: Error {
        var error: RemoteError
    }

    /// Why no connection could be made, or `nil` when `error` is not a failure to connect. A
    /// connection to an address is refused (nothing listens) or the network or host is
    /// unreachable (`IOError` of `connect`); a connection to a host name fails with the
    /// resolver's or every address's error (`NIOConnectionError`). None of them can happen once
    /// the request was sent.
    private static func connectFailure(_ error: any Error) -> String? {
        if let failure = error as? NIOConnectionError {
            let reasons =
                failure.connectionErrors.map { connectFailure($0.error) ?? String(describing: $0.error) }
                + [failure.dnsAError, failure.dnsAAAAError].compactMap { $0.map { "name resolution: \($0)" } }
            return reasons.isEmpty ? "no address found for \(failure.host)" : reasons.joined(separator: "; ")
        }
        switch (error as? IOError)?.errnoCode {
        case ECONNREFUSED?: return "the connection was refused (no server listens there)"
        case ENETUNREACH?: return "the network is unreachable"
        case EHOSTUNREACH?: return "the host is unreachable"
        default: return nil
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? HTTPClientError {
        case .connectTimeout?: return "connecting timed out"
        case .deadlineExceeded?: return "the request timed out"
        case .readTimeout?: return "the server stopped answering (read timed out)"
        case .remoteConnectionClosed?: return "the server closed the connection"
        default: return String(describing: error)
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

/// A received answer: status, headers and the whole body.
struct WireResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var etag: String? { headers.first(name: WireHeader.etag) }

    /// `true` when the answer is an HTML page (a proxy's or web server's error page).
    var isHTML: Bool {
        if headers.first(name: "Content-Type")?.lowercased().contains("html") == true { return true }
        return body.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "<")
    }

    /// A short human summary of the body: the `error` text of a JSON error, an HTML page's title,
    /// or the start of a text body.
    var summary: String? {
        if body.isEmpty { return nil }
        if let error = try? WireJSON.decodeObject(body), case .string(let text)? = error["error"] {
            return text
        }
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        if isHTML {
            if let start = text.range(of: "<title>", options: .caseInsensitive),
                let end = text.range(of: "</title>", options: .caseInsensitive, range: start.upperBound..<text.endIndex)
            {
                return
                    "page title '\(text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines))'"
            }
            return "an HTML page"
        }
        let line = text.prefix(200).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.isEmpty ? nil : "'\(line)'"
    }
}

extension TimeAmount {
    /// The NIO time amount of a Swift duration (nanosecond precision).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
