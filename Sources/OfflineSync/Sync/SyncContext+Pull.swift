extension SyncContext {
    /// Pulls several tables, one after the other, and returns one result per request.
    public func pull(_ requests: [PullRequest], options: PullOptions = PullOptions()) async throws -> [PullResult] {
        for request in requests {
            try validate(request, options: options)
        }
        return try await syncing {
            var results: [PullResult] = []
            for request in requests {
                results.append(try await pullHoldingGate(request, options: options))
            }
            return results
        }
    }

    /// Pulls one table (see ``SyncTable/pull(_:queryId:options:)``).
    @discardableResult
    public func pull(_ request: PullRequest, options: PullOptions = PullOptions()) async throws -> PullResult {
        try await pull([request], options: options)[0]
    }

    /// The delta token of an incremental pull, or `nil` before its first page.
    public func deltaToken(table: String, queryId: String) throws -> DeltaToken? {
        try DeltaToken.validate(queryId: queryId)
        return try store.lookup(table: SystemTables.config, id: DeltaToken.key(table: table, queryId: queryId)).flatMap(
            DeltaToken.init(row:))
    }

    private func validate(_ request: PullRequest, options: PullOptions) throws {
        _ = try table(request.table)
        let schema = try store.schema.requireTable(request.table)
        guard options.pageSize >= 1 else {
            throw OfflineSyncError(
                .configuration, "pull page size is \(options.pageSize); it must be 1 or more (default 50)")
        }
        guard request.queryId == nil || schema.column(named: SystemProperty.updatedAt.rawValue) != nil else {
            throw OfflineSyncError(
                .invalidSchema,
                "table '\(request.table)' has no 'updatedAt' column; an incremental pull needs it (declare the table synced)"
            )
        }
        if let query = request.query {
            guard query.table == request.table else {
                throw OfflineSyncError(
                    .invalidQuery, "the pull of '\(request.table)' was given a query on '\(query.table)'")
            }
            guard query.selection == nil else {
                throw OfflineSyncError(
                    .invalidQuery,
                    "a pull of '\(request.table)' cannot select columns: each pulled record replaces the whole local row"
                )
            }
            guard !query.includeTotalCount else {
                throw OfflineSyncError(.invalidQuery, "a pull of '\(request.table)' cannot ask for a total count")
            }
            try query.validate(against: schema)
        }
        if let queryId = request.queryId {
            try DeltaToken.validate(queryId: queryId)
            if let query = request.query, !query.orderBy.isEmpty || query.skip != 0 || query.top != nil {
                throw OfflineSyncError(
                    .invalidQuery,
                    "incremental pull '\(queryId)' of '\(request.table)' cannot use orderBy, skip or top: it orders by updatedAt and pages by itself; drop them or pull without a query id"
                )
            }
        }
    }

    private func pullHoldingGate(_ request: PullRequest, options: PullOptions) async throws -> PullResult {
        if try pendingOperationCount(table: request.table) > 0 {
            let pushed = try await pushHoldingGate(handler: pushHandler, progress: options.progress)
            guard pushed.succeeded else {
                throw PushFailure(
                    result: pushed,
                    message:
                        "the pull of '\(request.table)' pushed its pending operations first and \(pushed.errors.count) failed; resolve them (SyncContext.operationErrors() and resolve(_:_:), or a push handler that settles conflicts) and pull again"
                )
            }
        }
        var result = PullResult(table: request.table)
        if let queryId = request.queryId {
            try await pullIncrementally(request, queryId: queryId, options: options, into: &result)
        } else {
            try await pullFully(request, options: options, into: &result)
        }
        return result
    }

    /// Pages by (`updatedAt`, `id`) after the stored delta token; each page and the advanced
    /// token commit together. Records sharing one `updatedAt` are paged by the id tie-breaker.
    ///
    /// Some servers do not answer the tie-breaker as asked: a server that keeps finer timestamps
    /// than it sends (SQL Server's `datetimeoffset(7)`) finds every record of the token's
    /// millisecond "after" it and sends them again, from the first; a server whose ids compare
    /// in another collation (case-insensitive) sends ids that are after the token's for it but
    /// not byte for byte. Either way the page's last record is not after the token byte for
    /// byte. The pull then keeps the token where it is and pages through that millisecond with
    /// `$skip`, counted from the first record after the unchanged token, until a page reaches a
    /// later time. So the token never moves backwards, and a page repeated at the same skip
    /// (a server that ignores `$skip`) is an error rather than a loop.
    private func pullIncrementally(
        _ request: PullRequest, queryId: String, options: PullOptions, into result: inout PullResult
    ) async throws {
        let key = DeltaToken.key(table: request.table, queryId: queryId)
        var token = try store.lookup(table: SystemTables.config, id: key).flatMap(DeltaToken.init(row:)) ?? .initial
        var skip = 0
        var previousIds: [String] = []
        func pageQuery() -> Query {
            let filter = request.query?.filter.map { FilterExpression.and($0, token.filter) } ?? token.filter
            return Query(
                table: request.table, filter: filter,
                orderBy: [SortKey(SystemProperty.updatedAt.rawValue), SortKey("id")],
                skip: skip, top: options.pageSize)
        }
        var query = pageQuery()
        try Task.checkCancellation()
        var page = try await remote.readPage(query, includeDeleted: options.includeDeleted).items
        while true {
            result.requests += 1
            try SyncContext.checkPageSize(page, of: query)
            guard let last = page.last, let updatedAt = try SyncContext.checkTimeOrder(page, table: request.table)
            else { break }
            if updatedAt < token.updatedAt {
                // The page ends before the records it was asked for begin: the server ignores
                // the token's filter, and asking again would bring the same page forever.
                throw SyncContext.filterIgnored(
                    table: request.table, asked: "records updated at or after \(token.updatedAt.iso8601)",
                    answered: "a page ending at item '\(last.id)' updated at \(updatedAt.iso8601)")
            }
            if skip > 0, page.map(\.id) == previousIds {
                // Asked to skip the records it sent last time, it sent them again.
                throw OfflineSyncError(
                    .invalidValue,
                    "the server answered the pull of '\(request.table)' with the same \(page.count) records after being asked to skip them ($skip=\(skip)); it does not honour $skip, so the pull would fetch the same page forever. Check that the remote is an Azure Mobile Apps table endpoint"
                )
            }
            let next = DeltaToken(updatedAt: updatedAt, itemId: last.id)
            let sameTime = updatedAt == token.updatedAt
            let pageToken: (key: String, value: DeltaToken)?
            if sameTime && (skip > 0 || !SyncContext.isAfter(next, token)) {
                // Within the token's millisecond, paged by `$skip` from the unchanged token.
                previousIds = page.map(\.id)
                pageToken = nil
                skip += page.count
            } else {
                pageToken = (key, next)
                skip = 0
                token = next
            }
            query = pageQuery()
            page = try await store(
                page, of: request.table, token: pageToken, whileReading: query, options, into: &result)
        }
    }

    /// Stores `page` (see ``commit(_:of:token:into:)``) and reports the progress.
    private func store(
        _ page: [Item], of table: String, token: (key: String, value: DeltaToken)?, _ options: PullOptions,
        into result: inout PullResult
    ) throws {
        try commit(page, of: table, token: token, into: &result)
        options.progress?(SyncProgress(phase: .pull, table: table, completed: result.received, total: nil))
    }

    /// Stores `page` as ``store(_:of:token:_:into:)`` does while the page `next` is asked for,
    /// and returns that page. Its query follows from the pages before alone, so the network and
    /// the store work side by side; should storing fail, the request is cancelled and its page
    /// dropped.
    private func store(
        _ page: [Item], of table: String, token: (key: String, value: DeltaToken)?, whileReading next: Query,
        _ options: PullOptions, into result: inout PullResult
    ) async throws -> [Item] {
        try Task.checkCancellation()
        async let following = remote.readPage(next, includeDeleted: options.includeDeleted)
        try store(page, of: table, token: token, options, into: &result)
        return try await following.items
    }

    /// `true` when `next` comes after `token` in pull order, ids compared byte for byte.
    static func isAfter(_ next: DeltaToken, _ token: DeltaToken) -> Bool {
        if next.updatedAt != token.updatedAt { return next.updatedAt > token.updatedAt }
        guard let id = token.itemId else { return true }
        return ValueSemantics.compareBytes(next.itemId ?? "", id) > 0
    }

    /// The `updatedAt` of the page's last record (`nil` for an empty page), after checking that
    /// every record has one and that they never go back in time: a page out of that order (a
    /// server or proxy that drops `$orderby`) would move the token past records it has not sent
    /// yet, losing them for good.
    static func checkTimeOrder(_ page: [Item], table: String) throws -> Timestamp? {
        var previous: Timestamp?
        for item in page {
            guard let updatedAt = item.updatedAt else {
                throw OfflineSyncError(
                    .invalidValue,
                    "the server sent item '\(item.id)' of '\(table)' without 'updatedAt'; an incremental pull needs it"
                )
            }
            if let previous, updatedAt < previous {
                throw OfflineSyncError(
                    .invalidValue,
                    "the server answered the pull of '\(table)' with item '\(item.id)' updated at \(updatedAt.iso8601) after one updated at \(previous.iso8601); it does not honour $orderby=updatedAt, so the pull would move past records it has not received. Check that the remote (and any proxy) passes $orderby to an Azure Mobile Apps table endpoint"
                )
            }
            previous = updatedAt
        }
        return previous
    }

    /// Pages through the query's records. Without ordering, `skip` or `top` the pages follow
    /// the id (`id gt last`, a keyset that no concurrent change can shift); otherwise they use
    /// `skip`/`top` in the query's order, then by id.
    private func pullFully(_ request: PullRequest, options: PullOptions, into result: inout PullResult) async throws {
        var query = request.query ?? Query(table: request.table)
        let byId = query.orderBy.isEmpty && query.skip == 0 && query.top == nil
        let filter = query.filter
        if !query.orderBy.contains(where: { $0.column == "id" }) { query.orderBy.append(SortKey("id")) }
        var remaining = query.top
        var lastId: String?
        var previousIds: Set<String> = []
        func pageQuery() -> Query {
            var pageQuery = query
            pageQuery.top = min(options.pageSize, remaining ?? Int.max)
            if byId, let lastId {
                let after = FilterExpression.comparison(.column("id"), .gt, .literal(.string(lastId)))
                pageQuery.filter = filter.map { .and($0, after) } ?? after
            }
            return pageQuery
        }
        guard remaining != 0 else { return }
        try Task.checkCancellation()
        var asked = pageQuery()
        var page = try await remote.readPage(asked, includeDeleted: options.includeDeleted).items
        while true {
            result.requests += 1
            try SyncContext.checkPageSize(page, of: asked)
            guard let last = page.last else { break }
            if byId, let lastId, let repeated = page.first(where: { previousIds.contains($0.id) }) {
                // Keyset paging only moves on when each page holds records after the one before
                // it. Judged by repetition, not by comparing ids: a server's ids may compare in
                // another collation (SQL Server's is case-insensitive), where 'C' comes after 'b'.
                throw SyncContext.filterIgnored(
                    table: request.table, asked: "records after id '\(lastId)'",
                    answered: "a page holding item '\(repeated.id)' of the previous page again")
            }
            if byId {
                lastId = last.id
                previousIds = Set(page.map(\.id))
            } else {
                query.skip += page.count
            }
            remaining = remaining.map { max(0, $0 - page.count) }
            guard remaining != 0 else {
                try store(page, of: request.table, token: nil, options, into: &result)
                break
            }
            asked = pageQuery()
            page = try await store(page, of: request.table, token: nil, whileReading: asked, options, into: &result)
        }
    }

    /// Throws when a page holds more records than `query.top` asked for: the server ignores
    /// `$top`, so paging by it would never end (or would skip records).
    static func checkPageSize(_ page: [Item], of query: Query) throws {
        guard let top = query.top, page.count > top else { return }
        throw OfflineSyncError(
            .invalidValue,
            "the server answered a page of \(page.count) records of '\(query.table)' when \(top) were asked for; it does not honour $top, so the pull cannot page through the table. Check that the remote is an Azure Mobile Apps table endpoint"
        )
    }

    /// The error for a page that does not move past the previous one: the server ignores `$filter`.
    static func filterIgnored(table: String, asked: String, answered: String) -> OfflineSyncError {
        OfflineSyncError(
            .invalidValue,
            "the server answered the pull of '\(table)' for \(asked) with \(answered), which is not after them; it does not honour $filter, so the pull would fetch the same page forever. Check that the remote is an Azure Mobile Apps table endpoint"
        )
    }

    /// Stores one page in one transaction: items with a queued operation are left alone, deleted
    /// records are removed, the rest upserted in bulk; then the token, when given, is written.
    private func commit(
        _ page: [Item], of table: String, token: (key: String, value: DeltaToken)?, into result: inout PullResult
    ) throws {
        let counts = try write(.pull, deferringObservers: true) {
            transaction -> (stored: Int, deleted: Int, skipped: Int) in
            let pendingIds = try queuedItemIds(table: table, among: page, in: transaction)
            var upserts: [Item] = []
            var deletions: [String] = []
            if pendingIds.isEmpty, !page.contains(where: \.isDeleted) {
                upserts = page
            } else {
                upserts.reserveCapacity(page.count)
                for item in page where !pendingIds.contains(IdKey(item.id)) {
                    if item.isDeleted { deletions.append(item.id) } else { upserts.append(item) }
                }
            }
            try transaction.upsert(upserts, into: table, origin: .server)
            if !deletions.isEmpty { try transaction.delete(ids: deletions, from: table) }
            if let token {
                try transaction.upsert([token.value.row(key: token.key)], into: SystemTables.config, origin: .local)
            }
            return (upserts.count, deletions.count, page.count - upserts.count - deletions.count)
        }
        result.received += page.count
        result.stored += counts.stored
        result.deleted += counts.deleted
        result.skippedPending += counts.skipped
    }

    /// Which of `items` have a queued operation in `table` (compared by bytes): none when the
    /// queue is empty (the usual case, since a pull pushes first; reading its first row says
    /// so), otherwise a lookup by id of each item's two queue slots (the queue is keyed by table
    /// and item id, see ``OperationQueue``, so this needs no index on the queue).
    func queuedItemIds(table: String, among items: [Item], in transaction: any StoreTransaction) throws -> Set<IdKey> {
        var queued = Set<IdKey>()
        let any = try transaction.read(
            Query(table: SystemTables.operations, top: 1, selection: [SystemTables.OperationColumn.itemId]))
        guard !any.items.isEmpty else { return queued }
        let ids = items.map(\.id)
        for slot in [OperationQueue.Slot.primary, .followUp] {
            queued.formUnion(try queue.operations(table: table, itemIds: ids, slot: slot, in: transaction).keys)
        }
        return queued
    }
}
