/// A typed query kept up to date: an `AsyncSequence` returned by ``ModelTable/observe(_:)`` that
/// yields the models matching the query at once, then the fresh models after each committed
/// transaction of the context that changed the table, whoever wrote it.
///
/// It is a ``QueryObservation`` whose results are decoded into `Model` values, with the same
/// promises: the current result first, nothing missed between it and the first change, bursts
/// coalesced into the latest result (a pull or push wakes it once, when it ends), only its own
/// table, and cancellation of the iterating task ending the sequence and unregistering it.
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

        /// The current models on the first call; afterwards the models of the next result whose
        /// rows differ from the last one's (a change in a column or system property the model
        /// does not hold also yields). `nil` once the observation ended (task cancelled, context
        /// closed).
        public mutating func next() async throws -> [Model]? {
            guard let result = try await base.next() else { return nil }
            return try table.models(from: result.items)
        }
    }
}

extension ModelTable {
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
