import Synchronization

extension SyncContext {
    /// Sends every queued operation, across all tables, in queue order.
    ///
    /// Each operation goes through `handler` (default: the context's ``pushHandler``). On
    /// success the operation and its error are removed and the server's copy (new `version`,
    /// `updatedAt`) replaces the local item — unless the item was edited during the push, in
    /// which case only its system properties are refreshed so the new edit is sent with the
    /// right `If-Match`. A 404 answer to a delete counts as done, and so does a 409 or 412
    /// answer whose server copy already holds the item as sent. Other failures are recorded
    /// as ``OperationError``s and the push goes on.
    ///
    /// Operations go out in chunks of up to 64: one transaction marks a chunk attempted and
    /// in flight and reads its items (an edit made from then on waits in the follow-up slot),
    /// the operations are sent in order, and one transaction commits their outcomes. With the
    /// default handler a chunk goes to the remote at once (``RemoteService/send(_:)``, one
    /// `$batch` request to a server that takes it); after the first chunk's answer, up to four
    /// chunks are on their way at a time, and while they are, the outcomes of the one answered
    /// before are committed, so the store, the client and the server work side by side. Chunks
    /// hold different items, so the order in which the server applies them changes nothing.
    /// Another handler sees the operations one by one, each chunk committed before the next
    /// begins. A crash before that commit loses nothing: the chunk's operations are still queued
    /// and attempted, and the next push sends again the ones whose remote call had succeeded, as
    /// the one-transaction-per-operation design did for its single operation in flight (a
    /// re-sent insert is answered 409 and a re-sent update 412 carrying the server's copy, which
    /// counts as done when it holds the item as sent, as it does after such a crash (otherwise
    /// the conflict is recorded as an error); a re-sent delete is answered 404, which counts as
    /// done).
    ///
    /// - Returns: the operations completed and the errors recorded.
    /// - Throws: ``PushFailure`` when the network, a 401, a server unavailable for now (429, 502,
    ///   503, 504: ``PushFailure/retryAfter`` says when to try again, if it did), the store,
    ///   cancellation or the handler stopped the push; the outcomes of the operations answered
    ///   before the stop (and of the chunks on their way beside the one that stopped) are
    ///   committed, the rest of the queue is intact (the operations sent without an answer are
    ///   marked attempted).
    @discardableResult
    public func push(handler: (any PushHandler)? = nil, progress: SyncProgressHandler? = nil) async throws -> PushResult
    {
        try await syncing { try await pushHoldingGate(handler: handler ?? pushHandler, progress: progress) }
    }

    /// The outcome of one sent operation, committed with the rest of its chunk.
    private enum Settlement: Sendable {
        /// The handler returned an outcome (a 404 answer to a delete is `.pushed(nil)`).
        case finished(QueuedOperation, PushOutcome)
        /// The remote refused the operation (or its item was missing): an operation error.
        case failed(QueuedOperation, RemoteError, reason: String, item: Item?)

        var operation: QueuedOperation {
            switch self {
            case .finished(let operation, _), .failed(let operation, _, _, _): operation
            }
        }
    }

    func pushHoldingGate(handler: any PushHandler, progress: SyncProgressHandler?) async throws -> PushResult {
        var result = PushResult(status: .complete, completedCount: 0, errors: [])
        func abort(_ status: PushStatus, _ error: any Error) -> PushFailure {
            result.status = status
            return PushFailure(result: result, message: "\(error)", retryAfter: (error as? RemoteError)?.retryAfter)
        }
        typealias C = SystemTables.OperationColumn
        let total: Int
        let erroredIds: Set<String>
        do {
            total = try pendingOperationCount()
            erroredIds = Set(try store.read(Query(table: SystemTables.errors, selection: ["id"])).items.map(\.id))
        } catch {
            throw abort(.abortedByStore, error)
        }
        var after = Int64.min
        var handled = 0
        while true {
            let batch: [QueuedOperation]
            let generation: UInt64
            do {
                // Read in a write transaction, so no edit is half done while the batch and the
                // queue's generation are taken (see `OperationQueue.generation`).
                (batch, generation) = try store.write { transaction in
                    let rows = try transaction.read(
                        Query(
                            table: SystemTables.operations,
                            filter: .comparison(.column(C.sequence), .gt, .literal(.int(after))),
                            orderBy: [SortKey(C.sequence)], top: 2048)
                    ).items
                    return (try rows.map(queue.decode), queue.generation.withLock { $0 })
                }
            } catch {
                throw abort(.abortedByStore, error)
            }
            guard let last = batch.last else { break }
            after = last.sequence
            let chunks = stride(from: 0, to: batch.count, by: SyncContext.pushChunk).map {
                batch[$0..<min(batch.count, $0 + SyncContext.pushChunk)]
            }
            func report(_ operation: QueuedOperation) {
                handled += 1
                progress?(
                    SyncProgress(phase: .push, table: operation.table, completed: handled, total: max(total, handled)))
            }
            let stop: Stop?
            if handler is DefaultPushHandler {
                stop = await sendAtOnce(chunks, readAt: generation, erroredIds: erroredIds, into: &result, report: report)
            } else {
                stop = await send(
                    chunks, through: handler, readAt: generation, erroredIds: erroredIds, into: &result, report: report)
            }
            if let stop { throw abort(stop.status, stop.error) }
        }
        return result
    }

