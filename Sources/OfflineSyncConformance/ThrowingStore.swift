public import OfflineSync
import Synchronization

/// A store that wraps another and makes a chosen write transaction fail, as a crash or a full
/// disk would: the wrapped store rolls the transaction back and the error reaches the caller.
///
/// Everything else is passed through. Used by the sync tier to prove that an interrupted pull or
/// push loses nothing, on whatever store is under test.
public final class ThrowingStore: LocalStore {
    /// The wrapped store.
    public let base: any LocalStore
    private let plan = Locked<(wait: Int, failures: Int)>((0, 0))
    private let readHook = Locked<(@Sendable (Query) -> Void)?>(nil)

    /// Wraps `base`.
    public init(wrapping base: any LocalStore) {
        self.base = base
    }

    /// Makes the `n`-th write transaction from now (1 = the next one) and the `count - 1` after
    /// it throw after their bodies ran, so their writes are rolled back. Later ones succeed.
    public func failWrite(_ n: Int, count: Int = 1) {
        plan.withLock { $0 = (max(1, n) - 1, max(1, count)) }
    }

    /// The error a failing transaction throws.
    public static let injectedFailure = OfflineSyncError(.storage, "injected storage failure (ThrowingStore)")

    /// The wrapped store's information.
    public var info: StoreInfo { base.info }
    /// The wrapped store's schema.
    public var schema: StoreSchema { get throws { try base.schema } }
    /// Opens the wrapped store.
    public func open(schema: StoreSchema) throws { try base.open(schema: schema) }
    /// Reads from the wrapped store (then runs the hook set with `afterRead(_:)`, if any).
    public func read(_ query: Query) throws -> QueryResult {
        let result = try base.read(query)
        if let hook = readHook.withLock({ $0 }) { hook(query) }
        return result
    }

    /// Runs `hook` after each read has returned its result from the wrapped store (`nil` stops).
    /// The observation cases use it to commit a write between a read and its use.
    func afterRead(_ hook: (@Sendable (Query) -> Void)?) {
        readHook.withLock { $0 = hook }
    }
    /// Looks up in the wrapped store.
    public func lookup(table: String, id: String) throws -> Item? { try base.lookup(table: table, id: id) }
    /// Closes the wrapped store.
    public func close() throws { try base.close() }
    /// Whether the wrapped store is confined to its instance.
    public var isConfinedToInstance: Bool { base.isConfinedToInstance }
    /// Whether the wrapped store's stored schema changed elsewhere.
    public func storedSchemaChanged() throws -> Bool { try base.storedSchemaChanged() }

    /// Runs a transaction on the wrapped store, failing it when planned (see ``failWrite(_:count:)``).
    public func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        let fails = plan.withLock { plan -> Bool in
            if plan.wait > 0 {
                plan.wait -= 1
                return false
            }
            guard plan.failures > 0 else { return false }
            plan.failures -= 1
            return true
        }
        return try base.write { transaction in
            let result = try body(transaction)
            if fails { throw ThrowingStore.injectedFailure }
            return result
        }
    }
}
