/// A typed query kept up to date: an `AsyncSequence` returned by ``ModelTable/observe(_:)`` that
/// yields the models matching the query at once, then the fresh models after each committed
/// transaction of the context that changed the table, whoever wrote it.
///
/// It is a ``QueryObservation`` whose results are decoded into `Model` values, with the same
/// promises: the current result first, nothing missed between it and the first change, bursts
/// coalesced into the latest result (a pull or push wakes it once, when it ends), only its own
/// table, and cancellation of the iterating task ending the sequence and unregistering it. A
/// result that reads as the models yielded last (a push changed only system properties the model
/// does not declare) is not yielded again.
///
/// ```swift
/// let todos = try context.table(TodoItem.self)
/// for try await open in try todos.observe(.filter(\.complete == false).order(by: \.text)) {
///     render(open)  // [TodoItem]
/// }
/// ```
///
/// A row that cannot be read as `Model` ends the iteration by throwing
/// ``OfflineSyncError/Code-swift.struct/invalidValue`` naming the item and the column, as
/// ``ModelTable/read(_:)`` does.
public struct ModelObservation<Model: SyncModel>: AsyncSequence, Sendable {
    /// The element type: the models matching the query, in the query's order.
    public typealias Element = [Model]

    /// The untyped observation underneath (its ``QueryObservation/query`` is the query run).
    public let untyped: QueryObservation
    let table: ModelTable<Model>

    /// Starts observing: the first `next()` registers and reads the current models.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: untyped.makeAsyncIterator(), table: table)
    }

    /// Yields the current models, then fresh ones.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        var base: QueryObservation.Iterator
        let table: ModelTable<Model>
        /// The rows of the models yielded last.
        var yielded: [Item]?

        /// The current models on the first call; afterwards the models of the next result that
        /// differs from the last one yielded in what the model holds: its ids, order, columns and
        /// the system properties it declares. A change only in columns or system properties the
        /// model does not hold (a push setting `version` and `updatedAt`, say) yields nothing.
        /// `nil` once the observation ended (task cancelled, context closed).
        public mutating func next() async throws -> [Model]? {
            while true {
                guard let result = try await base.next() else { return nil }
                if let yielded, table.holdTheSameModels(yielded, result.items) { continue }
                yielded = result.items
                return try table.models(from: result.items)
            }
        }
    }
}

extension ModelTable {
    /// `true` when both row lists read as the same models: the same ids in the same order, and
    /// equal values in every column the model holds (values compared exactly, as stored).
    func holdTheSameModels(_ old: [Item], _ new: [Item]) -> Bool {
        guard old.count == new.count else { return false }
        for index in old.indices {
            guard old[index].id == new[index].id else { return false }
            for column in layout.columns where old[index][column.name] != new[index][column.name] {
                return false
            }
        }
        return true
    }

    /// Observes a typed query (every model by default): the matching models at once, then fresh
    /// ones after each committed change to the table (see ``ModelObservation``).
    ///
    /// ```swift
    /// let watcher = Task {
    ///     for try await open in try todos.observe(.filter(\.complete == false).order(by: \.text)) {
    ///         print(open.map(\.text))
    ///     }
    /// }
    /// try todos.insert(TodoItem(id: "", text: "buy milk", complete: false))  // → a new [TodoItem]
    /// watcher.cancel()  // ends the loop and unregisters the observer
    /// ```
    ///
    /// Throws ``OfflineSyncError/Code-swift.struct/invalidQuery`` for a key path that does not
    /// read a stored column, before anything is registered.
    public func observe(_ query: ModelQuery<Model> = .all) throws -> ModelObservation<Model> {
        ModelObservation(untyped: try untyped.observe(self.query(query)), table: self)
    }
}
