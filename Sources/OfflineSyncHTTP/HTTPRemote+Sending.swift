import Logging
import NIOHTTP1
import OfflineSync

/// Sending one request: the credential, the 401 renewal and the retries around one attempt of
/// the transport (``ClientTransport``).
extension HTTPRemote {
    /// Sends a request with authentication, the 401 refresh and the retries (reads after a
    /// network failure other than a failed TLS handshake, any request whose connection failed);
    /// transport failures become `.network` or `.cancelled`.
    func send(_ request: TableRequest) async throws(RemoteError)
        -> WireResponse
    {
        var attempt = 0
        var renewed: String?
        while true {
            let result: Result<WireResponse, RemoteError>
            var neverSent = false
            let round = renewal.round
            do {
                result = .success(try await sendOnce(request, token: renewed))
            } catch let failure as Unconnected {
                result = .failure(failure.error)
                neverSent = true
            } catch let failure as NotRetried {
                throw failure.error
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
            where request.method.isIdempotentRead && RemoteError.unavailableStatuses.contains(response.status)
                && attempt < configuration.readRetries:
                let asked = Self.retryAfter(response)
                // A server that asks for a longer pause than a request may take is not waited for.
                if let asked, asked > configuration.requestTimeout { return response }
                try await backOff(request, attempt: &attempt, atLeast: asked, reason: "HTTP \(response.status)")
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

    /// Waits before repeating `request`: ``Configuration/retryDelay``, doubled for each attempt
    /// made, or `atLeast` (a server's `Retry-After`) when that is longer.
    func backOff(_ request: TableRequest, attempt: inout Int, atLeast: Duration? = nil, reason: String)
        async throws(RemoteError)
    {
        let delay = max(configuration.retryDelay * (1 << attempt), atLeast ?? .zero)
        attempt += 1
        configuration.logger.warning(
            "retrying \(request.method.rawValue) \(request.target) in \(delay) after: \(reason)")
        do {
            try await Task.sleep(for: delay)
        } catch {
            throw RemoteError(.cancelled, message: "\(request.method.rawValue) \(request.target) was cancelled")
        }
    }

    /// The pause a `Retry-After: <seconds>` header of `response` asks for; `nil` without one, or
    /// for the HTTP-date form (the back-off applies then).
    static func retryAfter(_ response: WireResponse) -> Duration? {
        guard let value = response.headers.first(name: "Retry-After"), !value.isEmpty,
            value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        // Digits beyond what an Int holds are a pause longer than any request may take.
        return .seconds(Int(value) ?? Int.max)
    }

    /// One attempt with the current credential (or `token`, a renewed one). Throws
    /// ``Unconnected`` when no connection could be established (the request was not sent),
    /// ``NotRetried`` for a failure of TLS itself, ``OfflineSync/RemoteError`` for every other
    /// failure.
    func sendOnce(_ request: TableRequest, token: String?) async throws -> WireResponse {
        let what = "\(request.method.rawValue) \(request.target)"
        if Task.isCancelled { throw RemoteError(.cancelled, message: "\(what) was cancelled") }
        let headers = Self.headers(of: request, credential: try await credential(token, for: what))
        configuration.logger.debug("\(what)")
        return try await client.send(request, headers: headers)
    }

    /// The credential header to send: `token` (a renewed one), or the hook's current token.
    func credential(_ token: String?, for what: @autoclosure () -> String) async throws(RemoteError) -> (
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
    static func headers(of request: TableRequest, credential: (name: String, value: String)?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for header in request.headers { headers.add(name: header.name, value: header.value) }
        if let credential { headers.add(name: credential.name, value: credential.value) }
        return headers
    }
}
