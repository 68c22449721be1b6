public import Logging
public import NIOSSL

extension HTTPRemote {
    /// Where the table service lives and how to talk to it.
    public struct Configuration: Sendable {
        /// The service root, e.g. `http://127.0.0.1:8080` or `https://example.azurewebsites.net`;
        /// tables are under `{baseURL}/tables/`. A trailing `/` is ignored.
        public var baseURL: String
        /// The credential added to every request, renewed once on 401; `nil` for none.
        public var authentication: HTTPAuthentication?
        /// The longest wait for a TCP (and TLS) connection.
        public var connectTimeout: Duration
        /// The longest pause while waiting for bytes of a response.
        public var readTimeout: Duration
        /// The longest a request may take until its whole response has arrived.
        public var requestTimeout: Duration
        /// How many times a failed read (`GET`) is repeated after a network failure or a 429, 502,
        /// 503 or 504 answer (after the pause its `Retry-After` asks for, when longer than
        /// ``retryDelay``'s back-off and not longer than ``requestTimeout``), and any request
        /// whose connection could not be established (refused, unreachable: it was never sent).
        /// Writes are not repeated otherwise: the server may have applied them.
        public var readRetries: Int
        /// The pause before the first repeat of a read; it doubles with each further repeat.
        public var retryDelay: Duration
        /// The largest response body accepted, in bytes; a larger one fails with `.server`.
        public var maximumResponseBytes: Int
        /// How many writes of a push may be in flight at once (HTTP/1.1 pipelining on one
        /// connection); 1, the default, sends each write after the answer to the previous one.
        ///
        /// Above 1, a push writes the operations of a chunk back to back on one connection, in
        /// queue order, and reads the answers as they come; the connection is retried (see
        /// ``readRetries``) with the writes waiting in order. Use it with servers that apply
        /// pipelined requests one after another, as `offline-sync serve` (Hummingbird) does: a
        /// server that handles them concurrently could apply writes to different items out of
        /// queue order. When the connection breaks, up to this many writes may have been applied
        /// without their answer arriving; the next push sends them again and meets a 409, 412 or
        /// 404, as after a crash (see `SyncContext.push`). ``requestTimeout`` counts from the
        /// moment a write is handed over, including the wait behind the writes before it.
        public var pushPipelineDepth: Int
        /// The TLS settings of `https` connections (trusted roots, certificate verification, a
        /// client certificate); `nil` trusts the system's roots and verifies the certificate and
        /// host name fully. Both the remote's HTTP client and its pipelining connection use them.
        public var tlsConfiguration: TLSConfiguration?
        /// The `X-ZUMO-VERSION` header identifying the client, in the form the Azure clients use.
        public var clientVersion: String
        /// Receives one debug line per request and a warning per retry.
        public var logger: Logger

        /// A configuration with defaults: 10 s to connect, 30 s read pauses, 60 s per request,
        /// 2 read retries starting at 200 ms, 64 MiB responses, no pipelining.
        public init(baseURL: String, authentication: HTTPAuthentication? = nil) {
            self.baseURL = baseURL
            self.authentication = authentication
            self.connectTimeout = .seconds(10)
            self.readTimeout = .seconds(30)
            self.requestTimeout = .seconds(60)
            self.readRetries = 2
            self.retryDelay = .milliseconds(200)
            self.maximumResponseBytes = 64 << 20
            self.pushPipelineDepth = 1
            self.tlsConfiguration = nil
            self.clientVersion = "ZUMO/2.0 (lang=Swift; os=--; os_version=--; arch=--; version=OfflineSync)"
            self.logger = Logger(label: "OfflineSyncHTTP")
        }
    }
}
