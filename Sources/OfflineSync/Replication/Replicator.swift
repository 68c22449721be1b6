/// Keeps a ``SyncContext`` in sync with its remote by itself, for as long as ``run()`` runs: a
/// continuous replicator (Couchbase Lite's), or what PowerSync's `connect` and Realm's sync
/// sessions do.
///
/// ```swift
/// let replicator = Replicator(
///     context: context, pulls: [PullRequest(table: "todoitem", queryId: "all")],
///     signal: ChangeStream(configuration: remoteConfiguration))
/// let syncing = Task { try await replicator.run() }   // until cancelled
/// for await status in replicator.status { print(status) }
/// ```
///
/// While it runs, it:
/// - **pushes soon after local edits**: ``Options/pushDelay`` after an edit (edits made meanwhile
///   go in the same push, so a burst is one push), and whatever is queued when it starts;
/// - **pulls when the server announces a change** of a pulled table (``ChangeSignal``), and every
///   pulled table on each (re)connection of the signal, so a change announced while disconnected
///   is not missed; without a signal, or when the server has none, it **polls** every
///   ``Options/pollInterval``;
/// - **retries failures** (network, server, store, a credential the authentication hook could not
///   renew) after an exponential back-off with jitter (``RetryBackoff``), never sooner than the
///   server's `Retry-After`;
/// - leaves **conflicts** to the context's ``PushHandler``, as ``SyncContext/push(handler:progress:)``
///   does; operations the handler leaves as errors wait for the app (``ReplicatorStatus/operationErrorCount``);
/// - **publishes** its ``status`` as an `AsyncSequence` of snapshots.
///
/// It only calls the context's own ``SyncContext/push(handler:progress:)`` and
/// ``SyncContext/pull(_:options:)-([PullRequest],_)``, so nothing is lost or applied twice across a stop, a restart
/// or a killed process: the queue and the delta tokens commit with the data (see the "Sync" article).
/// The app may still call push and pull itself; they wait their turn behind the context's gate.
public final class Replicator: Sendable {
    /// The context kept in sync.
    public let context: SyncContext
    /// What is pulled: each table's query id and filter.
    public let pulls: [PullRequest]
    /// The server's change announcements; `nil` polls.
    public let signal: (any ChangeSignal)?
    /// The pacing.
    public let options: Options

    /// Work asked for and not yet taken by the worker.
    struct Work {
        var running = false
        var paused = false
        /// A push is wanted at `pushDue` (or at once when `nil` and `push`).
        var push = false
        var pushDue: ContinuousClock.Instant?
        /// Tables to pull.
        var tables: Set<String> = []
        /// Callers of ``syncNow()`` waiting for the next job to end.
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// No job starts before this (after a failure), unless ``syncNow()`` asks.
        var retryAt: ContinuousClock.Instant?
        var failures = 0
        /// Whether the change signal is connected (its `connected` event came, and it has not
        /// ended since).
        var streamUp = false
    }

    /// What the worker takes at once.
    struct Job {
        var push: Bool
        var tables: Set<String>
        var waiters: [CheckedContinuation<Void, any Error>]
    }

    let work = Locked(Work())
    let wakeups = Wakeups()
    let broadcast = StatusBroadcast()
    let clock = ContinuousClock()

    /// Creates a replicator; nothing happens until ``run()``.
    ///
    /// - Parameters:
    ///   - context: the context to keep in sync (its remote and push handler are used).
    ///   - pulls: the tables to pull, with their query ids (incremental pulls) and filters.
    ///   - signal: the server's change announcements, `nil` to poll.
    ///   - options: the pacing.
    public init(
        context: SyncContext, pulls: [PullRequest], signal: (any ChangeSignal)? = nil, options: Options = Options()
    ) {
        self.context = context
        self.pulls = pulls
        self.signal = signal
        self.options = options
    }

    /// The pulled tables, each once, in the order of ``pulls``.
    public var tables: [String] {
        var seen: Set<String> = []
        return pulls.map(\.table).filter { seen.insert($0).inserted }
    }

    /// The current snapshot, then every change, until the running ``run()`` returns (a sequence
    /// taken while none runs waits for the next one). A consumer slower than the changes gets the
    /// newest snapshot, not a backlog.
    public var status: AsyncStream<ReplicatorStatus> { broadcast.stream() }

    /// The current snapshot.
    public var currentStatus: ReplicatorStatus { broadcast.current }

