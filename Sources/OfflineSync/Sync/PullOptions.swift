/// Options of a pull.
public struct PullOptions: Sendable {
    /// Records asked for per request (the server may send fewer). Default 50; any value ≥ 1
    /// (1000 and more are fine: a page costs one store transaction).
    public var pageSize: Int
    /// Ask the server for soft-deleted records too, so items deleted on the server are removed
    /// locally (the default). With `false`, local copies of server-deleted items stay.
    public var includeDeleted: Bool
    /// Receives a report after every page.
    public var progress: SyncProgressHandler?

    /// Creates options.
    public init(pageSize: Int = 50, includeDeleted: Bool = true, progress: SyncProgressHandler? = nil) {
        self.pageSize = pageSize
        self.includeDeleted = includeDeleted
        self.progress = progress
    }
}

/// One table to pull, for ``SyncContext/pull(_:options:)-([PullRequest],_)``.
public struct PullRequest: Sendable, Hashable {
    /// The app table.
    public var table: String
    /// Which records to pull: its filter applies; without a query id its ordering, `skip` and
    /// `top` too. `nil` pulls every record.
    public var query: Query?
    /// The name of an incremental pull (1 to 255 bytes, no `|`), or `nil` for a full pull.
    public var queryId: String?

    /// Creates a request.
    public init(table: String, query: Query? = nil, queryId: String? = nil) {
        self.table = table
        self.query = query
        self.queryId = queryId
    }
}

/// What a pull of one table did.
public struct PullResult: Sendable, Hashable {
    /// The table.
    public var table: String
    /// Records received from the server.
    public var received: Int
    /// Records stored locally (inserted or replaced).
    public var stored: Int
    /// Local items removed because the server had deleted them.
    public var deleted: Int
    /// Records not applied because the item has a queued local operation.
    public var skippedPending: Int
    /// Pages requested (the last one is usually empty).
    public var requests: Int

    /// Creates a result.
    public init(
        table: String, received: Int = 0, stored: Int = 0, deleted: Int = 0, skippedPending: Int = 0, requests: Int = 0
    ) {
        self.table = table
        self.received = received
        self.stored = stored
        self.deleted = deleted
        self.skippedPending = skippedPending
        self.requests = requests
    }
}