    /// Why a push stopped: the status it ends with and the error behind it.
    private struct Stop {
        var status: PushStatus
        var error: any Error
    }

    /// How many chunks the default handler keeps on their way to the remote at once.
    ///
    /// Four: while one chunk's answers are committed and another chunk begun and sent, the chunks
    /// sent before are with the server, so the client's encoding, decoding and store work run
    /// beside the server's and the hops between the two overlap. Chunks touch different items
    /// (the queue holds one primary operation per item, and follow-ups wait for the next push),
    /// so the order in which the server applies them changes no outcome; each chunk's operations
    /// are applied in order. Measured over loopback (BENCHMARKS.md, "HTTP"): one chunk at a time
    /// used 1.1 of the machine's two cores, two 1.3, four 1.5; a crash re-sends at most the chunks
    /// on their way and the one being committed, each re-sent write counting as done.
    static let chunksInFlight = 4

    /// Pushes the chunks of one read of the queue with the default handler: each chunk is begun
    /// and goes to the remote at once (``RemoteService/send(_:)``), the first one alone and then
    /// up to ``chunksInFlight`` of them on their way together, and their outcomes are committed
    /// in queue order as they are answered. After a stop (or a store failure) nothing more is
    /// begun; the chunks on their way are still answered and their outcomes committed, and what
    /// was begun but not answered is released (queued, attempted, not in flight).
    private func sendAtOnce(
        _ chunks: [ArraySlice<QueuedOperation>], readAt generation: UInt64, erroredIds: Set<String>,
        into result: inout PushResult, report: (QueuedOperation) -> Void
    ) async -> Stop? {
        let remote = self.remote
        let schema = queue.schema
        typealias Answered = (chunk: [(operation: QueuedOperation, item: Item?)], sent: [Sent])
        return await withTaskGroup(of: (Int, Answered).self) { group -> Stop? in
            var stop: Stop?
            var answers: [Int: Answered] = [:]
            var launched = 0
            func launch() {
                guard stop == nil, launched < chunks.count else { return }
                let index = launched
                let chunk: [(operation: QueuedOperation, item: Item?)]
                do {
                    chunk = try begin(chunks[index], readAt: generation)
                } catch {
                    stop = Stop(status: .abortedByStore, error: error)
                    return
                }
                launched += 1
                group.addTask { (index, (chunk, await Self.send(chunk, to: remote, schema: schema))) }
            }
            // The first chunk goes alone: its answer tells whether the remote takes the push at
            // all (a refused credential, a server that is down) before a second one is sent.
            launch()
            var settled = 0
            while settled < launched {
                while answers[settled] == nil, let (index, answered) = await group.next() { answers[index] = answered }
                guard let (chunk, sent) = answers.removeValue(forKey: settled) else { break }
                settled += 1
                for ((operation, _), outcome) in zip(chunk, sent) {
                    if case .unsent = outcome { continue }
                    report(operation)
                }
                if let failure = settle(chunk, sent, erroredIds: erroredIds, into: &result) {
                    stop = stop ?? failure
                }
                while launched - settled < Self.chunksInFlight, launched < chunks.count, stop == nil { launch() }
            }
            return stop
        }
    }

    /// Pushes the chunks of one read of the queue through a handler other than the default: each
    /// chunk is begun, sent operation by operation and committed before the next one begins.
    private func send(
        _ chunks: [ArraySlice<QueuedOperation>], through handler: any PushHandler, readAt generation: UInt64,
        erroredIds: Set<String>, into result: inout PushResult, report: (QueuedOperation) -> Void
    ) async -> Stop? {
        for operations in chunks {
            let chunk: [(operation: QueuedOperation, item: Item?)]
            do { chunk = try begin(operations, readAt: generation) } catch {
                return Stop(status: .abortedByStore, error: error)
            }
            let sent = await send(chunk, through: handler, answered: report)
            if let stop = settle(chunk, sent, erroredIds: erroredIds, into: &result) { return stop }
        }
        return nil
    }

