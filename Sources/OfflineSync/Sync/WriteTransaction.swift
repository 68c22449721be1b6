/// Local edits of several tables made atomically: the transaction that
/// ``SyncContext/write(_:)`` hands its body.
///
/// ```swift
/// try context.write { tx in
///     let list = try tx.insert(TodoList(id: "", name: "Groceries"))
///     try tx.insert(TodoItem(id: "", listId: list.id, text: "Buy milk", complete: false))
///     try tx.upsert(settings)                      // inserted or updated, whichever applies
///     try tx.delete(oldItem)
/// }
/// ```
///
/// Each edit writes its rows and queues its operation exactly as the same call on ``SyncTable``
/// or ``ModelTable`` would (the same queue rules, collapsing and errors), inside the one store
/// transaction of the whole body: every edit commits, or none does. Reads through the
/// transaction see its own edits. Typed edits go to the model's ``SyncModel/tableName``; use
/// the untyped methods (with a table name) for a table of another name.
///
/// The transaction is only valid inside the body: a call after the body returned throws
/// ``OfflineSyncError/Code-swift.struct/invalidOperation``.
public struct WriteTransaction {
    let context: SyncContext
    let base: any StoreTransaction
    let scope: Scope

    /// Whether the body is still running.
    final class Scope {
        var isOpen = true
    }

    /// The store transaction, checked to be still open.
    private func transaction() throws -> any StoreTransaction {
        guard scope.isOpen else {
            throw OfflineSyncError(
                .invalidOperation,
                "a WriteTransaction was used after its write(_:) body returned; make every edit inside the body")
        }
        return base
    }

    private func table<Model: SyncModel>(_ model: Model.Type) throws -> ModelTable<Model> {
        try context.table(model)
    }

    // MARK: Models

    /// Inserts a model and queues its insert (see ``ModelTable/insert(_:)-(Model)``). Returns the
    /// model with its id (a new UUID for an empty one).
    @discardableResult
    public func insert<Model: SyncModel>(_ model: Model) throws -> Model {
        try insert([model])[0]
    }

    /// Inserts models and queues their inserts.
    @discardableResult
    public func insert<Model: SyncModel>(_ models: [Model]) throws -> [Model] {
        try table(Model.self).write(.insert, models, in: try transaction())
    }

    /// Replaces an existing model and queues its update (see ``ModelTable/update(_:)-(Model)``).
    public func update<Model: SyncModel>(_ model: Model) throws {
        try update([model])
    }

    /// Replaces existing models and queues their updates.
    public func update<Model: SyncModel>(_ models: [Model]) throws {
        _ = try table(Model.self).write(.update, models, in: try transaction())
    }

    /// Updates the model when its row exists, inserts it otherwise (see
    /// ``ModelTable/upsert(_:)-(Model)``). Returns the model with its id.
    @discardableResult
    public func upsert<Model: SyncModel>(_ model: Model) throws -> Model {
        try upsert([model])[0]
    }

    /// Upserts models.
    @discardableResult
    public func upsert<Model: SyncModel>(_ models: [Model]) throws -> [Model] {
        try table(Model.self).write(.upsert, models, in: try transaction())
    }

    /// Deletes an existing model and queues its delete.
    public func delete<Model: SyncModel>(_ model: Model) throws {
        try delete(Model.self, ids: [model.id])
    }

    /// Deletes the models of a type with these ids and queues their deletes.
    public func delete<Model: SyncModel>(_ model: Model.Type, ids: [String]) throws {
        let table = try table(model)
        _ = try table.untyped.edit(.delete, ids.map { Item(id: $0) }, keepingColumnsOutside: nil, in: try transaction())
    }

    /// The model with this id as the transaction sees it (its own edits included), or `nil`.
    public func lookup<Model: SyncModel>(_ model: Model.Type, id: String) throws -> Model? {
        let table = try table(model)
        guard let item = try transaction().lookup(table: table.name, id: id) else { return nil }
        return try table.models(from: [item]).first
    }

    // MARK: Items

    /// Inserts an item into `table` and queues its insert (see ``SyncTable/insert(_:)-(Item)``).
    @discardableResult
    public func insert(_ item: Item, into table: String) throws -> Item {
        let item = item.id.isEmpty ? item.identified(as: UUIDText.random()) : item
        return try context.table(table).edit(.insert, [item], keepingColumnsOutside: nil, in: try transaction())[0]
    }

    /// Replaces an existing item of `table` and queues its update (see ``SyncTable/update(_:)-(Item)``).
    public func update(_ item: Item, in table: String) throws {
        _ = try context.table(table).edit(.update, [item], keepingColumnsOutside: nil, in: try transaction())
    }

    /// Updates the item when it exists in `table`, inserts it otherwise (see
    /// ``SyncTable/upsert(_:)-(Item)``).
    @discardableResult
    public func upsert(_ item: Item, into table: String) throws -> Item {
        let item = item.id.isEmpty ? item.identified(as: UUIDText.random()) : item
        return try context.table(table).edit(.upsert, [item], keepingColumnsOutside: nil, in: try transaction())[0]
    }

    /// Deletes an existing item of `table` and queues its delete.
    public func delete(id: String, from table: String) throws {
        _ = try context.table(table).edit(.delete, [Item(id: id)], keepingColumnsOutside: nil, in: try transaction())
    }

    /// The item of `table` with this id as the transaction sees it, or `nil`.
    public func lookup(id: String, in table: String) throws -> Item? {
        try transaction().lookup(table: try context.table(table).name, id: id)
    }
}

extension SyncContext {
    /// Runs `body` as one transaction of local edits across tables: every edit it makes through
    /// the ``WriteTransaction`` commits, with its queued operation, or none does (an error thrown
    /// by an edit or by `body` rolls everything back and is rethrown). Change feeds get one
    /// change set and query observers are woken once, when the transaction commits.
    ///
    /// ```swift
    /// try context.write { tx in
    ///     try tx.insert(order)
    ///     try tx.update(customer)
    ///     try tx.delete(cartItem)
    /// }
    /// ```
    ///
    /// Like every local edit it is synchronous and never waits for the network. Make the edits
    /// through `tx`: a ``SyncTable`` or ``ModelTable`` write (or another `write`) inside the body
    /// throws ``OfflineSyncError/Code-swift.struct/invalidOperation``. A store may run the body
    /// again when it had to retry the transaction (LMDB does after growing its map), so the body
    /// should do nothing but read and edit through `tx`.
    @discardableResult
    public func write<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        try write(.localEdit) { transaction in
            let scope = WriteTransaction.Scope()
            defer { scope.isOpen = false }
            return try SyncContext.$writing.withValue(self) {
                try body(WriteTransaction(context: self, base: transaction, scope: scope))
            }
        }
    }
}