    /// Keeps the context in sync until the task is cancelled, then returns (a push or pull under
    /// way stops as a cancelled one does: the queue is kept). Failures do not end it: they are
    /// retried and reported in ``status``.
    ///
    /// - Throws: ``OfflineSyncError`` `.invalidOperation` when the replicator is already running,
    ///   `.configuration` for an invalid pull request or page size.
    public func run() async throws {
        try validate()
        try work.withLock { work in
            guard !work.running else {
                throw OfflineSyncError(
                    .invalidOperation, "the replicator is already running; run it from one task at a time")
            }
            work = Work()
            work.running = true
            work.push = true
            work.tables = Set(tables)
        }
        broadcast.update { status in
            status.connection = .connecting
            status.isPaused = false
            status.pendingOperationCount = (try? context.pendingOperationCount()) ?? status.pendingOperationCount
            status.operationErrorCount = (try? context.operationErrors().count) ?? status.operationErrorCount
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.watchLocalEdits() }
            group.addTask { await self.listenForChanges() }
            await self.performWork()
            group.cancelAll()
        }
        let waiters = work.withLock { work in
            defer { work = Work() }
            return work.waiters
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
        broadcast.update { status in
            status.connection = .offline
            status.isPaused = false
            status.isUploading = false
            status.uploadProgress = nil
            status.isDownloading = false
            status.downloadProgress = nil
        }
        broadcast.finishAll()
    }

    /// Pushes and pulls every table now, without waiting for a signal, a poll or the end of a
    /// back-off, and returns when that round ends.
    ///
    /// - Throws: the round's failure (``PushFailure``, ``RemoteError``, a store's error);
    ///   ``OfflineSyncError`` `.invalidOperation` when the replicator is not running or is paused;
    ///   `CancellationError` when the run ends first.
    public func syncNow() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let refusal = work.withLock { work -> OfflineSyncError? in
                guard work.running else {
                    return OfflineSyncError(
                        .invalidOperation, "the replicator is not running; start run() in a task before syncNow()")
                }
                guard !work.paused else {
                    return OfflineSyncError(.invalidOperation, "the replicator is paused; call resume() before syncNow()")
                }
                work.push = true
                work.pushDue = nil
                work.tables.formUnion(tables)
                work.waiters.append(continuation)
                return nil
            }
            if let refusal {
                continuation.resume(throwing: refusal)
            } else {
                wakeups.notify()
            }
        }
    }

    /// Stops talking to the server: the change stream is closed and no push or pull starts (one
    /// under way finishes). Local edits keep queueing; ``resume()`` picks them up.
    public func pause() {
        work.withLock { $0.paused = true }
        broadcast.update { status in
            status.isPaused = true
            status.connection = .offline
        }
        wakeups.notify()
    }

    /// Undoes ``pause()``: reconnects, then pushes what was queued meanwhile and pulls every table.
    public func resume() {
        let wasPaused = work.withLock { work -> Bool in
            defer { work.paused = false }
            guard work.paused else { return false }
            work.push = true
            work.pushDue = nil
            work.tables.formUnion(tables)
            work.retryAt = nil
            return true
        }
        guard wasPaused else { return }
        broadcast.update { status in
            status.isPaused = false
            status.connection = .connecting
        }
        wakeups.notify()
    }

    private func validate() throws {
        guard options.pageSize >= 1 else {
            throw OfflineSyncError(
                .configuration, "the replicator's page size is \(options.pageSize); it must be 1 or more")
        }
        for request in pulls {
            _ = try context.table(request.table)
            if let queryId = request.queryId { try DeltaToken.validate(queryId: queryId) }
        }
    }

    // MARK: Asking for work

    /// Asks for a push `pushDelay` from now (sooner if one is already due).
    func requestPush() {
        let now = clock.now
        work.withLock { work in
            if !work.push {
                work.push = true
                work.pushDue = now.advanced(by: options.pushDelay)
            }
        }
        wakeups.notify()
    }

    /// Asks for pulls of `tables` (those the replicator pulls) at once.
    func requestPull(_ tables: some Sequence<String>, clearingBackoff: Bool = false) {
        let pulled = Set(self.tables)
        work.withLock { work in
            work.tables.formUnion(tables.filter { pulled.contains($0) })
            if clearingBackoff {
                work.retryAt = nil
                work.failures = 0
            }
        }
        wakeups.notify()
    }

    /// Whether a pause is in force.
    var isPaused: Bool { work.withLock { $0.paused } }

    // MARK: Local edits

    /// Asks for a push after each local edit (and after a resolution, which may queue an operation
    /// again), and keeps the status's pending count current.
    private func watchLocalEdits() async {
        for await change in context.changes() {
            if change.origins.contains(.localEdit) || change.origins.contains(.resolution) {
                requestPush()
                if change.origins.contains(.resolution) { requestPull(change.tables) }
            }
            let pending = try? context.pendingOperationCount()
            if let pending { broadcast.update { $0.pendingOperationCount = pending } }
        }
    }
}
