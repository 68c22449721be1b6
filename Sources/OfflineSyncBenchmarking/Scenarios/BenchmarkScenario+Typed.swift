import Foundation
import OfflineSync
import OfflineSyncService

/// A benchmark row as an app declares it: a typed model of the benchmark table (`due` as a
/// Foundation `Date`, the system properties read back as optionals).
struct BenchmarkModel: SyncModel, Hashable {
    static let tableName = BenchmarkData.tableName

    var id: String
    var title: String
    var quantity: Int64
    var price: Double
    var done: Bool
    var due: Date
    var createdAt: Date?
    var updatedAt: Date?
    var version: String?
    var deleted: Bool?
}

/// ``BenchmarkModel`` writing its own rows (``RowWritable``, one `write` per coding key) instead
/// of encoding them through `Codable`, which it still uses for reading.
struct WritableBenchmarkModel: RowWritable, Hashable {
    static let tableName = BenchmarkData.tableName

    var model: BenchmarkModel
    var id: String { model.id }

    init(_ model: BenchmarkModel) { self.model = model }
    init(from decoder: any Decoder) throws { model = try BenchmarkModel(from: decoder) }
    func encode(to encoder: any Encoder) throws { try model.encode(to: encoder) }

    static let rowKeys = ["id", "title", "quantity", "price", "done", "due", "createdAt", "updatedAt", "version", "deleted"]

    func writeRow(to row: inout RowWriter) throws {
        try row.write(model.id)
        try row.write(model.title)
        try row.write(model.quantity)
        try row.write(model.price)
        try row.write(model.done)
        try row.write(model.due)
        try row.write(model.createdAt)
        try row.write(model.updatedAt)
        try row.write(model.version)
        try row.write(model.deleted)
    }
}

/// ``BenchmarkModel`` reading its own rows (``RowReadable``, one `read` per coding key) instead
/// of decoding them through `Codable`, which it still uses for writing.
struct ReadableBenchmarkModel: RowReadable, Hashable {
    static let tableName = BenchmarkData.tableName

    var model: BenchmarkModel
    var id: String { model.id }

    init(from decoder: any Decoder) throws { model = try BenchmarkModel(from: decoder) }
    func encode(to encoder: any Encoder) throws { try model.encode(to: encoder) }

    static let rowKeys = ["id", "title", "quantity", "price", "done", "due", "createdAt", "updatedAt", "version", "deleted"]

    init(row: inout RowReader) throws {
        model = BenchmarkModel(
            id: try row.read(), title: try row.read(), quantity: try row.read(), price: try row.read(),
            done: try row.read(), due: try row.read(), createdAt: try row.read(), updatedAt: try row.read(),
            version: try row.read(), deleted: try row.read())
    }
}

extension BenchmarkRecord {
    /// The record as a local app write through a typed model (the same values as ``localItem``).
    var model: BenchmarkModel {
        BenchmarkModel(
            id: id, title: title, quantity: quantity, price: price, done: done,
            due: Date(timeIntervalSince1970: Double(due) / 1000))
    }

    /// The record as a local app write through a model that writes its own rows.
    var writableModel: WritableBenchmarkModel { WritableBenchmarkModel(model) }
}

/// The typed-model scenarios: the same work as an `Item`-path scenario, done through
/// ``ModelTable``, each compared with the raw C API in the same run. The raw side of the typed
/// `Codable` enqueue reads its models through `Codable` too (``RawRecordEncoder``); the others
/// share their `Item`-path scenario's raw side.
extension BenchmarkScenario {
    /// Every typed scenario and its `Item`-path counterpart, in report order.
    static var typed: [BenchmarkScenario] {
        [typedEnqueueBatch, writableEnqueueBatch, readAll(typed: false), readAll(typed: true), typedQueryScan, typedPullFull]
    }

    /// ``enqueueBatch`` through `ModelTable.insert`: models encoded into rows, then the same
    /// transaction. Its raw side reads the same models through `Codable` into its records, then
    /// inserts them as ``enqueueBatch``'s raw side does.
    static let typedEnqueueBatch = typedEnqueueBatch(
        id: "typed-enqueue-batch", title: "typed models: enqueue, inserts in one batch", model: \.model,
        baseline: { baseline, size in
            try baseline.create(indexed: false)
            let models = BenchmarkData.records(count: size.batchInserts).map(\.model)
            let encoder = RawRecordEncoder()
            return Trial(
                operations: models.count,
                body: {
                    var records: [BenchmarkRecord] = []
                    records.reserveCapacity(models.count)
                    for model in models { records.append(try encoder.record(of: model)) }
                    try baseline.insert(records[...], rowsPerTransaction: models.count, queueRows: true)
                }, teardown: { baseline.close() })
        })

