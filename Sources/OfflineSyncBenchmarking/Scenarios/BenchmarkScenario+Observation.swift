import OfflineSync

/// Scenarios that measure what live queries cost the sync engine.
extension BenchmarkScenario {
    /// The number of live observers in ``pullObserved(pageSize:)``.
    static let observerCount = 10

    /// The full pull of ``pullFull(pageSize:)`` while ``observerCount`` tasks observe the table
    /// (each a list view: the first 20 items by id and the total count). The measured part runs
    /// the pull and waits until every observer has read the pulled table, so it includes the
    /// change recording on every page, the wake-ups and the observers' final reads. Compare it
    /// with `pull-full-<pageSize>` in the same run.
    static func pullObserved(pageSize: Int) -> BenchmarkScenario {
        BenchmarkScenario(
            id: "pull-observed-\(pageSize)",
            title: "full pull, pages of \(pageSize.formatted), \(observerCount) live observers", unit: "rows",
            prepareStore: { store, size in
                let remote = try seededRemote(records: size.records)
                let (context, table) = try syncContext(store, remote: remote)
                let query = Query(
                    table: BenchmarkData.tableName, orderBy: [SortKey("id")], top: 20, includeTotalCount: true)
                let (registered, signal) = AsyncStream<Void>.makeStream()
                let observers = try (0..<observerCount).map { _ in
                    let observation = try table.observe(query)
                    return Task {
                        var results = 0
                        for try await result in observation {
                            results += 1
                            if results == 1 { signal.yield() }
                            if result.totalCount == size.records { break }
                        }
                        return results
                    }
                }
                var ready = registered.makeAsyncIterator()
                for _ in observers { _ = await ready.next() }
                return Trial(
                    operations: size.records,
                    body: {
                        let result = try await table.pull(options: PullOptions(pageSize: pageSize))
                        try expectCount(result.stored, size.records, records: size.records, what: "pull")
                        for observer in observers {
                            let results = try await observer.value
                            guard results <= 3 else {
                                throw BenchmarkError(
                                    "an observer got \(results) results during one pull; bursts must be coalesced")
                            }
                        }
                    },
                    teardown: {
                        for observer in observers { observer.cancel() }
                        try context.close()
                    })
            },
            prepareBaseline: { baseline, size in
                try baseline.create(indexed: false)
                let records = BenchmarkData.records(count: size.records)
                return Trial(
                    operations: records.count,
                    body: {
                        try baseline.insert(records[...], rowsPerTransaction: pageSize, queueRows: false)
                    }, teardown: { baseline.close() })
            })
    }
}
