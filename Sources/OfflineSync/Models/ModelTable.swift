/// One app table seen through a ``SyncContext`` as values of a ``SyncModel`` type: the typed form of
/// ``SyncTable``, with the same transactions, queue rules and errors.
///
/// ```swift
/// let todos = try context.table(TodoItem.self)
/// let added = try todos.insert(TodoItem(id: "", text: "buy milk", complete: false))  // id assigned
/// var done = added
/// done.complete = true
/// try todos.update(done)
/// let open = try todos.read(.filter(\.complete == false).order(by: \.text).top(50))
/// try await todos.pull(queryId: "all")
/// ```
///
/// Models are encoded straight into rows and decoded straight from them (no JSON text except for
/// nested values stored in `json` columns). System properties the model declares (`createdAt`,
/// `updatedAt`, `version`, `deleted`) are read from the row and never written: an insert leaves
/// them to the server, an update keeps the stored ones. An update also keeps stored columns the
/// model does not have, so a model that knows fewer columns than the table erases none.
public struct ModelTable<Model: SyncModel>: Sendable {
    /// The same table, untyped.
    public let untyped: SyncTable
    let layout: ModelLayout<Model>
    /// The table's declared row layout, which models are encoded onto.
    let rowLayout: RowLayout
    /// What typed reads and observations of this table do with a row that cannot be read as
    /// `Model` (``UndecodableRowPolicy/fail`` by default).
    public var undecodableRows: UndecodableRowPolicy = .fail

    /// The table name.
    public var name: String { untyped.name }

    init(untyped: SyncTable, layout: ModelLayout<Model>, rowLayout: RowLayout) {
        self.untyped = untyped
        self.layout = layout
        self.rowLayout = rowLayout
    }

    /// Inserts a model and queues its insert; an empty `id` is replaced by a new UUID. Returns the
    /// model with its id: for a made-up id the model read back from the stored row; otherwise the
    /// model as given, whose system properties (which an insert never writes) and sub-millisecond
    /// dates may differ from the stored row (read it back with ``lookup(id:)`` to see that). An
    /// id that already exists throws ``OfflineSyncError/Code-swift.struct/conflict``.
    @discardableResult
    public func insert(_ model: Model) throws -> Model {
        try insert([model])[0]
    }

    /// Inserts models in one transaction (all or none) and queues their inserts; returns them as
    /// the single-model `insert` does (given models are not decoded again, which would cost a decode
    /// per row).
    @discardableResult
    public func insert(_ models: [Model]) throws -> [Model] {
        guard !models.isEmpty else { return [] }
        // Written or encoded a chunk at a time into reused rows (the general path below makes
        // up the ids a model leaves empty).
        if try layout.insertEncoded(models, into: untyped, layout: rowLayout) { return models }
        let rows = try rows(of: models)
        let written = try untyped.insert(rows)
        var stored = models
        // Which ids were made up is read from the rows: reading a model's `id` copies the model
        // first (this generic code usually runs unspecialized).
        for index in rows.indices where rows[index].id.isEmpty {
            stored[index] = try layout.model(from: written[index], table: name)
        }
        return stored
    }

    /// Replaces an existing model and queues its update. Stored system properties and columns the
    /// model does not hold are kept. A missing id throws ``OfflineSyncError/Code-swift.struct/conflict``.
    public func update(_ model: Model) throws {
        try update([model])
    }

    /// Replaces existing models in one transaction (all or none) and queues their updates.
    public func update(_ models: [Model]) throws {
        try untyped.update(
            try rows(of: models), keepingColumnsOutside: layout.columnNames)
    }

    /// Writes a model whether or not its row exists: updates it (as ``update(_:)-(Model)`` does,
    /// keeping stored system properties and the columns the model does not hold) when the table
    /// holds its id, inserts it otherwise (an empty `id` is replaced by a new UUID), and queues the
    /// matching operation. Returns the model with its id. An id whose delete is still queued throws
    /// ``OfflineSyncError/Code-swift.struct/invalidOperation``, as an insert would.
    @discardableResult
    public func upsert(_ model: Model) throws -> Model {
        try upsert([model])[0]
    }

    /// Upserts models in one transaction (all or none), each as ``upsert(_:)-(Model)`` does.
    @discardableResult
    public func upsert(_ models: [Model]) throws -> [Model] {
        guard !models.isEmpty else { return [] }
        return try untyped.context.write(.localEdit) { transaction in
            try write(.upsert, models, in: transaction)
        }
    }

    /// Writes models by `edit` inside the caller's write transaction (see
    /// ``SyncTable/edit(_:_:keepingColumnsOutside:in:)``); returns them with their ids, a model
    /// whose id was made up read back from its stored row.
    func write(_ edit: LocalEdit, _ models: [Model], in transaction: any StoreTransaction) throws -> [Model] {
        guard !models.isEmpty else { return [] }
        var rows = try rows(of: models)
        var madeUp: [Int] = []
        if edit == .insert || edit == .upsert {
            for index in rows.indices where rows[index].id.isEmpty {
                rows[index].id = UUIDText.random()
                madeUp.append(index)
            }
        }
        let written = try untyped.edit(
            edit, rows, keepingColumnsOutside: edit == .insert ? nil : layout.columnNames, in: transaction)
        guard !madeUp.isEmpty else { return models }
        var stored = models
        for index in madeUp { stored[index] = try layout.model(from: written[index], table: name) }
        return stored
    }

