import OfflineSync

/// Scenarios that exercise a store directly (the storage side of pull, query, lookup, open).
extension BenchmarkScenario {
    /// Upserts every record as server data, one transaction per page of 1,000 (what a pull stores).
    static let bulkUpsert = BenchmarkScenario(
        id: "bulk-upsert", title: "bulk upsert, pages of 1,000", unit: "rows",
        prepareStore: { store, size in
            try store.open(schema: StoreSchema([BenchmarkData.table(indexed: false)]))
            let items = BenchmarkData.records(count: size.records).map(\.item)
            return Trial(
                operations: items.count,
                body: {
                    try upsertPages(items, into: store, pageSize: 1_000)
                }, teardown: { try store.close() })
        },
        prepareBaseline: { baseline, size in
            try insertTrial(baseline, records: size.records, rowsPerTransaction: 1_000, queueRows: false)
        })

    /// Filter + order + top 50 over every record, with or without the index on `quantity`.
    static func query(indexed: Bool) -> BenchmarkScenario {
        BenchmarkScenario(
            id: indexed ? "query-indexed" : "query-scan",
            title: indexed ? "query filter+order+top 50, indexed" : "query filter+order+top 50, no index",
            unit: "queries",
            prepareStore: { store, size in
                try filledStore(store, records: size.records, indexed: indexed)
                let query = BenchmarkData.query
                return Trial(
                    operations: size.queries, repeatable: true,
                    body: {
                        for _ in 0..<size.queries {
                            let result = try store.read(query)
                            try expectCount(
                                result.items.count, BenchmarkData.queryLimit, records: size.records, what: "query")
                        }
                    }, teardown: { try store.close() })
            },
            prepareBaseline: { baseline, size in
                try filledBaseline(baseline, records: size.records, indexed: indexed)
                return Trial(
                    operations: size.queries, repeatable: true,
                    body: {
                        for _ in 0..<size.queries {
                            let rows = try baseline.queryTop()
                            try expectCount(rows.count, BenchmarkData.queryLimit, records: size.records, what: "query")
                        }
                    }, teardown: { baseline.close() })
            })
    }

    /// Lookups of random existing ids.
    static let lookup = BenchmarkScenario(
        id: "lookup", title: "lookup by random id", unit: "lookups",
        prepareStore: { store, size in
            try filledStore(store, records: size.records, indexed: false)
            let ids = randomIds(size)
            return Trial(
                operations: ids.count, repeatable: true,
                body: {
                    for id in ids where try store.lookup(table: BenchmarkData.tableName, id: id) == nil {
                        throw BenchmarkError("lookup of '\(id)' found nothing")
                    }
                }, teardown: { try store.close() })
        },
        prepareBaseline: { baseline, size in
            try filledBaseline(baseline, records: size.records, indexed: false)
            let ids = randomIds(size)
            return Trial(
                operations: ids.count, repeatable: true,
                body: {
                    for id in ids where try baseline.lookup(id: id) == nil {
                        throw BenchmarkError("raw lookup of '\(id)' found nothing")
                    }
                }, teardown: { baseline.close() })
        })

    /// Opening an existing store and reading one row, repeated (for SQLCipher: with the raw key,
    /// or with the passphrase when `passphrase` is `true`).
    static func coldOpen(passphrase: Bool) -> BenchmarkScenario {
        BenchmarkScenario(
            id: passphrase ? "cold-open-passphrase" : "cold-open",
            title: passphrase ? "cold open, SQLCipher passphrase" : "cold open (SQLCipher: raw key)",
            unit: "opens", usesPassphrase: passphrase,
            backends: passphrase ? ["sqlcipher"] : ["sqlite", "sqlcipher", "lmdb"],
            prepareStore: { store, size in
                let schema = StoreSchema([BenchmarkData.table(indexed: false)])
                try filledStore(store, records: 1_000, indexed: false)
                try store.close()
                return Trial(
                    operations: size.opens, repeatable: true,
                    body: {
                        for _ in 0..<size.opens {
                            try store.open(schema: schema)
                            _ = try store.lookup(table: BenchmarkData.tableName, id: "item-000000")
                            try store.close()
                        }
                    }, teardown: { try store.close() })
            },
            prepareBaseline: { baseline, size in
                try filledBaseline(baseline, records: 1_000, indexed: false)
                baseline.close()
                return Trial(
                    operations: size.opens, repeatable: true,
                    body: {
                        for _ in 0..<size.opens {
                            try baseline.open()
                            _ = try baseline.lookup(id: "item-000000")
                            baseline.close()
                        }
                    }, teardown: { baseline.close() })
            })
    }

