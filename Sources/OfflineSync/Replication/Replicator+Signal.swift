/// How the replicator learns of the server's changes: the change signal while the server has one,
/// polling otherwise.
extension Replicator {
    /// Listens to the signal, reconnecting after failures, until the task is cancelled; polls
    /// instead when there is no signal or the server has no change stream.
    func listenForChanges() async {
        guard let signal else {
            await poll()
            return
        }
        var failures = 0
        while !Task.isCancelled {
            await waitWhilePaused()
            if Task.isCancelled { return }
            broadcast.update { $0.connection = .connecting }
            let outcome = await listenUntilPaused(signal)
            work.withLock { $0.streamUp = false }
            switch outcome {
            case .paused, .cancelled:
                continue
            case .ended(let connected):
                // The server closed the stream: connect again, after a pause if it keeps doing so
                // before accepting a subscription.
                failures = connected ? 0 : failures + 1
                broadcast.update { $0.connection = .connecting }
                if failures > 0 { await sleepUnlessPaused(options.backoff.delay(afterFailures: failures)) }
            case .failed(let error as ChangeSignalError, _) where error.kind == .unsupported:
                broadcast.update { status in
                    status.changeSource = .polling
                    status.connection = .connecting
                }
                await poll()
                return
            case .failed(let error, let connected):
                failures = connected ? 1 : failures + 1
                let (kind, retryAfter) = Self.classify(error)
                let delay = options.backoff.delay(afterFailures: failures, retryAfter: retryAfter)
                broadcast.update { status in
                    status.connection = .offline
                    status.lastError = ReplicatorError(kind, message: "\(error)", retryIn: delay)
                }
                await sleepUnlessPaused(delay)
            }
        }
    }

    private enum ListenOutcome: Sendable {
        /// The server ended the stream; `connected` when it had accepted the subscription.
        case ended(connected: Bool)
        case failed(any Error, connected: Bool)
        case paused
        case cancelled
    }

    /// Runs one subscription until it ends, fails, or a pause closes it.
    private func listenUntilPaused(_ signal: any ChangeSignal) async -> ListenOutcome {
        await withTaskGroup(of: ListenOutcome.self) { group in
            group.addTask {
                let connected = Locked(false)
                do {
                    try await signal.listen(to: self.tables) { event in
                        if event == .connected { connected.withLock { $0 = true } }
                        self.receive(event)
                    }
                    return Task.isCancelled ? .cancelled : .ended(connected: connected.withLock { $0 })
                } catch {
                    return Task.isCancelled ? .cancelled : .failed(error, connected: connected.withLock { $0 })
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    let generation = self.wakeups.generation
                    if self.isPaused { return .paused }
                    await self.wakeups.wait(after: generation)
                }
                return .cancelled
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
    }

    /// Handles one event of the signal.
    private func receive(_ event: ChangeSignalEvent) {
        switch event {
        case .connected:
            work.withLock { $0.streamUp = true }
            broadcast.update { status in
                status.connection = .connected
                status.changeSource = .stream
                if status.lastError?.kind == .network { status.lastError = nil }
            }
            // Whatever changed while disconnected: pull everything, push what is queued.
            requestPull(tables, clearingBackoff: true)
            requestPush()
        case .changed(let table, let updatedAt):
            guard !alreadyPulled(table, through: updatedAt) else { return }
            requestPull([table])
        }
    }

    /// Whether every incremental pull of `table` already reached `updatedAt` (its delta token is
    /// there or later), so the announced change is already stored.
    private func alreadyPulled(_ table: String, through updatedAt: Timestamp?) -> Bool {
        guard let updatedAt else { return false }
        let requests = pulls.filter { $0.table == table }
        guard !requests.isEmpty else { return true }
        return requests.allSatisfy { request in
            guard let queryId = request.queryId,
                let token = try? context.deltaToken(table: table, queryId: queryId)
            else { return false }
            return token.updatedAt >= updatedAt
        }
    }

    /// Pulls every table each poll interval (and at once), until the task is cancelled.
    private func poll() async {
        broadcast.update { $0.changeSource = .polling }
        while !Task.isCancelled {
            await waitWhilePaused()
            requestPull(tables)
            await sleepUnlessPaused(options.pollInterval)
        }
    }

    /// Returns once no pause is in force (or the task is cancelled).
    private func waitWhilePaused() async {
        while !Task.isCancelled {
            let generation = wakeups.generation
            if !isPaused { return }
            await wakeups.wait(after: generation)
        }
    }

    /// Sleeps `duration`, or less when a pause begins or the task is cancelled.
    private func sleepUnlessPaused(_ duration: Duration) async {
        let deadline = clock.now.advanced(by: duration)
        while !Task.isCancelled, clock.now < deadline {
            let generation = wakeups.generation
            if isPaused { return }
            await wakeups.wait(after: generation, timeout: clock.now.duration(to: deadline))
        }
    }
}