    /// Commits the outcomes of a chunk's answered operations and releases the ones not answered
    /// (queued, attempted, not in flight); returns the stop the chunk ran into, if any: the first
    /// operation that stopped the push, or the store failing to commit.
    private func settle(
        _ chunk: [(operation: QueuedOperation, item: Item?)], _ sent: [Sent], erroredIds: Set<String>,
        into result: inout PushResult
    ) -> Stop? {
        var settlements: [Settlement] = []
        var unsettled: [QueuedOperation] = []
        var stop: Stop?
        for (position, outcome) in sent.enumerated() {
            switch outcome {
            case .settled(let settlement): settlements.append(settlement)
            case .stopped(let status, let error):
                stop = stop ?? Stop(status: status, error: error)
                unsettled.append(chunk[position].operation)
            case .unsent: unsettled.append(chunk[position].operation)
            }
        }
        defer { try? release(unsettled) }
        do { try commit(settlements, erroredIds: erroredIds, into: &result) } catch {
            return Stop(status: .abortedByStore, error: error)
        }
        return stop
    }

    /// How many operations are begun, sent and committed together.
    static let pushChunk = 64

    /// What became of one operation of a chunk.
    private enum Sent: Sendable {
        /// Its outcome, to commit.
        case settled(Settlement)
        /// It stopped the push (``RemoteError/abortsPush``, cancellation, the handler); nothing to
        /// commit.
        case stopped(PushStatus, any Error)
        /// It was not sent: an earlier operation stopped the push.
        case unsent
    }

    /// Sends a chunk's operations through `handler` in queue order and returns what became of
    /// each, in chunk order; `answered` is called as each one is answered. Each operation goes
    /// through the handler after the answer to the previous one; after an operation stops the
    /// push, no further one is sent.
    private func send(
        _ chunk: [(operation: QueuedOperation, item: Item?)], through handler: any PushHandler,
        answered: (QueuedOperation) -> Void
    ) async -> [Sent] {
        var sent = [Sent](repeating: .unsent, count: chunk.count)
        for (position, (operation, item)) in chunk.enumerated() {
            if let settled = Self.unsendable(operation, item: item) {
                sent[position] = settled
                if case .stopped = settled { break }
                answered(operation)
                continue
            }
            let outcome = await Self.outcome {
                try await handler.push(Self.pushOperation(operation, item: item, remote: remote))
            }
            sent[position] = Self.classify(outcome, of: operation, item: item, schema: queue.schema)
            answered(operation)
            if case .stopped = sent[position] { break }
        }
        return sent
    }

    /// Sends a chunk's operations to `remote` at once (``RemoteService/send(_:)``, which may send
    /// them in one request), as ``DefaultPushHandler`` would one by one, and returns what became
    /// of each, in chunk order.
    private static func send(
        _ chunk: [(operation: QueuedOperation, item: Item?)], to remote: any RemoteService, schema: StoreSchema
    ) async -> [Sent] {
        if Task.isCancelled { return chunk.map { _ in .stopped(.cancelled, CancellationError()) } }
        var sent = [Sent](repeating: .unsent, count: chunk.count)
        var positions: [Int] = []
        for (position, (operation, item)) in chunk.enumerated() {
            if let settled = unsendable(operation, item: item) {
                sent[position] = settled
            } else {
                positions.append(position)
            }
        }
        let answers = await remote.send(
            positions.map { pushOperation(chunk[$0].operation, item: chunk[$0].item, remote: remote).write() })
        for (position, answer) in zip(positions, answers) {
            let (operation, item) = chunk[position]
            sent[position] = classify(answer.map { PushOutcome.pushed($0) }, of: operation, item: item, schema: schema)
        }
        return sent
    }

    /// `nil` when the operation can be sent; otherwise what became of it without sending
    /// (cancelled, or its local item missing).
    private static func unsendable(_ operation: QueuedOperation, item: Item?) -> Sent? {
        if Task.isCancelled { return .stopped(.cancelled, CancellationError()) }
        guard operation.kind != .delete && item == nil else { return nil }
        let missing = RemoteError(
            .server,
            message:
                "the queue holds a \(operation.kind.rawValue) of '\(operation.itemId)' but table '\(operation.table)' has no such item"
        )
        return .settled(.failed(operation, missing, reason: "localItemMissing", item: nil))
    }