    /// Deletes an existing model and queues its delete. A missing id throws
    /// ``OfflineSyncError/Code-swift.struct/conflict``.
    public func delete(_ model: Model) throws {
        try untyped.delete(id: model.id)
    }

    /// Deletes the models with these ids in one transaction (all or none) and queues their deletes.
    public func delete(ids: [String]) throws {
        try untyped.delete(ids: ids)
    }

    /// The local model with this id, or `nil` (also when the row cannot be read as `Model` and
    /// ``undecodableRows`` skips such rows).
    public func lookup(id: String) throws -> Model? {
        guard let item = try untyped.lookup(id: id) else { return nil }
        return try models(from: [item]).first
    }

    /// Reads local models (every model by default). A row that cannot be read as `Model` (a
    /// non-optional property with no value and no declared default, a value of another type)
    /// throws ``OfflineSyncError/Code-swift.struct/invalidValue`` naming the item and the column,
    /// or is left out and reported, as ``undecodableRows`` says.
    public func read(_ query: ModelQuery<Model> = .all) throws -> [Model] {
        try models(from: untyped.read(self.query(query)).items)
    }

    /// The first local model the query reads (its ordering, then `id`), or `nil` when none
    /// matches. A row that cannot be read is treated as by ``read(_:)``: when this table skips such
    /// rows, the first readable one is returned (every row of the query is read then).
    public func first(_ query: ModelQuery<Model> = .all) throws -> Model? {
        if case .fail = undecodableRows.kind { return try read(query.top(1)).first }
        return try read(query).first
    }

    /// The number of local models matching the query's condition (its ordering and paging
    /// apply: `skip` and `top` bound the count as they bound a read). No row is read as a model.
    public func count(_ query: ModelQuery<Model> = .all) throws -> Int {
        var counted = try self.query(query)
        counted.orderBy = []
        counted.selection = []
        counted.includeTotalCount = false
        guard counted.skip > 0 || counted.top != nil else {
            return try untyped.context.store.count(name, filter: counted.filter)
        }
        return try untyped.read(counted).items.count
    }

    /// Pulls the server's records matching `query` (every record by default) into the local
    /// table; see ``SyncTable/pull(_:queryId:options:)``.
    @discardableResult
    public func pull(_ query: ModelQuery<Model> = .all, queryId: String? = nil, options: PullOptions = PullOptions())
        async throws -> PullResult
    {
        try await untyped.pull(self.query(query), queryId: queryId, options: options)
    }

    /// Removes local models matching `query` without queuing operations; see
    /// ``SyncTable/purge(_:queryId:force:)``.
    @discardableResult
    public func purge(_ query: ModelQuery<Model> = .all, queryId: String? = nil, force: Bool = false) async throws
        -> Int
    {
        try await untyped.purge(self.query(query), queryId: queryId, force: force)
    }

    /// The untyped ``Query`` of a typed query on this table (key paths turned into column names,
    /// values into stored values). Throws ``OfflineSyncError/Code-swift.struct/invalidQuery`` for a
    /// key path that does not read a stored column.
    public func query(_ query: ModelQuery<Model>) throws -> Query {
        try query.query(table: name, layout: layout)
    }

    /// The rows of models, as an insert or update writes them (see
    /// ``ModelLayout/items(from:table:layout:)``).
    private func rows(of models: [Model]) throws -> [Item] {
        try layout.items(from: models, table: name, layout: rowLayout)
    }

    /// The row of a model, as an insert or update would write it (system properties left out).
    public func item(from model: Model) throws -> Item {
        try layout.item(from: model, table: name, layout: rowLayout)
    }

    /// The models of rows of this table, e.g. of a ``QueryResult``; a row that cannot be read as
    /// `Model` is treated as ``undecodableRows`` says.
    public func models(from items: [Item]) throws -> [Model] {
        try layout.models(from: items, table: name, policy: undecodableRows)
    }
}

extension SyncContext {
    /// The table of a model type: ``SyncModel/tableName`` unless `name` is given. The store must
    /// declare it with every column the model holds, at the model's types (declare it with
    /// ``TableSchema/init(_:name:)``); otherwise this throws naming the column.
    ///
    /// - Parameters:
    ///   - model: the model type.
    ///   - name: the table's name, when it is not ``SyncModel/tableName``.
    ///   - undecodableRows: what reads and observations do with a row that cannot be read as
    ///     `Model` (see ``ModelTable/undecodableRows``): throw (the default), or skip it and report it.
    public func table<Model: SyncModel>(
        _ model: Model.Type, name: String? = nil, undecodableRows: UndecodableRowPolicy = .fail
    ) throws -> ModelTable<Model> {
        let untyped = try table(name ?? Model.tableName)
        let layout = try ModelLayout<Model>.shared()
        let schema = try queue.schema.requireTable(untyped.name)
        try layout.check(against: schema)
        var table = ModelTable(untyped: untyped, layout: layout, rowLayout: schema.rowLayout)
        table.undecodableRows = undecodableRows
        return table
    }
}
