import OfflineSync
import OfflineSyncService

/// Scenarios driven through the shared sync logic (`SyncContext` / `SyncTable`) against an
/// `InMemoryRemote`.
extension BenchmarkScenario {
    /// Local inserts of new items, all in one batch (one transaction with their queued operations).
    static let enqueueBatch = BenchmarkScenario(
        id: "enqueue-batch", title: "enqueue, inserts in one batch", unit: "ops",
        prepareStore: { store, size in
            let (context, table) = try syncContext(store, remote: try emptyRemote())
            let items = BenchmarkData.records(count: size.batchInserts).map(\.localItem)
            return Trial(
                operations: items.count,
                body: {
                    try table.insert(items)
                },
                teardown: {
                    // Checked after the measured part, which it would otherwise lengthen.
                    defer { try? context.close() }
                    try expectCount(
                        try context.pendingOperationCount(), items.count, records: items.count, what: "queue")
                })
        },
        prepareBaseline: { baseline, size in
            try insertTrial(
                baseline, records: size.batchInserts, rowsPerTransaction: size.batchInserts, queueRows: true)
        })

    /// Local inserts, each in its own transaction with full durability (flushed to disk).
    static let enqueueDurable = BenchmarkScenario(
        id: "enqueue-durable", title: "enqueue, one durable transaction each", unit: "ops", durability: .full,
        prepareStore: { store, size in
            let (context, table) = try syncContext(store, remote: try emptyRemote())
            let items = BenchmarkData.records(count: size.durableInserts).map(\.localItem)
            return Trial(
                operations: items.count,
                body: {
                    for item in items {
                        try table.insert(item)
                    }
                }, teardown: { try context.close() })
        },
        prepareBaseline: { baseline, size in
            try insertTrial(baseline, records: size.durableInserts, rowsPerTransaction: 1, queueRows: true)
        })

    /// Pushing queued inserts to the remote (each operation applied, acknowledged and dequeued).
    static let push = BenchmarkScenario(
        id: "push", title: "push queued inserts to InMemoryRemote", unit: "ops",
        prepareStore: { store, size in
            let remote = try emptyRemote()
            let (context, table) = try syncContext(store, remote: remote)
            let items = BenchmarkData.records(count: size.pushOperations).map(\.localItem)
            try table.insert(items)
            return Trial(
                operations: items.count,
                body: {
                    let result = try await context.push()
                    try expectCount(result.completedCount, items.count, records: items.count, what: "push")
                },
                teardown: {
                    // Checked after the measured part, which reading every server row would lengthen.
                    defer { try? context.close() }
                    try expectCount(
                        try remote.items(in: BenchmarkData.tableName).count, items.count, records: items.count,
                        what: "server items after the push")
                })
        },
        prepareBaseline: { baseline, size in
            try baseline.create(indexed: false)
            let records = BenchmarkData.records(count: size.pushOperations)
            try baseline.insert(records.map(\.localRecord)[...], rowsPerTransaction: records.count, queueRows: true)
            // The store writes the server's copy of each pushed insert, with its times and version.
            let pushedAt = Timestamp.now().millisecondsSince1970
            let copies = records.enumerated().map { $1.writtenByServer(at: pushedAt + Int64($0), inserted: true) }
            return Trial(
                operations: records.count,
                body: {
                    try baseline.drainQueue(copies)
                }, teardown: { baseline.close() })
        })

    /// A full pull of every record of the remote, with `pageSize` records per request.
    static func pullFull(pageSize: Int) -> BenchmarkScenario {
        BenchmarkScenario(
            id: "pull-full-\(pageSize)", title: "full pull, pages of \(pageSize.formatted)", unit: "rows",
            prepareStore: { store, size in
                let remote = try seededRemote(records: size.records)
                let (context, table) = try syncContext(store, remote: remote)
                return Trial(
                    operations: size.records,
                    body: {
                        let result = try await table.pull(options: PullOptions(pageSize: pageSize))
                        try expectCount(result.stored, size.records, records: size.records, what: "pull")
                    }, teardown: { try context.close() })
            },
            prepareBaseline: { baseline, size in
                try insertTrial(baseline, records: size.records, rowsPerTransaction: pageSize, queueRows: false)
            })
    }