    private static func pushOperation(_ operation: QueuedOperation, item: Item?, remote: any RemoteService)
        -> PushOperation
    {
        PushOperation(
            kind: operation.kind, table: operation.table, itemId: operation.itemId, item: item,
            sequence: operation.sequence, remote: remote)
    }

    private static func outcome(_ push: () async throws -> PushOutcome) async -> Result<PushOutcome, any Error> {
        do { return .success(try await push()) } catch { return .failure(error) }
    }

    /// What a handler's answer means for the operation: a 404 to a delete counts as done;
    /// the failures that ``RemoteError/abortsPush`` names and cancellation stop the push, and so
    /// does any error that is not a ``RemoteError``; a conflict whose server copy already holds
    /// the item as the operation would write it counts as done (see
    /// ``serverCopy(_:holds:table:)``); every other ``RemoteError`` becomes an operation error.
    private static func classify(
        _ outcome: Result<PushOutcome, any Error>, of operation: QueuedOperation, item: Item?, schema: StoreSchema
    ) -> Sent {
        switch outcome {
        case .success(let outcome):
            return .settled(.finished(operation, outcome))
        case .failure(let error as RemoteError):
            if error.abortsPush {
                let status: PushStatus =
                    switch error.kind {
                    case .authentication: .abortedByAuthentication
                    case .cancelled: .cancelled
                    default: .abortedByNetwork
                    }
                return .stopped(status, error)
            }
            if operation.kind == .delete && error.kind == .notFound {
                return .settled(.finished(operation, .pushed(nil)))
            }
            if error.kind == .conflict, operation.kind != .delete, let item, let server = error.serverItem,
                serverCopy(server, holds: item, table: schema.table(named: operation.table))
            {
                return .settled(.finished(operation, .pushed(server)))
            }
            return .settled(.failed(operation, error, reason: "\(error.kind)", item: item))
        case .failure(let error) where error is CancellationError:
            return .stopped(.cancelled, CancellationError())
        case .failure(let error):
            return .stopped(.abortedByHandler, error)
        }
    }

    /// `true` when `server`, the copy a 409 or 412 answer carries, already holds every value of
    /// the local `item` (its system properties aside) and is not soft-deleted: the server holds
    /// what the operation would write. That is what a re-sent operation meets when its first send
    /// was applied but its answer never arrived (a push cut short by a crash, a kill or the
    /// network), and what two devices making the same edit meet; recording it as an error would
    /// leave the queue stuck on a conflict with nothing to resolve. Values are compared as the
    /// table stores them (an ISO 8601 server date equals the stored date); a table the store
    /// does not declare, or a copy that does not normalize, is never taken as equal.
    static func serverCopy(_ server: Item, holds item: Item, table: TableSchema?) -> Bool {
        guard let table, server.id == item.id, !server.isDeleted,
            let server = try? table.normalize(server, origin: .server),
            let local = try? table.normalize(item, origin: .server)
        else { return false }
        for column in table.columns where SystemProperty(rawValue: column.name) == nil {
            guard server[column.name] == local[column.name] else { return false }
        }
        return true
    }