    /// ``typedEnqueueBatch`` with a model that writes its own rows (``RowWritable``): the same
    /// transaction, without `Codable`, against ``enqueueBatch``'s raw side (hand-written C that
    /// reads the fields directly).
    static let writableEnqueueBatch = typedEnqueueBatch(
        id: "typed-enqueue-batch-written", title: "typed models writing their rows: enqueue, inserts in one batch",
        model: \.writableModel, baseline: enqueueBatch.prepareBaseline)

    /// ``enqueueBatch`` through `ModelTable.insert` of the models `model` makes of the records,
    /// against the raw side `baseline` prepares.
    static func typedEnqueueBatch<Model: SyncModel>(
        id: String, title: String, model: @escaping @Sendable (BenchmarkRecord) -> Model,
        baseline: (@Sendable (any RawBaseline, BenchmarkSize) throws -> Trial)?
    ) -> BenchmarkScenario {
        BenchmarkScenario(
            id: id, title: title, unit: "ops",
            prepareStore: { store, size in
                let context = try SyncContext(
                    store: store, remote: try emptyRemote(), tables: [BenchmarkData.table(indexed: false)])
                let table = try context.table(Model.self)
                let models = BenchmarkData.records(count: size.batchInserts).map(model)
                return Trial(
                    operations: models.count,
                    body: {
                        try table.insert(models)
                    },
                    teardown: {
                        defer { try? context.close() }
                        try expectCount(
                            try context.pendingOperationCount(), models.count, records: models.count, what: "queue")
                    })
            },
            prepareBaseline: baseline)
    }

    /// Reading every row of the table, as `Item`s (`SyncTable.read`) or as models that read their
    /// own rows (``RowReadable``, `ModelTable.read`).
    static func readAll(typed: Bool) -> BenchmarkScenario {
        BenchmarkScenario(
            id: typed ? "typed-read-all" : "read-all",
            title: typed ? "typed models reading their rows: read every row" : "read every row as items", unit: "rows",
            prepareStore: { store, size in
                let context = try SyncContext(
                    store: store, remote: try emptyRemote(), tables: [BenchmarkData.table(indexed: false)])
                let table = try context.table(ReadableBenchmarkModel.self)
                try upsertPages(
                    BenchmarkData.records(count: size.records).map(\.item), into: store, pageSize: 10_000)
                return Trial(
                    operations: size.records, repeatable: true,
                    body: {
                        let count = typed ? try table.read().count : try table.untyped.read().items.count
                        try expectCount(count, size.records, records: size.records, what: "read")
                    }, teardown: { try context.close() })
            },
            prepareBaseline: nil)
    }

    /// ``query(indexed:)`` without an index, through `ModelTable.read` with a key-path query.
    static let typedQueryScan = BenchmarkScenario(
        id: "typed-query-scan", title: "typed models: query filter+order+top 50, no index", unit: "queries",
        prepareStore: { store, size in
            let (context, table) = try typedContext(store, remote: try emptyRemote())
            try upsertPages(BenchmarkData.records(count: size.records).map(\.item), into: store, pageSize: 10_000)
            let query = ModelQuery<BenchmarkModel>
                .filter(\.quantity >= BenchmarkData.queryThreshold && \.done == false)
                .order(by: \.quantity).top(BenchmarkData.queryLimit)
            guard try table.query(query) == BenchmarkData.query else {
                throw BenchmarkError("the typed query prints \(try table.query(query)), not \(BenchmarkData.query)")
            }
            return Trial(
                operations: size.queries, repeatable: true,
                body: {
                    for _ in 0..<size.queries {
                        let models = try table.read(query)
                        try expectCount(models.count, BenchmarkData.queryLimit, records: size.records, what: "query")
                    }
                }, teardown: { try context.close() })
        },
        prepareBaseline: query(indexed: false).prepareBaseline)

    /// ``pullFull(pageSize:)`` with pages of 1,000 through `ModelTable.pull`. Pulled rows go from
    /// the server's pages to the store as rows; nothing is decoded into models.
    static let typedPullFull = BenchmarkScenario(
        id: "typed-pull-full-1000", title: "typed models: full pull, pages of 1,000", unit: "rows",
        prepareStore: { store, size in
            let remote = try seededRemote(records: size.records)
            let (context, table) = try typedContext(store, remote: remote)
            return Trial(
                operations: size.records,
                body: {
                    let result = try await table.pull(options: PullOptions(pageSize: 1_000))
                    try expectCount(result.stored, size.records, records: size.records, what: "pull")
                }, teardown: { try context.close() })
        },
        prepareBaseline: pullFull(pageSize: 1_000).prepareBaseline)

    /// A sync context over `store` (which it opens) with the benchmark table, and its typed table.
    static func typedContext(_ store: any LocalStore, remote: InMemoryRemote) throws
        -> (SyncContext, ModelTable<BenchmarkModel>)
    {
        let context = try SyncContext(store: store, remote: remote, tables: [BenchmarkData.table(indexed: false)])
        return (context, try context.table(BenchmarkModel.self))
    }
}

