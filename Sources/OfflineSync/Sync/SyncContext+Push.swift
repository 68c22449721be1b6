extension SyncContext {
    /// Sends every queued operation, across all tables, in queue order.
    ///
    /// Each operation goes through `handler` (default: the context's ``pushHandler``). On
    /// success the operation and its error are removed and the server's copy (new `version`,
    /// `updatedAt`) replaces the local item — unless the item was edited during the push, in
    /// which case only its system properties are refreshed so the new edit is sent with the
    /// right `If-Match`. A 404 answer to a delete counts as done. Other failures are recorded
    /// as ``OperationError``s and the push goes on.
    ///
    /// - Returns: the operations completed and the errors recorded.
    /// - Throws: ``PushFailure`` when the network, a 401, the store, cancellation or the handler
    ///   stopped the push; the queue is intact (the operation in flight is marked attempted).
    @discardableResult
    public func push(handler: (any PushHandler)? = nil, progress: SyncProgressHandler? = nil) async throws -> PushResult {
        try await gate.run { try await pushHoldingGate(handler: handler ?? pushHandler, progress: progress) }
    }

    func pushHoldingGate(handler: any PushHandler, progress: SyncProgressHandler?) async throws -> PushResult {
        var result = PushResult(status: .complete, completedCount: 0, errors: [])
        func abort(_ status: PushStatus, _ error: any Error) -> PushFailure {
            result.status = status
            return PushFailure(result: result, message: "\(error)")
        }
        /// A store failure after the operation was sent: end its flight (folding in an edit made
        /// meanwhile) if the store still answers, and abort.
        func storeFailure(_ operation: QueuedOperation, _ error: any Error) -> PushFailure {
            try? release(operation)
            return abort(.abortedByStore, error)
        }
        typealias C = SystemTables.OperationColumn
        let total: Int
        do { total = try pendingOperationCount() } catch { throw abort(.abortedByStore, error) }
        var after = Int64.min
        var handled = 0
        while true {
            let batch: [QueuedOperation]
            do {
                batch = try store.read(Query(table: SystemTables.operations,
                                             filter: .comparison(.column(C.sequence), .gt, .literal(.int(after))),
                                             orderBy: [SortKey(C.sequence)], top: 2048)).items.map { try QueuedOperation(row: $0, schema: queue.schema) }
            } catch {
                throw abort(.abortedByStore, error)
            }
            if batch.isEmpty { break }
            for (index, queued) in batch.enumerated() {
                after = queued.sequence
                if Task.isCancelled { throw abort(.cancelled, CancellationError()) }
                if index % SyncContext.attemptedChunk == 0 {
                    do { try markAttempted(batch[index..<min(batch.count, index + SyncContext.attemptedChunk)]) } catch { throw abort(.abortedByStore, error) }
                }
                let started: (operation: QueuedOperation, item: Item?)?
                do {
                    started = try begin(queued)
                } catch {
                    queue.inFlight.withLock { $0 = nil }
                    throw abort(.abortedByStore, error)
                }
                guard let (operation, item) = started else { continue }
                defer {
                    handled += 1
                    progress?(SyncProgress(phase: .push, table: operation.table, completed: handled, total: max(total, handled)))
                }
                if operation.kind != .delete && item == nil {
                    let missing = RemoteError(.server, message: "the queue holds a \(operation.kind.rawValue) of '\(operation.itemId)' but table '\(operation.table)' has no such item")
                    do { result.errors += try record(missing, reason: "localItemMissing", for: operation, item: nil) } catch { throw storeFailure(operation, error) }
                    continue
                }
                let outcome: PushOutcome
                do {
                    outcome = try await handler.push(PushOperation(kind: operation.kind, table: operation.table, itemId: operation.itemId,
                                                                   item: item, sequence: operation.sequence, remote: remote))
                } catch let error as RemoteError {
                    if error.abortsPush {
                        try? release(operation)
                        let status: PushStatus = switch error.kind {
                        case .authentication: .abortedByAuthentication
                        case .cancelled: .cancelled
                        default: .abortedByNetwork
                        }
                        throw abort(status, error)
                    }
                    if operation.kind == .delete && error.kind == .notFound {
                        do { try finish(operation, .pushed(nil)) } catch { throw storeFailure(operation, error) }
                        result.completedCount += 1
                    } else {
                        do { result.errors += try record(error, reason: "\(error.kind)", for: operation, item: item) } catch { throw storeFailure(operation, error) }
                    }
                    continue
                } catch is CancellationError {
                    try? release(operation)
                    throw abort(.cancelled, CancellationError())
                } catch {
                    try? release(operation)
                    throw abort(.abortedByHandler, error)
                }
                do { try finish(operation, outcome) } catch { throw storeFailure(operation, error) }
                result.completedCount += 1
            }
        }
        return result
    }

    /// How many operations are marked attempted in one transaction just before they are sent.
    static let attemptedChunk = 64

    /// Marks the next operations attempted in one transaction, so that sending each one needs
    /// no write of its own. Marking early is on the safe side: an attempted insert followed by a
    /// local delete queues a delete (answered 404 if the insert never arrived) instead of
    /// vanishing.
    private func markAttempted(_ operations: ArraySlice<QueuedOperation>) throws {
        guard operations.contains(where: { $0.state == .pending }) else { return }
        try store.write { transaction in
            for queued in operations where queued.state == .pending {
                guard var operation = try queue.operation(table: queued.table, itemId: queued.itemId, slot: .primary, in: transaction),
                      operation.id == queued.id, operation.sequence == queued.sequence, operation.state == .pending else { continue }
                operation.state = .attempted
                try transaction.upsert([operation.row()], into: SystemTables.operations, origin: .local)
            }
        }
    }

    /// Re-reads the operation and its item and marks it in flight (and attempted, if it is not
    /// yet), in one transaction.
    private func begin(_ queued: QueuedOperation) throws -> (QueuedOperation, Item?)? {
        try store.write { transaction in
            guard var operation = try queue.operation(table: queued.table, itemId: queued.itemId, slot: .primary, in: transaction),
                  operation.id == queued.id, operation.sequence == queued.sequence else { return nil }
            let item = operation.kind == .delete ? operation.item : try transaction.lookup(table: operation.table, id: operation.itemId)
            if operation.state == .pending {
                operation.state = .attempted
                try transaction.upsert([operation.row()], into: SystemTables.operations, origin: .local)
            }
            queue.inFlight.withLock { $0 = operation.id }
            return (operation, item)
        }
    }

    /// Applies the outcome of a pushed operation and ends its flight, in one transaction.
    private func finish(_ operation: QueuedOperation, _ outcome: PushOutcome) throws {
        defer { queue.inFlight.withLock { $0 = nil } }
        try store.write { transaction in
            switch outcome {
            case .pushed(let server):
                let followUp = try queue.complete(operation, in: transaction)
                if operation.kind != .delete, let server {
                    try storeServerCopy(server, of: operation, followUp: followUp, in: transaction)
                }
            case .resolved(let resolution):
                try apply(resolution, to: operation, serverItem: nil, in: transaction)
            }
            queue.inFlight.withLock { $0 = nil }
        }
    }

    /// The server's copy replaces the local item, unless the item was edited during the push:
    /// then only its system properties are taken, so the next push sends the new `version`.
    private func storeServerCopy(_ server: Item, of operation: QueuedOperation, followUp: QueuedOperation?,
                                 in transaction: any StoreTransaction) throws {
        guard server.id == operation.itemId else {
            throw OfflineSyncError(.invalidValue, "the server answered the \(operation.kind.rawValue) of '\(operation.itemId)' in '\(operation.table)' with item '\(server.id)'")
        }
        guard var followUp else {
            try transaction.upsert([server], into: operation.table, origin: .server)
            return
        }
        func refreshed(_ item: Item) -> Item {
            var item = item
            for property in [SystemProperty.version, .createdAt, .updatedAt] {
                item.values[property.rawValue] = server.values[property.rawValue]
            }
            return item
        }
        if followUp.kind == .delete {
            followUp.item = followUp.item.map(refreshed)
            try transaction.upsert([followUp.row()], into: SystemTables.operations, origin: .local)
        } else if let local = try transaction.lookup(table: operation.table, id: operation.itemId) {
            try transaction.upsert([refreshed(local)], into: operation.table, origin: .local)
        }
    }

    /// Records a failure of `operation` as an operation error and ends its flight.
    private func record(_ error: RemoteError, reason: String, for operation: QueuedOperation, item: Item?) throws -> [OperationError] {
        defer { queue.inFlight.withLock { $0 = nil } }
        return try store.write { transaction in
            defer { queue.inFlight.withLock { $0 = nil } }
            guard let settled = try queue.settle(operation, in: transaction) else { return [] }
            let recorded = OperationError(operationId: settled.id, sequence: settled.sequence, operationVersion: settled.version,
                                          kind: operation.kind, table: operation.table, itemId: operation.itemId,
                                          status: error.status, reason: reason, message: error.message, item: item,
                                          serverItem: error.serverItem, createdAt: .now())
            try transaction.upsert([recorded.row()], into: SystemTables.errors, origin: .local)
            return [recorded]
        }
    }

    /// Ends the flight of an operation whose push was aborted; the queue keeps it.
    private func release(_ operation: QueuedOperation) throws {
        defer { queue.inFlight.withLock { $0 = nil } }
        try store.write { transaction in
            try queue.settle(operation, in: transaction)
            queue.inFlight.withLock { $0 = nil }
        }
    }
}