    /// Reads each operation's item, marks the operations attempted (by raising the queue's
    /// attempted mark, ``OperationQueue/attemptedThrough``, to the chunk's last sequence) and in
    /// flight, in one transaction. When the queue changed since the batch was read (its
    /// ``OperationQueue/generation`` moved on from `generation`), the operations are read again
    /// first and those changed since are left out; follow-up rows (pushed once they take the
    /// primary slot) are always left out. Marking early is on the safe side: an
    /// attempted insert followed by a local delete queues a delete (answered 404 if the insert
    /// never arrived) instead of vanishing. Items (and operations read again) are read by id.
    private func begin(_ operations: ArraySlice<QueuedOperation>, readAt generation: UInt64) throws -> [(
        operation: QueuedOperation, item: Item?
    )] {
        let primary = operations.filter {
            $0.id == OperationQueue.key(table: $0.table, itemId: $0.itemId, slot: .primary)
        }
        guard !primary.isEmpty else { return [] }
        do {
            return try store.write { transaction in
                // Unchanged since the batch was read: the operations are as read, no need to read
                // them again or to look them up.
                let unchanged = queue.generation.withLock { $0 } == generation
                let current = unchanged ? [:] : try operationsById(primary.map(\.id), in: transaction)
                var begun: [QueuedOperation] = []
                begun.reserveCapacity(primary.count)
                var itemIds: [String: [String]] = [:]
                for queued in primary {
                    var operation = queued
                    if !unchanged {
                        guard let found = current[IdKey(queued.id)], found.table == queued.table,
                            found.itemId == queued.itemId,
                            found.sequence == queued.sequence
                        else { continue }
                        operation = found
                    }
                    operation.state = .attempted
                    if operation.kind != .delete { itemIds[operation.table, default: []].append(operation.itemId) }
                    begun.append(operation)
                }
                var items: [String: [IdKey: Item]] = [:]
                for (table, ids) in itemIds { items[table] = try transaction.rows(withIds: ids, in: table) }
                if let last = begun.map(\.sequence).max() { try queue.markAttempted(through: last, in: transaction) }
                queue.inFlight.withLock { $0.formUnion(begun.map(\.id)) }
                return begun.map { ($0, $0.kind == .delete ? $0.item : items[$0.table]?[IdKey($0.itemId)]) }
            }
        } catch {
            endFlight(primary.map(\.id))
            throw error
        }
    }

    /// The operations stored at these row ids (missing ones left out), read by id.
    private func operationsById(_ ids: [String], in transaction: any StoreTransaction) throws -> [IdKey:
        QueuedOperation]
    {
        try transaction.rows(withIds: ids, in: SystemTables.operations).mapValues(queue.decode)
    }

    /// Commits the outcomes of sent operations in one transaction and ends their flight (inside
    /// it, so an edit sees either the operation in flight or its outcome committed). Should
    /// applying an outcome fail, each is committed on its own, so the store refusing one (e.g. a
    /// server copy with another id) loses none of the others; the refused ones are released
    /// (kept queued, attempted) and the first refusal is thrown. Should the commit itself fail,
    /// nothing was written: every operation is released and stays queued.
    private func commit(_ settlements: [Settlement], erroredIds: Set<String>, into result: inout PushResult) throws {
        guard !settlements.isEmpty else { return }
        defer { endFlight(settlements.map(\.operation.id)) }
        func count(_ settlement: Settlement) -> Int {
            if case .finished = settlement { return 1 }
            return 0
        }
        func committing(_ settlements: [Settlement], applied: inout Bool) throws -> [OperationError] {
            try write(.pushOutcome, deferringObservers: true) { transaction in
                let errors = try applyTogether(settlements, erroredIds: erroredIds, in: transaction)
                endFlight(settlements.map(\.operation.id))
                applied = true
                return errors
            }
        }
        var applied = false
        do {
            result.errors += try committing(settlements, applied: &applied)
            result.completedCount += settlements.reduce(0) { $0 + count($1) }
            return
        } catch  where applied {
            try? release(settlements.map(\.operation))
            throw error
        } catch {
            var refusal: (any Error)?
            for settlement in settlements {
                do {
                    result.errors += try committing([settlement], applied: &applied)
                    result.completedCount += count(settlement)
                } catch {
                    try? release([settlement.operation])
                    refusal = refusal ?? error
                }
            }
            if let refusal { throw refusal }
        }
    }

    /// Applies outcomes inside the caller's transaction; returns the operation errors recorded.
    /// The common case, a pushed operation with no edit queued behind it (the queue's
    /// ``OperationQueue/followedUp`` says so without a read), is applied in bulk: one delete
    /// removes the operations (and one the errors of those in `erroredIds`, the operations that
    /// had an error when the push began; push records errors only for operations it does not
    /// complete), one upsert per table stores the server's copies (each merged over its local
    /// row when it lacks a declared column). Every other outcome goes through ``apply(_:in:)``;
    /// all of them touch only their own item's rows.
    private func applyTogether(
        _ settlements: [Settlement], erroredIds: Set<String>,
        in transaction: any StoreTransaction
    ) throws -> [OperationError] {
        let followedUp = queue.followedUp.withLock { $0 }
        var completed: [String] = []
        var copies: [String: [Item]] = [:]
        var errors: [OperationError] = []
        for settlement in settlements {
            guard case .finished(let operation, .pushed(let server)) = settlement, !followedUp.contains(operation.id)
            else {
                errors += try apply(settlement, in: transaction)
                continue
            }
            completed.append(operation.id)
            guard operation.kind != .delete, let server else { continue }
            try requireServerCopy(server, of: operation)
            copies[operation.table, default: []].append(
                try mergedServerCopy(server, table: operation.table, in: transaction))
        }
        if !completed.isEmpty { try transaction.delete(ids: completed, from: SystemTables.operations) }
        let completedErrors = erroredIds.isEmpty ? [] : completed.filter(erroredIds.contains)
        if !completedErrors.isEmpty { try transaction.delete(ids: completedErrors, from: SystemTables.errors) }
        for (table, items) in copies { try transaction.upsert(items, into: table, origin: .server) }
        return errors
    }

