package import OfflineSync
package import OfflineSyncHTTP
package import Testing

/// What the tests of ``HTTPRemote`` against scripted loopback servers share.
package enum ScriptedServerRemote {
    /// A remote on `port` whose requests carry `X-ZUMO-AUTH: secret-token`, with read retries a
    /// millisecond apart.
    package static func remote(port: Int, retries: Int = 2) throws -> HTTPRemote {
        var configuration = HTTPRemote.Configuration(
            baseURL: "http://127.0.0.1:\(port)", authentication: .zumo(token: { "secret-token" }))
        configuration.readRetries = retries
        configuration.retryDelay = .milliseconds(1)
        return try HTTPRemote(configuration: configuration)
    }

    /// Calls `body` and returns the ``RemoteError`` it throws, recording an issue otherwise.
    package static func failure(_ body: () async throws -> Void) async -> RemoteError? {
        do {
            try await body()
            Issue.record("expected a RemoteError")
        } catch let error as RemoteError {
            return error
        } catch {
            Issue.record("expected a RemoteError, got \(error)")
        }
        return nil
    }
}