    // MARK: - Helpers shared by the scenarios

    /// Upserts `items` as server data in transactions of `pageSize`.
    static func upsertPages(_ items: [Item], into store: any LocalStore, pageSize: Int) throws {
        var start = 0
        while start < items.count {
            let page = Array(items[start..<min(start + pageSize, items.count)])
            try store.upsert(page, into: BenchmarkData.tableName, origin: .server)
            start += pageSize
        }
    }

    /// Opens the store with the benchmark table and fills it with `records` rows.
    static func filledStore(_ store: any LocalStore, records: Int, indexed: Bool) throws {
        try store.open(schema: StoreSchema([BenchmarkData.table(indexed: indexed)]))
        try upsertPages(BenchmarkData.records(count: records).map(\.item), into: store, pageSize: 10_000)
    }

    /// Creates the baseline and fills it with `records` rows.
    static func filledBaseline(_ baseline: any RawBaseline, records: Int, indexed: Bool) throws {
        try baseline.create(indexed: indexed)
        try baseline.insert(BenchmarkData.records(count: records)[...], rowsPerTransaction: 10_000, queueRows: false)
    }

    /// The raw baseline's part of the write scenarios: creates the table; the measured body then
    /// inserts `records` new rows in transactions of `rowsPerTransaction`. With `queueRows` they
    /// are local writes, each with a queue row, and hold what the store's local items hold (see
    /// ``BenchmarkRecord/localRecord``); without, they are server records (a pull's).
    static func insertTrial(
        _ baseline: any RawBaseline, records: Int, rowsPerTransaction: Int, queueRows: Bool
    ) throws -> Trial {
        try baseline.create(indexed: false)
        let rows = BenchmarkData.records(count: records)
        return insertTrial(
            baseline, queueRows ? rows.map(\.localRecord) : rows, rowsPerTransaction: rowsPerTransaction,
            queueRows: queueRows)
    }

    /// A trial whose measured body inserts `rows` into the baseline's existing table.
    static func insertTrial(
        _ baseline: any RawBaseline, _ rows: [BenchmarkRecord], rowsPerTransaction: Int, queueRows: Bool
    ) -> Trial {
        Trial(
            operations: rows.count,
            body: {
                try baseline.insert(rows[...], rowsPerTransaction: rowsPerTransaction, queueRows: queueRows)
            }, teardown: { baseline.close() })
    }

    /// `size.lookups` ids of existing records, chosen with a fixed seed.
    public static func randomIds(_ size: BenchmarkSize) -> [String] {
        var generator = SeededRandom(seed: 7)
        return (0..<size.lookups).map { _ in
            "item-" + BenchmarkData.zeroPadded(Int(generator.next() % UInt64(size.records)), width: 6)
        }
    }

    /// Throws when a scenario's result has the wrong size, so a broken backend cannot post a fast figure.
    static func expectCount(_ actual: Int, _ expected: Int, records: Int, what: String) throws {
        guard actual == min(expected, records) else {
            throw BenchmarkError("\(what) returned \(actual) rows; expected \(min(expected, records))")
        }
    }
}

/// A scenario that did not do the work it measures (wrong row count, missing row …).
struct BenchmarkError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
