public import OfflineSync
import Synchronization

/// A faithful in-process server: a ``TableService`` over an `InMemoryStore`, with fault
/// injection and added latency so every failure path of sync can be tested.
///
/// Paging through it costs no scan of the table: the pages of a pull are bounded on their first
/// ordering key (`updatedAt ge T` ordered by `updatedAt`, or `id gt L` ordered by `id`), which
/// `InMemoryStore` answers with a binary search over a sorted copy kept until the next write.
///
/// ```swift
/// let remote = try InMemoryRemote(tables: [todo])
/// remote.inject(RemoteFault(.network, times: nil))          // offline
/// remote.inject(RemoteFault(.status(500)) { $0.operation == .update && $0.itemId == "a" })
/// try remote.changeFromAnotherDevice(table: "todo", id: "a") { $0["text"] = "edited elsewhere" }
/// ```
public final class InMemoryRemote: RemoteService {
    private struct State {
        var faults: [RemoteFault] = [] {
            didSet { faultsVersion += 1 }
        }
        /// Bumped on every change of ``faults``, so that a rule chosen outside the lock is only
        /// used up if the rules did not change meanwhile.
        var faultsVersion = 0
        var latency: Duration = .zero
        var calls: [RemoteCall.Operation: Int] = [:]
        var observer: (@Sendable (RemoteCall) -> Void)?
    }

    /// The server engine; read or write it directly to see or change the server's data.
    public let service: TableService
    private let state = Locked(State())

    /// Creates a server holding `tables` (declared synced), empty.
    public init(tables: [TableSchema], options: TableService.Options = TableService.Options()) throws {
        let store = InMemoryStore()
        try store.open(schema: StoreSchema(tables))
        service = try TableService(store: store, options: options)
    }

    // MARK: Fault injection

    /// Adds a fault rule; rules are tried in the order they were added, the first match applies.
    public func inject(_ fault: RemoteFault) {
        state.withLock { $0.faults.append(fault) }
    }

    /// Makes the next `count` calls fail with `failure`.
    public func failNext(_ count: Int = 1, with failure: RemoteFailure) {
        inject(RemoteFault(failure, times: count))
    }

    /// Every call fails with a network error while `true` (all other rules are removed).
    public func setOffline(_ offline: Bool) {
        state.withLock { $0.faults = offline ? [RemoteFault(.network, times: nil)] : [] }
    }

    /// Removes every fault rule.
    public func clearFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// Delay added before every call.
    public func setLatency(_ latency: Duration) {
        state.withLock { $0.latency = latency }
    }

    /// Runs `observer` at the start of every call, before faults and latency (`nil` removes it).
    /// Tests use it to act at a precise point, e.g. edit locally while a pull is waiting for a page.
    public func observeCalls(_ observer: (@Sendable (RemoteCall) -> Void)?) {
        state.withLock { $0.observer = observer }
    }

    /// How many calls of one kind were made (failed ones included).
    public func callCount(_ operation: RemoteCall.Operation) -> Int {
        state.withLock { $0.calls[operation] ?? 0 }
    }

    /// Calls of every kind made so far.
    public var totalCallCount: Int {
        state.withLock { $0.calls.values.reduce(0, +) }
    }

    // MARK: Server-side access

    /// Changes an item on the server as another client would (a new `updatedAt` and `version`),
    /// and returns the server's copy.
    @discardableResult
    public func changeFromAnotherDevice(table: String, id: String, _ change: (inout Item) -> Void) throws -> Item {
        guard var item = try service.lookup(id: id, in: table) else {
            throw RemoteError(.notFound, status: 404, message: "the server has no item '\(id)' in '\(table)' to change")
        }
        change(&item)
        return try service.update(item, in: table, ifMatch: nil)
    }

    /// Every row of a server table in id order, soft-deleted ones included unless asked.
    public func items(in table: String, includeDeleted: Bool = true) throws -> [Item] {
        var filter: FilterExpression?
        if !includeDeleted {
            filter = .comparison(.column(SystemProperty.deleted.rawValue), .ne, .literal(.bool(true)))
        }
        return try service.store.read(Query(table: table, filter: filter, orderBy: [SortKey("id")])).items
    }

    // MARK: RemoteService

    /// One page, through ``TableService/readPage(_:includeDeleted:owner:)``, after faults and latency.
    public func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        try await perform(RemoteCall(.read, table: query.table)) {
            try service.readPage(query, includeDeleted: includeDeleted)
        }
    }

    /// Inserts through ``TableService/insert(_:into:creatingTable:owner:)``, after faults and latency.
    public func insert(_ item: Item, into table: String) async throws -> Item {
        try await perform(RemoteCall(.insert, table: table, itemId: item.id)) { try service.insert(item, into: table) }
    }

    /// Updates through ``TableService/update(_:in:ifMatch:owner:)``, after faults and latency.
    public func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        try await perform(RemoteCall(.update, table: table, itemId: item.id)) {
            try service.update(item, in: table, ifMatch: version)
        }
    }

    /// Soft-deletes through ``TableService/delete(id:from:ifMatch:owner:)``, after faults and latency.
    public func delete(id: String, from table: String, ifMatch version: String?) async throws {
        try await perform(RemoteCall(.delete, table: table, itemId: id)) {
            _ = try service.delete(id: id, from: table, ifMatch: version)
        }
    }

    /// Looks up through ``TableService/lookup(id:in:includeDeleted:owner:)``, after faults and latency.
    public func lookup(id: String, in table: String) async throws -> Item? {
        try await perform(RemoteCall(.lookup, table: table, itemId: id)) { try service.lookup(id: id, in: table) }
    }

    private func perform<Result>(_ call: RemoteCall, _ body: () throws -> Result) async throws -> Result {
        state.withLock { $0.observer }?(call)
        let latency = state.withLock { state in
            state.calls[call.operation, default: 0] += 1
            return state.latency
        }
        // The rules' predicates run outside the lock (one may call this remote, e.g. to read its
        // call counts); the chosen rule is used up only if the rules did not change meanwhile.
        var fault: RemoteFault?
        while true {
            let (faults, version) = state.withLock { ($0.faults, $0.faultsVersion) }
            let index = faults.firstIndex { $0.matches(call) }
            let used = state.withLock { state -> Bool in
                guard state.faultsVersion == version else { return false }
                guard let index else { return true }
                if let remaining = state.faults[index].remaining {
                    if remaining <= 1 {
                        state.faults.remove(at: index)
                    } else {
                        state.faults[index].remaining = remaining - 1
                    }
                }
                return true
            }
            if used {
                fault = index.map { faults[$0] }
                break
            }
        }
        if latency > .zero { try await Task.sleep(for: latency) }
        guard let fault else { return try body() }
        if fault.afterApplying { _ = try? body() }
        throw fault.failure.error(for: call)
    }
}
