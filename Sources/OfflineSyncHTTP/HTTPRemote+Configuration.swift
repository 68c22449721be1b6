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
        /// Whether a push sends each chunk of writes as one `POST /$batch` (the OData JSON batch
        /// that `offline-sync serve` takes, see docs/PROTOCOL.md) or one request per write.
        /// Default ``BatchWrites/whenSupported``.
        public var batchWrites: BatchWrites
        /// The TLS settings of `https` connections (trusted roots, certificate verification, a
        /// client certificate); `nil` trusts the system's roots and verifies the certificate and
        /// host name fully.
        public var tlsConfiguration: TLSConfiguration?
        /// The `X-ZUMO-VERSION` header identifying the client, in the form the Azure clients use.
        public var clientVersion: String
        /// Receives one debug line per request and a warning per retry.
        public var logger: Logger

        /// A configuration with defaults: 10 s to connect, 30 s read pauses, 60 s per request,
        /// 2 read retries starting at 200 ms, 64 MiB responses, batched pushes when the server
        /// takes them.
        public init(baseURL: String, authentication: HTTPAuthentication? = nil) {
            self.baseURL = baseURL
            self.authentication = authentication
            self.connectTimeout = .seconds(10)
            self.readTimeout = .seconds(30)
            self.requestTimeout = .seconds(60)
            self.readRetries = 2
            self.retryDelay = .milliseconds(200)
            self.maximumResponseBytes = 64 << 20
            self.batchWrites = .whenSupported
            self.tlsConfiguration = nil
            self.clientVersion = "ZUMO/2.0 (lang=Swift; os=--; os_version=--; arch=--; version=OfflineSync)"
            self.logger = Logger(label: "OfflineSyncHTTP")
        }
    }

    /// How a push sends its writes (``Configuration/batchWrites``).
    public enum BatchWrites: Sendable, Hashable {
        /// Ask the server once, before the first push that has writes to send, whether it takes
        /// `POST /$batch` (an empty batch: a server that takes it answers 200), and send batches
        /// if it does, one request per write if it does not (the Azure servers). A failed
        /// question (the network) is asked again at the next push.
        case whenSupported
        /// Always send batches (a server known to take them; no question asked).
        case always
        /// Always send one request per write.
        case never
    }
}
