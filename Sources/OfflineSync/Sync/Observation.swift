/// The committed transactions of a ``SyncContext``, as ``ChangeSet``s in commit order: an
/// `AsyncSequence` returned by ``SyncContext/changes(bufferLimit:)``.
///
/// The feed is registered when it is created, so it sees every transaction committed after
/// `changes(bufferLimit:)` returns. It ends (its iterator returns `nil`) when the task iterating
/// it is cancelled, when the context is closed, or when the feed and its iterator are released;
/// each of these unregisters it and drops its buffer. Iterate a feed once: every change set goes
/// to one consumer, so two loops over one feed would split it (make one feed per consumer).
public struct ChangeFeed: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = ChangeSet

    let subscription: Subscription

    /// Iterates the feed.
    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: subscription)
    }

    /// Waits for the next change set.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: Subscription

        /// The next change set (waiting for one); `nil` once the feed ended.
        public mutating func next() async -> ChangeSet? {
            guard let id = subscription.id else { return nil }
            return await subscription.hub.nextChangeSet(feed: id)
        }
    }

    /// The registration, removed when the last copy of the feed or its iterator goes away.
    final class Subscription: Sendable {
        let hub: ChangeHub
        let id: Int?

        init(hub: ChangeHub, limit: Int) {
            self.hub = hub
            self.id = hub.addFeed(limit: limit)
        }

        deinit {
            if let id { hub.removeFeed(id) }
        }
    }
}

/// A query kept up to date: an `AsyncSequence` returned by ``SyncTable/observe(_:)`` that
/// yields the query's current result at once, then a fresh result after committed transactions
/// of the context that changed the query's table, whoever wrote them (a local edit, a pulled
/// page, a push outcome, a resolution, a purge).
///
/// - **Nothing is missed.** The observer registers before it reads the first result, so a
///   transaction committed after the first `next()` began is either in that result or followed
///   by another one.
/// - **Latest value, coalesced.** The query runs again when the consumer asks for the next
///   result, not once per transaction: however many transactions commit while the consumer is
///   busy, it gets one result, read after the newest of them, never a backlog of stale ones. A
///   result equal to the previous one is not yielded again. The pages of a pull and the outcomes
///   of a push wake observers once, when the pull or push ends, so a 100,000-record pull yields
///   one result, not one per page; local edits made meanwhile still wake them at once.
/// - **Only its table.** Transactions that change other tables do not run the query again.
/// - **Cancellation releases everything.** Cancelling the task that iterates ends the sequence
///   (`next()` returns `nil`) and unregisters the observer at once; so do closing the context and
///   releasing the iterator.
///
/// The query runs on the consumer's task, inside `next()`, with the store's synchronous
/// ``LocalStore/read(_:)``; writers only set a flag. A store error ends the iteration by throwing.
/// Only writes made through the context (``SyncTable``, push, pull, purge, resolve) are seen;
/// a write straight to the ``LocalStore`` is not.
public struct QueryObservation: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = QueryResult

    /// The query observed.
    public let query: Query
    let context: SyncContext

    /// Starts observing: the first `next()` registers and reads the current result.
    public func makeAsyncIterator() -> Iterator {
        Iterator(query: query, context: context)
    }

    /// Yields the current result, then fresh ones.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let query: Query
        let context: SyncContext
        var registration: Registration?
        var last: QueryResult?
        var ended = false

        init(query: Query, context: SyncContext) {
            self.query = query
            self.context = context
        }

        /// The current result on the first call; afterwards the next result that differs from
        /// the last one, read after a transaction changed the table. `nil` once the observation
        /// ended (task cancelled, context closed).
        public mutating func next() async throws -> QueryResult? {
            guard !ended else { return nil }
            let hub = context.changeHub
            guard let registration else {
                guard let id = hub.addObserver(table: query.table) else { return finish() }
                registration = Registration(hub: hub, id: id)
                if Task.isCancelled { return finish() }
                return try read()
            }
            while true {
                guard await hub.waitForChange(observer: registration.id), !Task.isCancelled else { return finish() }
                let previous = last
                let result = try read()
                if result != previous { return result }
            }
        }

        /// Runs the query; an error ends the observation.
        private mutating func read() throws -> QueryResult {
            do {
                let result = try context.store.read(query)
                last = result
                return result
            } catch {
                _ = finish()
                throw error
            }
        }

        private mutating func finish() -> QueryResult? {
            ended = true
            registration = nil
            return nil
        }
    }

    /// An observer's registration, removed when its iterator goes away.
    final class Registration: Sendable {
        let hub: ChangeHub
        let id: Int

        init(hub: ChangeHub, id: Int) {
            self.hub = hub
            self.id = id
        }

        deinit {
            hub.removeObserver(id)
        }
    }
}

extension SyncContext {
    /// A feed of the context's committed transactions: which app-table ids each changed and
    /// what kind of write it was (see ``ChangeFeed``).
    ///
    /// ```swift
    /// for await change in context.changes() {
    ///     print(change.origin, change.ids(in: "todo") ?? "many")
    /// }
    /// ```
    ///
    /// - Parameter bufferLimit: how many unread change sets the feed keeps (1 or more; values
    ///   below 1 are taken as 1). A consumer further behind gets the oldest ones merged (see
    ///   ``ChangeSet``), so memory stays bounded and no changed table is ever left out.
    public func changes(bufferLimit: Int = 256) -> ChangeFeed {
        ChangeFeed(subscription: ChangeFeed.Subscription(hub: changeHub, limit: max(1, bufferLimit)))
    }

    /// How many query observers and change feeds are registered (for tests: cancelling their
    /// tasks must bring both back to zero).
    package var observationCounts: (observers: Int, feeds: Int) { changeHub.counts }

    /// How many times observers were woken so far (for tests: a transaction wakes one per
    /// observer of a table it changed, none for other tables).
    package var observerWakeCount: Int { changeHub.wakeCount }
}

extension SyncTable {
    /// Observes a query on this table (`nil` for every item): its current result at once, then
    /// a fresh result after each committed change to the table (see ``QueryObservation``).
    ///
    /// ```swift
    /// for try await result in try todo.observe(Query(table: "todo", orderBy: [SortKey("text")])) {
    ///     render(result.items)
    /// }
    /// ```
    ///
    /// Throws ``OfflineSyncError/Code-swift.struct/invalidQuery`` when the query is on another
    /// table or does not fit the table's schema.
    public func observe(_ query: Query? = nil) throws -> QueryObservation {
        let query = query ?? Query(table: name)
        guard query.table == name else {
            throw OfflineSyncError(.invalidQuery, "a query on '\(query.table)' was given to observe table '\(name)'")
        }
        try query.validate(against: try context.store.schema.requireTable(name))
        return QueryObservation(query: query, context: context)
    }
}
