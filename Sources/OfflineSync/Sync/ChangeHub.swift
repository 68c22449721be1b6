import Synchronization

/// Where a ``SyncContext`` announces its committed transactions: the change feeds
/// (``SyncContext/changes(bufferLimit:)``) and the query observers (``SyncTable/observe(_:)``).
///
/// Threading model: every write of the context goes through ``SyncContext/write(_:deferringObservers:_:)``,
/// which records the app rows its transaction touches and, once the store has committed it and
/// before `write` returns, hands the change set to ``publish(_:changedIds:deferringObservers:)``.
/// Publishing only appends to buffers and sets flags under one lock, then resumes waiting
/// consumers: it never runs a consumer's code or a query on the writer's thread. Consumers do
/// their work (reading the store again, for an observer) in their own task, when they ask for the
/// next element.
final class ChangeHub: Sendable {
    /// A change feed's subscription: the change sets it has not read yet.
    struct Feed {
        var pending: [ChangeSet] = []
        var limit: Int
        var waiter: CheckedContinuation<ChangeSet?, Never>?
    }

    /// A query observer: one table, and whether a commit touched it since the observer last read.
    struct Observer {
        var table: String
        var dirty = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    struct State {
        var sequence: UInt64 = 0
        var nextId = 0
        var feeds: [Int: Feed] = [:]
        var observers: [Int: Observer] = [:]
        /// Tables whose observers wait for the end of the running push or pull to be woken.
        var held: Set<String> = []
        var closed = false
        /// How many times an observer was woken (or marked), for tests.
        var wakeCount = 0
    }

    private let state = Locked(State())

    // MARK: Publishing

    /// Announces a committed transaction. Feeds get the change set at once; observers of the
    /// tables changed are woken at once, or when ``releaseHeld()`` is called when
    /// `deferringObservers` (the pages of a pull and the outcomes of a push, so a long pull wakes
    /// an observer once, not once per page).
    /// `changedIds` may lack tables (or be empty) when no feed was registered as the transaction
    /// began: then no ids were recorded, and a feed registered meanwhile gets the table without ids.
    func publish(
        _ origin: ChangeOrigin, tables: Set<String>, changedIds: [String: Set<String>], deferringObservers: Bool
    ) {
        guard !tables.isEmpty else { return }
        var feedWaiters: [(CheckedContinuation<ChangeSet?, Never>, ChangeSet)] = []
        var observerWaiters: [CheckedContinuation<Bool, Never>] = []
        state.withLock { state in
            state.sequence += 1
            let changeSet = ChangeSet(
                sequence: state.sequence, origin: origin, tables: tables, changedIds: changedIds)
            for id in Array(state.feeds.keys) {
                if let waiter = state.feeds[id]!.waiter {
                    state.feeds[id]!.waiter = nil
                    feedWaiters.append((waiter, changeSet))
                    continue
                }
                state.feeds[id]!.pending.append(changeSet)
                if state.feeds[id]!.pending.count > state.feeds[id]!.limit {
                    // Too far behind: fold the two oldest together, so memory stays bounded.
                    let oldest = state.feeds[id]!.pending.removeFirst()
                    state.feeds[id]!.pending[0] = {
                        var merged = oldest
                        merged.merge(state.feeds[id]!.pending[0])
                        return merged
                    }()
                }
            }
            if deferringObservers {
                state.held.formUnion(tables)
            } else {
                observerWaiters = Self.wake(&state) { tables.contains($0) }
            }
        }
        for (waiter, changeSet) in feedWaiters { waiter.resume(returning: changeSet) }
        for waiter in observerWaiters { waiter.resume(returning: true) }
    }

    /// Wakes the observers of every table changed by deferred writes (called when a push or a
    /// pull ends, however it ends).
    func releaseHeld() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard !state.held.isEmpty else { return [] }
            let held = state.held
            state.held = []
            return Self.wake(&state) { held.contains($0) }
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Marks the observers of matching tables dirty and takes the continuations of those waiting.
    private static func wake(_ state: inout State, _ matches: (String) -> Bool) -> [CheckedContinuation<Bool, Never>] {
        var waiters: [CheckedContinuation<Bool, Never>] = []
        for id in Array(state.observers.keys) where matches(state.observers[id]!.table) {
            state.wakeCount += 1
            if let waiter = state.observers[id]!.waiter {
                // The waiting consumer takes the change now; no mark is left behind.
                state.observers[id]!.waiter = nil
                waiters.append(waiter)
            } else {
                state.observers[id]!.dirty = true
            }
        }
        return waiters
    }

    /// Ends every feed and observer (the context was closed).
    func finishAll() {
        let (feeds, observers) = state.withLock { state in
            state.closed = true
            let feeds = state.feeds.values.compactMap(\.waiter)
            let observers = state.observers.values.compactMap(\.waiter)
            state.feeds = [:]
            state.observers = [:]
            return (feeds, observers)
        }
        for waiter in feeds { waiter.resume(returning: nil) }
        for waiter in observers { waiter.resume(returning: false) }
    }

    // MARK: Change feeds

