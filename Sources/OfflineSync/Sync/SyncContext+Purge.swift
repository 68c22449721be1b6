extension SyncContext {
    /// Removes local items of a table without queuing operations (Azure's `PurgeAsync`).
    ///
    /// - Parameters:
    ///   - table: the app table.
    ///   - query: which items (its filter, ordering, `skip` and `top` apply); `nil` for all. A
    ///     query without a filter, `skip` or `top` (such as a typed `.all`) purges the whole table,
    ///     exactly as `nil` does.
    ///   - queryId: an incremental pull whose delta token is reset, so its next pull starts over.
    ///     Purging a whole table resets every token of the table.
    ///   - force: purge even though the table has queued operations; those of the purged items
    ///     (all of the table's for a whole-table purge) are dropped with their errors.
    /// - Returns: the number of items removed.
    /// - Throws: ``OfflineSyncError/Code-swift.struct/invalidOperation`` when the table has
    ///   queued operations and `force` is `false`; nothing is removed then.
    @discardableResult
    public func purge(table: String, query: Query? = nil, queryId: String? = nil, force: Bool = false) async throws
        -> Int
    {
        _ = try self.table(table)
        if let queryId { try DeltaToken.validate(queryId: queryId) }
        if let query, query.table != table {
            throw OfflineSyncError(.invalidQuery, "the purge of '\(table)' was given a query on '\(query.table)'")
        }
        // A query that selects every item purges the whole table: its tokens are reset too.
        let query = query.flatMap { $0.filter == nil && $0.skip == 0 && $0.top == nil ? nil : $0 }
        typealias C = SystemTables.OperationColumn
        return try await syncing {
            try write(.purge) { transaction in
                queue.changing()
                let tableOperations = Query(
                    table: SystemTables.operations, filter: SyncContext.tableFilter(table),
                    top: 0, includeTotalCount: true)
                let pending = try transaction.read(tableOperations).totalCount ?? 0
                if pending > 0 && !force {
                    throw OfflineSyncError(
                        .invalidOperation,
                        "table '\(table)' has \(pending) queued operation(s); push them first, or purge with force: true to drop them"
                    )
                }
                if pending > 0 {
                    var operations = try transaction.read(
                        Query(
                            table: SystemTables.operations, filter: SyncContext.tableFilter(table),
                            selection: [C.itemId])
                    ).items
                    if let query {
                        let purged = Set(
                            try transaction.read(
                                Query(
                                    table: table, filter: query.filter, orderBy: query.orderBy,
                                    skip: query.skip, top: query.top, selection: [])
                            ).items.map(\.id))
                        operations.removeAll { !purged.contains($0[C.itemId].stringValue ?? "") }
                    }
                    let operationIds = operations.map(\.id)
                    try transaction.delete(ids: operationIds, from: SystemTables.operations)
                    try transaction.delete(ids: operationIds, from: SystemTables.errors)
                }
                let removed = try transaction.delete(matching: query ?? Query(table: table))
                if let queryId {
                    try transaction.delete(
                        ids: [DeltaToken.key(table: table, queryId: queryId)], from: SystemTables.config)
                }
                if query == nil {
                    try transaction.delete(
                        matching: Query(
                            table: SystemTables.config,
                            filter: .function(
                                .startsWith, [.column("id"), .literal(.string(DeltaToken.keyPrefix(table: table)))])))
                }
                return removed
            }
        }
    }

    /// Forgets the delta token of an incremental pull, so its next pull fetches every record.
    public func resetDeltaToken(table: String, queryId: String) async throws {
        _ = try self.table(table)
        try DeltaToken.validate(queryId: queryId)
        try await syncing {
            try store.delete(ids: [DeltaToken.key(table: table, queryId: queryId)], from: SystemTables.config)
        }
    }
}

extension SyncTable {
    /// Pulls this table (Azure's `PullAsync`).
    ///
    /// When the table has queued operations, everything is pushed first (all tables, in queue
    /// order); if that push does not succeed the pull throws its ``PushFailure``. Records are
    /// then read page by page and each page is stored in one transaction: records whose item
    /// has a queued operation are skipped, soft-deleted records remove the local item.
    ///
    /// With a `queryId` the pull is incremental: it asks only for records at or after the stored
    /// ``DeltaToken`` (ordered by `updatedAt`, then `id`), and advances the token in the same
    /// transaction as each page. The query may then only filter (no ordering, skip, top).
    ///
    /// - Parameters:
    ///   - query: a query on this table; `nil` for every record. Selection and total counts are
    ///     rejected.
    ///   - queryId: the incremental pull's name (1 to 255 bytes, no `|`), or `nil` for a full pull.
    ///   - options: how the pull runs (see ``PullOptions``).
    @discardableResult
    public func pull(_ query: Query? = nil, queryId: String? = nil, options: PullOptions = PullOptions()) async throws
        -> PullResult
    {
        try await context.pull(PullRequest(table: name, query: query, queryId: queryId), options: options)
    }

    /// Removes local items without queuing operations (see ``SyncContext/purge(table:query:queryId:force:)``).
    @discardableResult
    public func purge(_ query: Query? = nil, queryId: String? = nil, force: Bool = false) async throws -> Int {
        try await context.purge(table: name, query: query, queryId: queryId, force: force)
    }

    /// Forgets the delta token of an incremental pull of this table.
    public func resetDeltaToken(queryId: String) async throws {
        try await context.resetDeltaToken(table: name, queryId: queryId)
    }

    /// The delta token of an incremental pull of this table, or `nil` before its first page.
    public func deltaToken(queryId: String) throws -> DeltaToken? {
        try context.deltaToken(table: name, queryId: queryId)
    }
}
