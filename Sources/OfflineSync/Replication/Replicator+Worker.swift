/// The worker: takes the work asked for, one job at a time, pushes and pulls, and schedules the
/// back-off after a failure.
extension Replicator {
    /// What the worker does next.
    private enum Next {
        case run(Job)
        case wait(until: ContinuousClock.Instant?)
    }

    /// Runs jobs until the task is cancelled.
    func performWork() async {
        while !Task.isCancelled {
            let generation = wakeups.generation
            switch takeJob() {
            case .run(let job):
                await perform(job)
            case .wait(let deadline):
                await wakeups.wait(after: generation, timeout: deadline.map { clock.now.duration(to: $0) })
            }
        }
    }

    /// The work that can start now, or how long to wait.
    private func takeJob() -> Next {
        let now = clock.now
        return work.withLock { work -> Next in
            if work.paused { return .wait(until: nil) }
            let asked = !work.waiters.isEmpty
            if !asked, let retryAt = work.retryAt, retryAt > now { return .wait(until: retryAt) }
            let pushReady = work.push && (asked || work.pushDue.map { $0 <= now } ?? true)
            guard pushReady || !work.tables.isEmpty || asked else {
                return .wait(until: work.push ? work.pushDue : nil)
            }
            let job = Job(push: pushReady, tables: work.tables, waiters: work.waiters)
            if pushReady {
                work.push = false
                work.pushDue = nil
            }
            work.tables = []
            work.waiters = []
            return .run(job)
        }
    }

    /// Pushes what is queued, then pulls the job's tables; after a
    /// failure puts back what is left and schedules the back-off.
    private func perform(_ job: Job) async {
        var failure: (any Error)?
        var pushLeft = job.push
        var tablesLeft = job.tables
        do {
            // Whatever is queued goes, whether an edit asked or not; an empty queue costs no push.
            if try context.pendingOperationCount() > 0 {
                try await push()
            }
            pushLeft = false
            for table in self.tables where job.tables.contains(table) {
                do {
                    try await pull(table)
                    tablesLeft.remove(table)
                } catch let refused as PushFailure where refused.status == .complete {
                    // Operations of this table were refused: its pull waits for the app to settle
                    // them (a resolution asks for it again); the other tables go on.
                    tablesLeft.remove(table)
                    failure = failure ?? refused
                }
            }
        } catch {
            failure = error
        }
        if Task.isCancelled {
            for waiter in job.waiters { waiter.resume(throwing: CancellationError()) }
            return
        }
        let pending = try? context.pendingOperationCount()
        let refused = try? context.operationErrors().count
        guard let failure else {
            work.withLock { work in
                work.failures = 0
                work.retryAt = nil
            }
            // Connected means the change stream is up, or (polling) a request just succeeded.
            let connected = work.withLock { !$0.paused && (signal == nil || $0.streamUp) }
            broadcast.update { status in
                if let pending { status.pendingOperationCount = pending }
                if let refused { status.operationErrorCount = refused }
                if status.lastError?.kind != .refusedOperations || refused == 0 { status.lastError = nil }
                if connected || status.changeSource == .polling { status.connection = .connected }
            }
            for waiter in job.waiters { waiter.resume() }
            return
        }
        let (kind, retryAfter) = Self.classify(failure)
        var retryIn: Duration?
        if kind != .refusedOperations {
            let failures = work.withLock { work -> Int in
                work.failures += 1
                return work.failures
            }
            let delay = options.backoff.delay(afterFailures: failures, retryAfter: retryAfter)
            retryIn = delay
            let retryAt = clock.now.advanced(by: delay)
            work.withLock { work in
                work.retryAt = retryAt
                if pushLeft { work.push = true }
                work.tables.formUnion(tablesLeft)
            }
        }
        broadcast.update { status in
            if let pending { status.pendingOperationCount = pending }
            if let refused { status.operationErrorCount = refused }
            status.lastError = ReplicatorError(kind, message: "\(failure)", retryIn: retryIn)
            if kind == .network { status.connection = .offline }
        }
        for waiter in job.waiters { waiter.resume(throwing: failure) }
    }

    /// Pushes the queue, reporting progress; operations the handler left as errors are counted,
    /// not thrown.
    private func push() async throws {
        broadcast.update { status in
            status.isUploading = true
            status.uploadProgress = nil
        }
        defer {
            broadcast.update { status in
                status.isUploading = false
                status.uploadProgress = nil
            }
        }
        let result = try await context.push { progress in
            self.broadcast.update { $0.uploadProgress = progress }
        }
        if !result.errors.isEmpty {
            let count = (try? context.operationErrors().count) ?? result.errors.count
            broadcast.update { status in
                status.operationErrorCount = count
                status.lastError = ReplicatorError(
                    .refusedOperations,
                    message:
                        "the server refused \(result.errors.count) queued operations; settle them with SyncContext.operationErrors() and resolve(_:_:), or a push handler that resolves conflicts"
                )
            }
        }
    }

    /// Pulls every request of `table`, then notes the time.
    private func pull(_ table: String) async throws {
        broadcast.update { status in
            status.isDownloading = true
            status.downloadProgress = SyncProgress(phase: .pull, table: table, completed: 0, total: nil)
        }
        defer {
            broadcast.update { status in
                status.isDownloading = false
                status.downloadProgress = nil
            }
        }
        let pullOptions = PullOptions(pageSize: options.pageSize, includeDeleted: options.includeDeleted) { progress in
            self.broadcast.update { $0.downloadProgress = progress }
        }
        for request in pulls where request.table == table {
            try await context.pull(request, options: pullOptions)
        }
        let now = Timestamp.now()
        broadcast.update { $0.lastSyncedAt[table] = now }
    }

    /// The kind of a failure and the pause its server asked for.
    static func classify(_ error: any Error) -> (ReplicatorError.Kind, Duration?) {
        switch error {
        case let failure as PushFailure:
            switch failure.status {
            case .abortedByNetwork, .cancelled: return (.network, failure.retryAfter)
            case .abortedByAuthentication: return (.authentication, failure.retryAfter)
            case .abortedByStore: return (.store, nil)
            case .complete: return (.refusedOperations, nil)
            case .abortedByHandler: return (.server, nil)
            }
        case let remote as RemoteError:
            switch remote.kind {
            case .network, .cancelled: return (.network, remote.retryAfter)
            case .authentication: return (.authentication, remote.retryAfter)
            default: return (.server, remote.retryAfter)
            }
        case let signal as ChangeSignalError:
            switch signal.kind {
            case .network: return (.network, signal.retryAfter)
            case .authentication: return (.authentication, signal.retryAfter)
            default: return (.server, signal.retryAfter)
            }
        case is OfflineSyncError, is any StoreFullError, is any StoreUnavailableError:
            return (.store, nil)
        default:
            return (.server, nil)
        }
    }
}
