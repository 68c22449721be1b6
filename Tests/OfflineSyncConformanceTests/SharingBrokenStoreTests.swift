import Foundation
import OfflineSync
import OfflineSyncConformance
import OfflineSyncSQLite
import Synchronization
import OfflineSyncTestSupport
import Testing

/// Stores that work alone but break when several instances share one location: the `sharing`
/// group must reject each (the other groups, which use one instance per location, pass them).
@Suite(.tags(.slow), .skippedInFastRuns) struct SharingBrokenStoreTests {
    /// One bug of a store whose instances share a location.
    enum Fault: String, CaseIterable, CustomTestStringConvertible {
        /// Answers `false` to `storedSchemaChanged()` without updating its schema: the protocol's
        /// default, right only for a store nothing else can change.
        case neverReportsSchemaChanges
        /// Keeps each row it looked up and answers it again, missing other instances' writes.
        case cachesLookedUpRows
        /// Keeps its data per instance (a copy of the file, an in-process cache written back never).
        case keepsACopyPerInstance

        var testDescription: String { rawValue }

        /// The case of the `sharing` group expected to catch it.
        var catcher: String {
            switch self {
            case .neverReportsSchemaChanges:
                "storedSchemaChanged() reports another instance's new table and column, and a reopen adopts them"
            case .cachesLookedUpRows, .keepsACopyPerInstance:
                "a second instance sees the first one's tables and committed rows, and the first sees its writes"
            }
        }
    }

    /// An SQLite store (or, for ``Fault/keepsACopyPerInstance``, an in-memory one per instance)
    /// with `fault`.
    final class FaultyStore: LocalStore {
        let base: any LocalStore
        let fault: Fault
        /// Rows by table and id bytes (`String` equality would merge canonically equal ids).
        private let cache = Locked<[[UInt8]: Item]>([:])

        init(_ base: any LocalStore, _ fault: Fault) {
            self.base = base
            self.fault = fault
        }

        var info: StoreInfo { base.info }
        var reservedNamePrefixes: [String] { base.reservedNamePrefixes }
        var schema: StoreSchema { get throws { try base.schema } }
        func open(schema: StoreSchema) throws { try base.open(schema: schema) }
        func read(_ query: Query) throws -> QueryResult { try base.read(query) }
        func lookup(table: String, id: String) throws -> Item? {
            guard fault == .cachesLookedUpRows else { return try base.lookup(table: table, id: id) }
            let key = Array(table.utf8) + [0] + Array(id.utf8)
            if let row = cache.withLock({ $0[key] }) { return row }
            let row = try base.lookup(table: table, id: id)
            if let row { cache.withLock { $0[key] = row } }
            return row
        }
        func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
            // Its own writes do reach its cache (dropped), so it passes every one-instance group.
            defer { cache.withLock { $0.removeAll() } }
            return try base.write(body)
        }
        func close() throws {
            cache.withLock { $0.removeAll() }
            try base.close()
        }
        var isConfinedToInstance: Bool { base.isConfinedToInstance }
        func storedSchemaChanged() throws -> Bool {
            fault == .neverReportsSchemaChanges ? false : try base.storedSchemaChanged()
        }
    }

    static func path() throws -> String { try Backends.freshDatabasePath() }

    func suite(_ fault: Fault) -> ConformanceSuite {
        let make: @Sendable () throws -> any LocalStore = {
            fault == .keepsACopyPerInstance
                ? FaultyStore(InMemoryStore(), fault) : FaultyStore(SQLiteStore(path: try Self.path()), fault)
        }
        var suite = ConformanceSuite(storeName: "sharing-\(fault)", makeStore: make)
        suite.makeStoreSharingLocation = { store in
            guard let store = store as? FaultyStore else { throw OfflineSyncError(.invalidOperation, "not a FaultyStore") }
            if let sqlite = store.base as? SQLiteStore { return FaultyStore(SQLiteStore(path: sqlite.path), fault) }
            return FaultyStore(InMemoryStore(), fault)
        }
        return suite
    }

    @Test("the sharing group rejects a store that breaks only when instances share a location", arguments: Fault.allCases)
    func rejected(_ fault: Fault) async {
        let result = await suite(fault).run(group: "sharing", cases: [fault.catcher])
        let failed = result.cases.filter {
            if case .failed = $0.outcome { return true }
            return false
        }.map(\.name)
        #expect(failed.contains(fault.catcher), "\(fault): \(result)")
    }

    @Test("each of them passes the groups that use one instance per location", arguments: Fault.allCases)
    func passesAlone(_ fault: Fault) async {
        for group in ["schema", "crud", "transactions"] {
            let result = await suite(fault).run(group: group)
            #expect(result.failed == 0, "\(fault) \(group): \(result.failureMessages)")
        }
    }
}