    /// An incremental pull that brings the records changed on the remote since the last pull.
    /// Each run after the first changes the same records again (not measured) and pulls them.
    static let pullIncremental = BenchmarkScenario(
        id: "pull-incremental", title: "incremental pull of changed records", unit: "rows",
        prepareStore: { store, size in
            let remote = try ownSeededRemote(records: size.records)
            let (context, table) = try syncContext(store, remote: remote)
            try await table.pull(queryId: "all", options: PullOptions(pageSize: 1_000))
            // The `round`-th change gives each record its quantity plus `round`.
            func change(round: Int) throws {
                for record in BenchmarkData.records(count: size.changedRecords) {
                    _ = try remote.changeFromAnotherDevice(table: BenchmarkData.tableName, id: record.id) { item in
                        item["quantity"] = .int(record.quantity + Int64(round))
                    }
                }
                try prepareServerOrdering(
                    remote, by: [SortKey(SystemProperty.updatedAt.rawValue), SortKey("id")],
                    from: .date(Timestamp.minimum))
            }
            var round = 1
            try change(round: round)
            return Trial(
                operations: size.changedRecords,
                body: {
                    let result = try await table.pull(queryId: "all", options: PullOptions(pageSize: 1_000))
                    try expectCount(
                        result.stored, size.changedRecords, records: size.changedRecords, what: "incremental pull")
                },
                rearm: {
                    round += 1
                    try change(round: round)
                }, teardown: { try context.close() })
        },
        prepareBaseline: { baseline, size in
            try filledBaseline(baseline, records: size.records, indexed: false)
            // What the store receives and writes: the server's change gives each record a new
            // quantity, a new `updatedAt` (one millisecond apart) and the version of that stamp
            // (12 characters, where the seeded versions have about 17, so neither side can
            // overwrite a record in place in the first run; later runs overwrite records of
            // the same length on both sides).
            func changed(round: Int) -> [BenchmarkRecord] {
                let changedAt = Timestamp.now().millisecondsSince1970
                var changed = BenchmarkData.records(count: size.changedRecords)
                for index in changed.indices {
                    changed[index].quantity += Int64(round)
                    changed[index] = changed[index].writtenByServer(at: changedAt + Int64(index), inserted: false)
                }
                return changed
            }
            var round = 1
            var rows = changed(round: round)
            return Trial(
                operations: size.changedRecords,
                body: {
                    try baseline.insert(rows[...], rowsPerTransaction: 1_000, queueRows: false)
                },
                rearm: {
                    round += 1
                    rows = changed(round: round)
                }, teardown: { baseline.close() })
        })

    /// Purging every pulled record of the table.
    static let purge = BenchmarkScenario(
        id: "purge", title: "purge all rows", unit: "rows",
        prepareStore: { store, size in
            let (context, table) = try syncContext(store, remote: try emptyRemote())
            try upsertPages(BenchmarkData.records(count: size.records).map(\.item), into: store, pageSize: 10_000)
            return Trial(
                operations: size.records,
                body: {
                    let purged = try await table.purge()
                    try expectCount(purged, size.records, records: size.records, what: "purge")
                }, teardown: { try context.close() })
        },
        prepareBaseline: { baseline, size in
            try filledBaseline(baseline, records: size.records, indexed: false)
            return Trial(
                operations: size.records,
                body: {
                    let deleted = try baseline.deleteAll()
                    try expectCount(deleted, size.records, records: size.records, what: "raw purge")
                }, teardown: { baseline.close() })
        })

    // MARK: - Helpers

    /// A sync context over `store` (which it opens) with the benchmark table.
    static func syncContext(_ store: any LocalStore, remote: InMemoryRemote) throws -> (SyncContext, SyncTable) {
        let context = try SyncContext(store: store, remote: remote, tables: [BenchmarkData.table(indexed: false)])
        return (context, try context.table(BenchmarkData.tableName))
    }

    /// A remote with the benchmark table and no rows, serving pages of up to 1,000.
    static func emptyRemote() throws -> InMemoryRemote {
        try InMemoryRemote(
            tables: [BenchmarkData.table(indexed: false)], options: TableService.Options(maximumPageSize: 1_000))
    }

    /// A remote holding `records` server rows, ready to page them by id.
    ///
    /// The full pulls only read the remote, so they share one: it is seeded once per size and
    /// kept for the next trial (seeding 100,000 rows takes longer than the pull, and a
    /// repetition then has the time to alternate several pulls with the raw side's inserts; see
    /// ``ScenarioRunner``). A trial that changes the remote's rows must make its own.
    static func seededRemote(records: Int) throws -> InMemoryRemote {
        try SeededRemote.latest.withLock { latest in
            if let latest, latest.records == records { return latest.remote }
            latest = nil
            let remote = try ownSeededRemote(records: records)
            latest = SeededRemote(records: records, remote: remote)
            return remote
        }
    }

    /// The seeded remote ``seededRemote(records:)`` keeps.
    private struct SeededRemote: Sendable {
        static let latest = Locked<SeededRemote?>(nil)
        var records: Int
        var remote: InMemoryRemote
    }

    /// A remote holding `records` server rows, ready to page them by id, for a trial that changes
    /// its rows (never shared).
    static func ownSeededRemote(records: Int) throws -> InMemoryRemote {
        let remote = try emptyRemote()
        try upsertPages(BenchmarkData.records(count: records).map(\.item), into: remote.service.store, pageSize: 10_000)
        try prepareServerOrdering(remote, by: [SortKey("id")], from: .string(""))
        return remote
    }

    /// Reads one page in the pull's order (bounded on its first key, as the pull's pages are) so
    /// the server's store sorts its rows (what a real server keeps as an index) before the
    /// measurement rather than during it.
    static func prepareServerOrdering(_ remote: InMemoryRemote, by orderBy: [SortKey], from lowest: Value) throws {
        guard let first = orderBy.first else { return }
        _ = try remote.service.store.read(
            Query(
                table: BenchmarkData.tableName,
                filter: .comparison(.column(first.column), .ge, .literal(lowest)),
                orderBy: orderBy, top: 1))
    }
}

extension Int {
    /// The number with thousands separators, e.g. `1,000`.
    var formatted: String {
        let digits = String(self)
        var result = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}
