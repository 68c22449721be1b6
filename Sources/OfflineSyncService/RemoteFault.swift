public import OfflineSync
/// One call made to an ``InMemoryRemote``, as fault predicates and call logs see it.
public struct RemoteCall: Sendable, Hashable, CustomStringConvertible {
    /// The kind of call.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        /// `RemoteService.readPage(_:includeDeleted:)`.
        case read
        /// `RemoteService.insert(_:into:)`.
        case insert
        /// `RemoteService.update(_:in:ifMatch:)`.
        case update
        /// `RemoteService.delete(id:from:ifMatch:)`.
        case delete
        /// `RemoteService.lookup(id:in:)`.
        case lookup
    }

    /// The kind of call.
    public var operation: Operation
    /// The table.
    public var table: String
    /// The item, for calls about one item.
    public var itemId: String?

    /// Creates a call description.
    public init(_ operation: Operation, table: String, itemId: String? = nil) {
        self.operation = operation
        self.table = table
        self.itemId = itemId
    }

    public var description: String { "\(operation.rawValue) \(table)" + (itemId.map { "/\($0)" } ?? "") }
}

/// A failure an ``InMemoryRemote`` can be told to produce.
public enum RemoteFailure: Sendable, Hashable {
    /// The server cannot be reached (`RemoteError.Kind.network`).
    case network
    /// The request timed out (`RemoteError.Kind.network`, message says so).
    case timeout
    /// The server answers 401 (`RemoteError.Kind.authentication`).
    case unauthorized
    /// The server answers with this status (`RemoteError.Kind.server`), e.g. 500 or 503.
    case status(Int)

    func error(for call: RemoteCall) -> RemoteError {
        switch self {
        case .network: return RemoteError(.network, message: "injected fault: the server is unreachable (\(call))")
        case .timeout: return RemoteError(.network, message: "injected fault: the request timed out (\(call))")
        case .unauthorized:
            return RemoteError(.authentication, status: 401, message: "injected fault: unauthorized (\(call))")
        case .status(let status):
            return RemoteError(.server, status: status, message: "injected fault: HTTP \(status) (\(call))")
        }
    }
}

/// A rule of fault injection: which calls fail, how, how many times, and whether the server
/// applied the call before the answer was lost.
public struct RemoteFault: Sendable {
    /// The failure produced.
    public var failure: RemoteFailure
    /// How many more calls fail; `nil` for every matching call until cleared.
    public var remaining: Int?
    /// When `true` the server applies the call and the answer is lost (the client sees the
    /// failure although the write happened); when `false` the call never reaches the server.
    public var afterApplying: Bool
    /// Which calls the rule applies to.
    public var matches: @Sendable (RemoteCall) -> Bool

    /// Creates a rule.
    public init(
        _ failure: RemoteFailure, times remaining: Int? = 1, afterApplying: Bool = false,
        when matches: @escaping @Sendable (RemoteCall) -> Bool = { _ in true }
    ) {
        self.failure = failure
        self.remaining = remaining
        self.afterApplying = afterApplying
        self.matches = matches
    }
}
