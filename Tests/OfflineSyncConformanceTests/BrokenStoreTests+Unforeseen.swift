import Foundation
import OfflineSync
import OfflineSyncConformance
import OfflineSyncSQLite
import Testing

/// The mutation check grown the way a backend author meets the suite: broken stores written after
/// the suite, each with a bug the cases were not written against (``UnforeseenBrokenStore``).
extension BrokenStoreTests {
    @Test(arguments: UnforeseenBrokenStore.Fault.allCases)
    func theStoreTierCatchesTheUnforeseenBrokenStore(_ fault: UnforeseenBrokenStore.Fault) async {
        var failing: [String] = []
        _ = await Self.unforeseenSuite(fault).run(tier: .store) { result in
            failing += result.cases.filter {
                if case .failed = $0.outcome { return true }
                return false
            }.map { "\(result.group)/\($0.name)" }
        }
        #expect(!failing.isEmpty, "the store tier passes a store that \(fault)")
        print("unforeseen \(fault): caught by \(failing.count) cases: \(failing.joined(separator: "; "))")
    }

    /// A suite over new stores with `fault`; for the faults only a second instance shows, a second
    /// instance over a store's location.
    static func unforeseenSuite(_ fault: UnforeseenBrokenStore.Fault) -> ConformanceSuite {
        var suite = ConformanceSuite(storeName: "unforeseen-\(fault)") {
            try UnforeseenBrokenStore.make(fault, path: Backends.freshDatabasePath)
        }
        if fault.needsASecondInstance {
            suite.makeStoreSharingLocation = { store in
                guard let store = store as? UnforeseenBrokenStore, let inner = store.inner as? SQLiteStore else {
                    throw OfflineSyncError(.invalidOperation, "not a store of this suite: \(type(of: store))")
                }
                return UnforeseenBrokenStore(fault, wrapping: SQLiteStore(path: inner.path))
            }
        }
        return suite
    }
}
