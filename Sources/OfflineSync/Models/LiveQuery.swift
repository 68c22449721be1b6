public import Observation

/// The models a typed query reads, kept up to date on the main actor: an `@Observable` object a
/// SwiftUI view shows directly (as SQLiteData's `@FetchAll` or SwiftData's `@Query` are shown).
///
/// ```swift
/// @MainActor
/// final class TodoListModel {
///     let open: LiveQuery<TodoItem>
///
///     init(todos: ModelTable<TodoItem>) throws {
///         open = try LiveQuery(todos, .filter(\.complete == false).order(by: \.text))
///     }
/// }
/// // In a SwiftUI view: List(model.open.models) { Text($0.text) }
/// ```
///
/// It runs a ``ModelObservation`` of the query on a task of its own (the query is read off the main
/// actor) and assigns each new result to ``models`` on the main actor, so observers of the
/// Observation framework (SwiftUI, `withObservationTracking`) see one change per new result, with
/// the same promises: the current models first, then fresh ones after each committed transaction
/// that changed the table, bursts coalesced. It stops when it is released or ``cancel()`` is called,
/// when the context closes, and when reading fails (``error`` then says why). A row that cannot be
/// read as `Model` is treated as the table's ``ModelTable/undecodableRows`` says: with
/// ``UndecodableRowPolicy/skip(reporting:)`` the query goes on without it.
@MainActor
@Observable
public final class LiveQuery<Model: SyncModel> {
    /// The models matching the query, in its order (empty until the first result arrived).
    public private(set) var models: [Model] = []
    /// `true` once the first result arrived.
    public private(set) var isLoaded = false
    /// The error that ended the query (a row that cannot be read, a store error); `nil` while it
    /// runs.
    public private(set) var error: (any Error)?

    @ObservationIgnored private var task: Task<Void, Never>?

    /// Starts observing `query` on `table` (every model by default); the first result arrives
    /// shortly after, on the main actor. Throws ``OfflineSyncError/Code-swift.struct/invalidQuery``
    /// for a key path that does not read a stored column.
    public init(_ table: ModelTable<Model>, _ query: ModelQuery<Model> = .all) throws {
        let observation = try table.observe(query)
        task = Task.detached { [weak self] in
            do {
                for try await models in observation {
                    guard let self else { return }
                    await self.receive(models)
                }
            } catch {
                await self?.end(error)
            }
        }
    }

    /// The models, as the number matching the query (the same as `models.count`).
    public var count: Int { models.count }

    /// Stops observing; ``models`` keeps the last result.
    public func cancel() {
        task?.cancel()
        task = nil
    }

    deinit {
        task?.cancel()
    }

    private func receive(_ models: [Model]) {
        self.models = models
        if !isLoaded { isLoaded = true }
    }

    private func end(_ error: any Error) {
        self.error = error
    }
}
