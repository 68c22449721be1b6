public import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import OfflineSync
import OfflineSyncProtocol
import Synchronization

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
/// ``shutdown()`` when done with a remote: it closes the HTTP client it created.
///
/// Every request goes through AsyncHTTPClient (`ClientTransport`). A push sends each chunk of
/// writes as one `POST /$batch` to a server that takes it (``Configuration/batchWrites``), one
/// request per write otherwise. See "Batched pushes" in the module's documentation.
///
/// The remote itself is the protocol client: this file answers the `RemoteService`
/// requirements; `HTTPRemote+Answers.swift` reads answers and maps failures,
/// `HTTPRemote+Sending.swift` adds the credential, the 401 renewal and the retries, and
/// `HTTPRemote+Batch.swift` sends a push's chunk as a batch.
public final class HTTPRemote: RemoteService {
    /// The configuration the remote was created with.
    public let configuration: Configuration
    /// The transport of every request.
    let client: ClientTransport
    /// Shares one renewal of the credential among the requests that met a 401 together.
    let renewal = TokenRenewal()
    /// Whether the server takes `POST /$batch`, once asked (see ``Configuration/BatchWrites/whenSupported``).
    let batchSupport = Mutex<Bool?>(nil)

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
        // naming where it points (see `failure`).
        clientConfiguration.redirectConfiguration = .disallow
        try self.init(
            configuration: configuration,
            client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration),
            ownsClient: true)
    }

    /// Creates a remote on an HTTP client the caller owns (and shuts down). The client's own
    /// connect and read timeouts and TLS settings apply instead of the configuration's.
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

    /// Closes the connections of the remote's own HTTP client. Requests after this fail.
    public func shutdown() async throws {
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
        _ = try await write(RemoteWrite(.delete, table: table, item: Item(id: id), ifMatch: version))
    }

    /// Sends an insert or update and answers the server's copy.
    func writeItem(_ write: RemoteWrite) async throws -> Item {
        guard let copy = try await self.write(write) else {
            throw RemoteError(
                .server, message: "\(write.kind.rawValue) of '\(write.item.id)' in '\(write.table)' got no item back")
        }
        return copy
    }

    /// Sends a write and reads the server's copy from the answer (`nil` after a delete).
    func write(_ write: RemoteWrite) async throws -> Item? {
        let request = try self.request(for: write)
        return try answer(to: write, request, try await send(request))
    }
}
