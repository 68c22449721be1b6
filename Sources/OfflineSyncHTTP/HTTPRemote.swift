public import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import OfflineSync
import OfflineSyncProtocol

/// A `RemoteService` that speaks the Azure Mobile Apps table protocol, version 2.0.0, over HTTP.
///
/// Requests have the form the original clients send (see `TableRequest`): `GET/POST
/// /tables/{table}`, `GET/PATCH/DELETE /tables/{table}/{id}`, `ZUMO-API-VERSION: 2.0.0`, OData v3
/// query options, `If-Match: "version"` on updates and deletes. Answers map to results and
/// `RemoteError` kinds:
///
/// | answer | result |
/// |---|---|
/// | 2xx with a readable body | the items (the `ETag` of an item answer becomes its `version`) |
/// | 409, 412 | `.conflict` with the server's item from the body |
/// | 401 (after one refresh, when configured) | `.authentication` |
/// | 404 | `nil` for ``lookup(id:in:)``, `.notFound` otherwise |
/// | 301, 302, 303, 307, 308 | `.server` naming the `Location`: redirects are not followed |
/// | connection failure, timeout, broken connection | `.network` |
/// | task cancellation | `.cancelled` |
/// | any other status, or a body that is not the expected JSON | `.server`, naming what was wrong |
///
/// Reads are repeated with exponential back-off after network failures and 429/502/503/504 (see
/// ``Configuration/readRetries``), waiting at least as long as a `Retry-After: <seconds>` asks
/// (an answer asking for longer than ``Configuration/requestTimeout`` is not repeated); writes only when their connection could not be established
/// (refused, unreachable: the request was never sent). A refused connection therefore fails
/// within a second, naming the URL, instead of waiting for the connect timeout. Call
/// ``shutdown()`` when done with a remote: it closes the HTTP client it created and the
/// pipelining connection.
///
/// Requests go through AsyncHTTPClient (`ClientTransport`), except the writes of a push when
/// ``Configuration/pushPipelineDepth`` is above 1: those are pipelined, in queue order, on one
/// HTTP/1.1 connection of the remote's own (`PipelinedTransport`: SwiftNIO, NIOSSL for `https`),
/// since AsyncHTTPClient does not pipeline. See "Pipelined pushes" in the module's documentation.
///
/// The remote itself is the protocol client: this file answers the `RemoteService`
/// requirements; `HTTPRemote+Answers.swift` reads answers and maps failures,
/// `HTTPRemote+Sending.swift` adds the credential, the 401 renewal and the retries, and
/// `HTTPRemote+PipelinedPush.swift` sends a push's chunk on the pipelining transport.
public final class HTTPRemote: RemoteService {
    /// The configuration the remote was created with.
    public let configuration: Configuration
    /// The transport of every request that is not pipelined.
    let client: ClientTransport
    /// The transport pushes pipeline their writes on, when ``Configuration/pushPipelineDepth``
    /// is above 1.
    let pipeline: PipelinedTransport?
    /// Shares one renewal of the credential among the requests that met a 401 together.
    let renewal = TokenRenewal()

    /// The base URL without a trailing `/`.
    var baseURL: String { client.baseURL }

    /// Creates a remote with its own HTTP client (connection pool), configured with the timeouts.
    /// Throws `RemoteError` `.server` when the base URL is not an `http` or `https` URL.
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
        // Redirects are not followed: the client would send a credential header other than
        // `Authorization` (`X-ZUMO-AUTH`, any custom one) on to another host, even from https to
        // http, and repeat a write elsewhere or turn it into a GET. A 3xx answer fails instead,
        // naming where it points (see `failure`), as the pipelining connection always did.
        clientConfiguration.redirectConfiguration = .disallow
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
                    "the base URL '\(HTTPRemote.withoutCredentials(configuration.baseURL))' is not an http:// or https:// URL with a host (e.g. http://127.0.0.1:8080)"
            )
        }
        guard url.user == nil, url.password == nil else {
            if ownsClient { client.shutdown { _ in } }
            // Not repeated: the user part may be a password. Credentials in a URL end up in logs.
            throw RemoteError(
                .server,
                message:
                    "the base URL of \(scheme)://…@\(host) holds a user name or password, which would appear in logs and error messages; remove it and sign in with the configuration's authentication instead"
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
                pipeline = PipelinedTransport(connection: connection, path: url.path, baseURL: base)
            } catch {
                if ownsClient { client.shutdown { _ in } }
                throw RemoteError(.server, message: "the TLS client for \(base) cannot be set up: \(error)")
            }
        } else {
            pipeline = nil
        }
        self.configuration = configuration
        self.client = ClientTransport(
            client: client, ownsClient: ownsClient, baseURL: base, configuration: configuration)
    }

    /// `url` with whatever precedes an `@` of its authority replaced by `…`, for messages.
    package static func withoutCredentials(_ url: String) -> String {
        let start = url.range(of: "://")?.upperBound ?? url.startIndex
        let authorityEnd = url[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[start..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<start]) + "…" + String(url[at...])
    }

    /// Closes the connections of the remote's own HTTP client and its pipelining connection.
    /// Requests after this fail.
    public func shutdown() async throws {
        try await pipeline?.shutdown()
        try await client.shutdown()
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
    func writeItem(_ write: RemoteWrite) async throws -> Item {
        guard let copy = try await self.write(write, queued: nil) else {
            throw RemoteError(
                .server, message: "\(write.kind.rawValue) of '\(write.item.id)' in '\(write.table)' got no item back")
        }
        return copy
    }

    /// Sends a write (pipelined when `queued` is given) and reads the server's copy from the
    /// answer (`nil` after a delete).
    func write(_ write: RemoteWrite, queued: (@Sendable () -> Void)?) async throws -> Item? {
        let request = try self.request(for: write)
        return try answer(to: write, request, try await send(request, queued: queued))
    }

    /// Sends the writes of a push in order. With a ``Configuration/pushPipelineDepth`` above 1
    /// they are handed to the pipelining connection together, which keeps up to that many in
    /// flight, and the answers are read as they come; writes that met a 401 are sent again,
    /// in order, after one renewal of the credential. Without pipelining they are sent one
    /// after another until one fails in a way that stops a push.
    public func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        guard let pipeline else { return await sendOneAfterAnother(writes) }
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
                    unanswered.map { writes[$0] }, token: renewed, on: pipeline, renewable: renewable)
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
}
