public import Hummingbird
import Synchronization

/// The request context of the table server's router: Hummingbird's core context and what the
/// server's middleware learned about the request.
public struct TableRequestContext: RequestContext {
    /// Hummingbird's part of the context (logger, route parameters).
    public var coreContext: CoreRequestContextStorage
    /// What the request's token proved, set by ``TokenMiddleware`` before the route runs;
    /// `.none` when the server checks no tokens.
    var credential: TableProtocol.Credential = .none
    /// Where a route leaves what the log should say about a server failure beyond its answer;
    /// ``RequestLogMiddleware`` writes it.
    let failureDetail = FailureDetail()

    /// Creates the context of a request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}

/// The detail of a server failure, for the log only (see ``TableRequestContext/failureDetail``).
final class FailureDetail: Sendable {
    private let detail = Mutex<String?>(nil)

    /// The detail, once a route set it.
    var text: String? {
        get { detail.withLock { $0 } }
        set { detail.withLock { $0 = newValue } }
    }
}