    /// Whether any feed is registered (a write records changed ids only then).
    var hasFeeds: Bool {
        state.withLock { !$0.feeds.isEmpty }
    }

    /// Registers a feed; it receives every change set published from now on. `nil` once the
    /// context is closed.
    func addFeed(limit: Int) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.nextId += 1
            state.feeds[state.nextId] = Feed(limit: limit)
            return state.nextId
        }
    }

    /// The feed's next change set, waiting for one; `nil` once it ended (removed, the context
    /// closed, or the waiting task cancelled).
    func nextChangeSet(feed id: Int) async -> ChangeSet? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ChangeSet?, Never>) in
                let ready = state.withLock { state -> ChangeSet?? in
                    guard var feed = state.feeds[id] else { return .some(nil) }
                    if !feed.pending.isEmpty {
                        let first = feed.pending.removeFirst()
                        state.feeds[id] = feed
                        return .some(first)
                    }
                    feed.waiter = continuation
                    state.feeds[id] = feed
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            removeFeed(id)
        }
    }

    /// Ends a feed and drops its buffer.
    func removeFeed(_ id: Int) {
        let waiter = state.withLock { state in state.feeds.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: nil)
    }

    // MARK: Observers

    /// Registers an observer of `table` (before it reads, so no commit after this call is missed).
    /// `nil` once the context is closed.
    func addObserver(table: String) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.nextId += 1
            state.observers[state.nextId] = Observer(table: table)
            return state.nextId
        }
    }

    /// Waits until a commit touched the observer's table since its last call, and clears the mark.
    /// `false` once the observer ended (removed, the context closed, or the waiting task cancelled).
    func waitForChange(observer id: Int) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready = state.withLock { state -> Bool? in
                    guard var observer = state.observers[id] else { return false }
                    if observer.dirty {
                        observer.dirty = false
                        state.observers[id] = observer
                        return true
                    }
                    observer.waiter = continuation
                    state.observers[id] = observer
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            removeObserver(id)
        }
    }

    /// Ends an observer.
    func removeObserver(_ id: Int) {
        let waiter = state.withLock { state in state.observers.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: false)
    }

    // MARK: Inspection (tests)

    /// How many observers and feeds are registered.
    var counts: (observers: Int, feeds: Int) {
        state.withLock { ($0.observers.count, $0.feeds.count) }
    }

    /// How many times an observer has been woken (or marked changed) so far: a commit touching
    /// the tables of three observers adds three, one touching none adds nothing.
    var wakeCount: Int {
        state.withLock { $0.wakeCount }
    }
}

/// The transaction a ``SyncContext`` write hands its body: the store's own, recording which app
/// rows it touches. Reads go straight through.
struct RecordingTransaction: StoreTransaction {
    /// The app tables touched, and their ids when a feed wants them (a class, so copies of the
    /// transaction share it).
    final class Record {
        let keepsIds: Bool
        var tables: Set<String> = []
        var changedIds: [String: Set<String>] = [:]

        init(keepsIds: Bool) {
            self.keepsIds = keepsIds
        }

        func add(_ ids: @autoclosure () -> some Sequence<String>, table: String) {
            guard !table.hasPrefix("__") else { return }
            tables.insert(table)
            if keepsIds { changedIds[table, default: []].formUnion(ids()) }
        }

        func reset() {
            tables = []
            changedIds = [:]
        }
    }

    let base: any StoreTransaction
    let record: Record

    func read(_ query: Query) throws -> QueryResult { try base.read(query) }

    func lookup(table: String, id: String) throws -> Item? { try base.lookup(table: table, id: id) }

    func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
        try base.upsert(items, into: table, origin: origin)
        if !items.isEmpty { record.add(items.map(\.id), table: table) }
    }

    func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
        let present = try base.insertNew(items, into: table, origin: origin)
        guard items.count > present.count else { return present }
        if present.isEmpty {
            record.add(items.map(\.id), table: table)
        } else {
            // An id given twice was inserted once and reported once: count them off.
            var reported: [IdKey: Int] = [:]
            for id in present { reported[IdKey(id), default: 0] += 1 }
            var inserted: [String] = []
            for item in items {
                let key = IdKey(item.id)
                if let count = reported[key], count > 0 {
                    reported[key] = count - 1
                } else {
                    inserted.append(item.id)
                }
            }
            record.add(inserted, table: table)
        }
        return present
    }

    func delete(ids: [String], from table: String) throws {
        try base.delete(ids: ids, from: table)
        if !ids.isEmpty { record.add(ids, table: table) }
    }

    @discardableResult
    func delete(matching query: Query) throws -> Int {
        guard !query.table.hasPrefix("__"), record.keepsIds else {
            let removed = try base.delete(matching: query)
            if removed > 0 { record.add([], table: query.table) }
            return removed
        }
        var idsOnly = query
        idsOnly.selection = []
        idsOnly.includeTotalCount = false
        let ids = try base.read(idsOnly).items.map(\.id)
        let removed = try base.delete(matching: query)
        if removed > 0 { record.add(ids, table: query.table) }
        return removed
    }
}
