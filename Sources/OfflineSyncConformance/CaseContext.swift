import OfflineSync
import Synchronization

/// What a conformance case works with: stores from the suite's factory and expectations that
/// collect failure messages instead of stopping at the first one.
final class CaseContext: Sendable {
    let suite: ConformanceSuite
    let caseName: String
    private let state = Mutex<(failures: [String], stores: [any LocalStore])>(([], []))

    init(suite: ConformanceSuite, caseName: String) {
        self.suite = suite
        self.caseName = caseName
    }

    var failures: [String] { state.withLock { $0.failures } }

    /// A new, unopened store from the suite's factory; closed when the case ends.
    func makeStore() throws -> any LocalStore {
        let store = try suite.makeStore()
        state.withLock { $0.stores.append(store) }
        return store
    }

    /// A new store opened with `schema`.
    func openStore(_ schema: StoreSchema) throws -> any LocalStore {
        let store = try makeStore()
        try store.open(schema: schema)
        return store
    }

    func closeStores() {
        let stores = state.withLock { state in
            defer { state.stores.removeAll() }
            return state.stores
        }
        for store in stores {
            do { try store.close() } catch { fail("close() threw \(error)") }
        }
    }

    func fail(_ message: String) {
        state.withLock { $0.failures.append(message) }
    }

    /// Records `message` when `condition` is false; returns `condition`.
    @discardableResult
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) -> Bool {
        if !condition { fail(message()) }
        return condition
    }

    /// Records a failure naming `what`, the expected and the actual value when they differ.
    @discardableResult
    func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: @autoclosure () -> String) -> Bool {
        expect(actual == expected, "\(what()): expected \(expected), got \(actual)")
    }

    /// Expects `body` to throw; when `code` is given, an ``OfflineSyncError`` of that code.
    /// Returns the error thrown, if any.
    @discardableResult
    func expectThrows<T>(_ what: @autoclosure () -> String, code: OfflineSyncError.Code? = nil,
                         _ body: () throws -> T) -> (any Error)? {
        do {
            let value = try body()
            fail("\(what()): expected an error, but it succeeded and returned \(value)")
            return nil
        } catch {
            if let code {
                if let error = error as? OfflineSyncError {
                    expect(error.code == code, "\(what()): expected a \(code) error, got \(error.code): \(error.message)")
                } else {
                    fail("\(what()): expected an OfflineSyncError \(code), got \(type(of: error)): \(error)")
                }
            }
            return error
        }
    }
}
