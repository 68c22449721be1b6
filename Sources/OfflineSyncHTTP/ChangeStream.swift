public import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
public import OfflineSync
import OfflineSyncProtocol

/// The change stream of a table-protocol server (`GET /changes`, Server-Sent Events) as a
/// `ChangeSignal` for a `Replicator`: `offline-sync serve` sends
/// `event: ready` once the subscription is registered (handed on as
/// `ChangeSignalEvent.connected`), then `event: change` with
/// `{"table":…,"updatedAt":…}` after each committed write (see `docs/PROTOCOL.md`, "Change stream").
///
/// It uses the same configuration as the ``HTTPRemote`` beside it (base URL, credential and its
/// renewal after a 401, TLS, timeouts) and streams through AsyncHTTPClient. Answers map to
/// `ChangeSignalError` kinds: 404 or an answer that is not `text/event-stream`
/// (an Azure server, an older `serve`) → `.unsupported`, so the replicator polls; 401 after one
/// renewal → `.authentication`; 429 and 503 → `.unavailable` with the `Retry-After` pause; a
/// connection that fails, breaks or stays silent for ``HTTPRemote/Configuration/readTimeout``
/// (the server's heartbeat arrives far more often) → `.network`.
///
/// Call ``shutdown()`` when done, if it created its HTTP client.
public final class ChangeStream: ChangeSignal {
    /// The configuration the stream was created with.
    public let configuration: HTTPRemote.Configuration
    private let client: HTTPClient
    private let ownsClient: Bool
    private let baseURL: String
    private let renewal = TokenRenewal()

    /// Creates a change stream with its own HTTP client (one connection per open stream).
    public convenience init(configuration: HTTPRemote.Configuration) {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tlsConfiguration,
            timeout: .init(
                connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.readTimeout)))
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.init(
            configuration: configuration,
            client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration),
            ownsClient: true)
    }

    /// Creates a change stream on an HTTP client the caller owns (and shuts down); many streams
    /// may share one client whose pool allows as many connections to the host.
    public convenience init(configuration: HTTPRemote.Configuration, client: HTTPClient) {
        self.init(configuration: configuration, client: client, ownsClient: false)
    }

    private init(configuration: HTTPRemote.Configuration, client: HTTPClient, ownsClient: Bool) {
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.configuration = configuration
        self.client = client
        self.ownsClient = ownsClient
        self.baseURL = base
    }

    deinit {
        if ownsClient { client.shutdown { _ in } }
    }

    /// Closes the HTTP client the stream created (a caller's client is left alone).
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    /// Opens `GET /changes?tables=…` and hands its events to `receive` until the server ends the
    /// stream, it fails, or the task is cancelled.
    public func listen(
        to tables: [String], _ receive: @escaping @Sendable (ChangeSignalEvent) async -> Void
    ) async throws {
        let response = try await open(tables)
        var parser = ServerSentEventParser()
        do {
            for try await chunk in response.body {
                for event in parser.feed(chunk.readableBytesView) {
                    if event.type == "ready" {
                        // The server registered the subscription: no later write goes unannounced.
                        await receive(.connected)
                        continue
                    }
                    guard event.type == "change" else { continue }
                    guard let change = Self.change(event.data) else {
                        configuration.logger.warning("ignoring a change event that is not {\"table\":…}: \(event.data.prefix(200))")
                        continue
                    }
                    await receive(change)
                }
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw ChangeSignalError(.network, message: "the change stream of \(baseURL) broke: \(error)")
        }
    }

    /// Sends the request (renewing the credential once after a 401) and checks the answer's head.
    private func open(_ tables: [String]) async throws -> HTTPClientResponse {
        let target = "/changes" + (tables.isEmpty ? "" : "?tables=" + tables.map(PercentEncoding.queryValue).joined(separator: ","))
        var renewed: String?
        while true {
            let round = renewal.round
            var request = HTTPClientRequest(url: baseURL + target)
            request.method = .GET
            request.headers.add(name: "Accept", value: "text/event-stream")
            request.headers.add(name: "Cache-Control", value: "no-cache")
            request.headers.add(name: WireHeader.apiVersion, value: WireHeader.apiVersionValue)
            request.headers.add(name: WireHeader.clientVersion, value: configuration.clientVersion)
            if let authentication = configuration.authentication {
                let token: String
                if let renewed {
                    token = renewed
                } else {
                    do { token = try await authentication.token() } catch {
                        throw ChangeSignalError(
                            .authentication, message: "GET /changes: the authentication token could not be obtained: \(error)")
                    }
                }
                request.headers.add(name: authentication.headerName, value: authentication.prefix + token)
            }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, timeout: TimeAmount(configuration.connectTimeout + configuration.readTimeout))
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw ChangeSignalError(.network, message: "GET \(baseURL)/changes failed: \(error)")
            }
            let status = Int(response.status.code)
            let opened = status == 200
                && (response.headers.first(name: "Content-Type")?.lowercased().hasPrefix("text/event-stream") ?? false)
            // An answer that opens no stream is read to its end (a short JSON error), so its
            // connection goes back to the pool instead of being closed half read.
            if !opened { _ = try? await response.body.collect(upTo: 64 << 10) }
            if status == 401, renewed == nil, let refresh = configuration.authentication?.refresh {
                let token: String?
                do { token = try await renewal.renew(after: round, refresh) } catch {
                    throw ChangeSignalError(
                        .authentication, status: 401,
                        message: "GET /changes: the server refused the credentials and renewing them failed: \(error)")
                }
                if let token {
                    renewed = token
                    continue
                }
            }
            try check(response, status: status)
            return response
        }
    }

    /// Throws the error an answer that opens no stream means.
    private func check(_ response: HTTPClientResponse, status: Int) throws {
        let contentType = response.headers.first(name: "Content-Type")?.lowercased() ?? ""
        switch status {
        case 200 where contentType.hasPrefix("text/event-stream"):
            return
        case 200..<300, 404, 405:
            throw ChangeSignalError(
                .unsupported, status: status,
                message: "\(baseURL) has no change stream (GET /changes answered \(status) \(contentType)); polling instead")
        case 401:
            throw ChangeSignalError(.authentication, status: status, message: "GET /changes: the server refused the credentials")
        case _ where RemoteError.unavailableStatuses.contains(status):
            let asked = response.headers.first(name: "Retry-After").flatMap { Int($0) }.map { Duration.seconds($0) }
            throw ChangeSignalError(
                .unavailable, status: status, retryAfter: asked, message: "GET /changes: the server is busy or at its subscriber cap")
        default:
            throw ChangeSignalError(.server, status: status, message: "GET /changes was refused")
        }
    }

    /// The event a `change` event's data names: `{"table":"…","updatedAt":"…"}`.
    static func change(_ data: String) -> ChangeSignalEvent? {
        struct Change: Decodable {
            var table: String
            var updatedAt: String?
        }
        guard let change = try? JSONDecoder().decode(Change.self, from: Data(data.utf8)), !change.table.isEmpty else {
            return nil
        }
        return .changed(table: change.table, updatedAt: change.updatedAt.flatMap { Timestamp(iso8601: $0) })
    }
}