    /// Applies one outcome inside the caller's transaction; returns the operation error recorded, if any.
    private func apply(_ settlement: Settlement, in transaction: any StoreTransaction) throws -> [OperationError] {
        switch settlement {
        case .finished(let operation, .pushed(let server)):
            let followUp = try queue.complete(operation, in: transaction)
            if operation.kind != .delete, let server {
                try storeServerCopy(server, of: operation, followUp: followUp, in: transaction)
            }
            return []
        case .finished(let operation, .resolved(let resolution)):
            try apply(resolution, to: operation, serverItem: nil, in: transaction)
            return []
        case .failed(let operation, let error, let reason, let item):
            guard let settled = try queue.settle(operation, in: transaction) else { return [] }
            let recorded = OperationError(
                operationId: settled.id, sequence: settled.sequence, operationVersion: settled.version,
                kind: operation.kind, table: operation.table, itemId: operation.itemId,
                status: error.status, reason: reason, message: error.message, item: item,
                serverItem: error.serverItem, createdAt: .now())
            try transaction.upsert([recorded.row()], into: SystemTables.errors, origin: .local)
            return [recorded]
        }
    }

    /// The server's copy replaces the local item (merged over it, see
    /// ``mergedServerCopy(_:table:in:)``), unless the item was edited during the push: then only
    /// its system properties are taken, so the next push sends the new `version`.
    private func storeServerCopy(
        _ server: Item, of operation: QueuedOperation, followUp: QueuedOperation?,
        in transaction: any StoreTransaction
    ) throws {
        try requireServerCopy(server, of: operation)
        guard var followUp else {
            try transaction.upsert(
                [try mergedServerCopy(server, table: operation.table, in: transaction)], into: operation.table,
                origin: .server)
            return
        }
        func refreshed(_ item: Item) -> Item {
            var item = item
            for property in [SystemProperty.version, .createdAt, .updatedAt] {
                let value = server[property.rawValue]
                if value.isNull {
                    item.removeValue(forColumn: property.rawValue)
                } else {
                    item[property.rawValue] = value
                }
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

    /// The server's answer to a pushed write laid over the local row: a column the answer leaves
    /// out (a server that stores fewer columns than the app, or answers with some of them) keeps
    /// its local value instead of being erased, as the Azure SDKs' stores merge such answers.
    /// An answer holding every declared column, what the Azure servers send, is stored as it is,
    /// without reading the local row.
    private func mergedServerCopy(_ server: Item, table: String, in transaction: any StoreTransaction) throws -> Item {
        guard let schema = queue.schema.table(named: table),
            schema.columns.contains(where: { !server.hasValue(forColumn: $0.name) }),
            let local = try transaction.lookup(table: table, id: server.id)
        else { return server }
        var merged = server
        local.forEachValue { column, value in
            if column != "id", !merged.hasValue(forColumn: column) { merged[column] = value }
        }
        return merged
    }

    /// Throws unless `server` is the server's copy of the operation's item.
    private func requireServerCopy(_ server: Item, of operation: QueuedOperation) throws {
        guard server.id == operation.itemId else {
            throw OfflineSyncError(
                .invalidValue,
                "the server answered the \(operation.kind.rawValue) of '\(operation.itemId)' in '\(operation.table)' with item '\(server.id)'"
            )
        }
    }

    /// Ends the flight of operations whose push was aborted (or whose outcome the store
    /// refused); the queue keeps them.
    private func release(_ operations: [QueuedOperation]) throws {
        guard !operations.isEmpty else { return }
        defer { endFlight(operations.map(\.id)) }
        try store.write { transaction in
            for operation in operations { try queue.settle(operation, in: transaction) }
            endFlight(operations.map(\.id))
        }
    }

    /// Takes operations out of flight (and forgets their follow-ups, settled by then).
    private func endFlight(_ ids: [String]) {
        queue.inFlight.withLock { $0.subtract(ids) }
        queue.followedUp.withLock { $0.subtract(ids) }
    }
}
