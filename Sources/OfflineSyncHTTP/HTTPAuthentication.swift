import OfflineSync
import Synchronization

/// Adds a credential header to every request of an ``HTTPRemote`` and renews it once after a 401.
///
/// The token is asked for before each request (so a token the app renewed elsewhere is picked up)
/// and sent as `name: prefix + token`. When the server answers 401 and ``refresh`` is set, the
/// remote calls it once, then repeats the request with the token it returned (keep that token
/// where ``token`` reads it, so later requests use it too); a second 401 (or a refresh that
/// throws or returns `nil`) fails with `RemoteError` `.authentication`, which aborts a push
/// and keeps the queue.
///
/// ```swift
/// let auth = HTTPAuthentication.bearer(token: { await session.accessToken },
///                                      refresh: { try await session.renew() })
/// ```
public struct HTTPAuthentication: Sendable {
    /// The header name, e.g. `Authorization` or `X-ZUMO-AUTH`.
    public var headerName: String
    /// Text put before the token in the header value (`"Bearer "` for bearer tokens).
    public var prefix: String
    /// Answers the current token.
    public var token: @Sendable () async throws -> String
    /// Obtains a new token after a 401; `nil` when the credential cannot be renewed.
    public var refresh: (@Sendable () async throws -> String?)?

    /// Creates an authentication hook for any header.
    public init(
        headerName: String, prefix: String = "", token: @escaping @Sendable () async throws -> String,
        refresh: (@Sendable () async throws -> String?)? = nil
    ) {
        self.headerName = headerName
        self.prefix = prefix
        self.token = token
        self.refresh = refresh
    }

    /// `Authorization: Bearer <token>`.
    public static func bearer(
        token: @escaping @Sendable () async throws -> String,
        refresh: (@Sendable () async throws -> String?)? = nil
    ) -> HTTPAuthentication {
        HTTPAuthentication(headerName: "Authorization", prefix: "Bearer ", token: token, refresh: refresh)
    }

    /// `X-ZUMO-AUTH: <token>`, the App Service authentication token of Azure Mobile Apps.
    public static func zumo(
        token: @escaping @Sendable () async throws -> String,
        refresh: (@Sendable () async throws -> String?)? = nil
    ) -> HTTPAuthentication {
        HTTPAuthentication(headerName: "X-ZUMO-AUTH", token: token, refresh: refresh)
    }
}

/// Renews the credential once for every request that met a 401 with the same token: requests
/// sent together (parallel reads and writes) share one call to the refresh hook.
final class TokenRenewal: Sendable {
    private struct State {
        /// Renewals started.
        var started = 0
        /// Whether the last one started has ended.
        var ended = true
        var renewal: Task<String?, any Error>?
    }

    private let state = Locked(State())

    /// The renewals whose token a request sent now may carry; a request notes it before it
    /// fetches its token. A renewal still under way does not count: the token fetched meanwhile
    /// may be the old one.
    var round: Int { state.withLock { $0.ended ? $0.started : $0.started - 1 } }

    /// The renewed token for a request sent in `round` that met a 401: the renewal started
    /// since, or a new one.
    func renew(after round: Int, _ refresh: @escaping @Sendable () async throws -> String?) async throws -> String? {
        let (renewal, number) = state.withLock { state -> (Task<String?, any Error>, Int) in
            if state.started > round, let renewal = state.renewal { return (renewal, state.started) }
            let renewal = Task { try await refresh() }
            state.started += 1
            state.ended = false
            state.renewal = renewal
            return (renewal, state.started)
        }
        defer { state.withLock { if $0.started == number { $0.ended = true } } }
        return try await renewal.value
    }
}
