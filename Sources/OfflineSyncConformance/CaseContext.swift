import OfflineSync
import Synchronization

/// What a conformance case works with: stores from the suite's factory and expectations that
/// collect failure messages instead of stopping at the first one.
///
/// Every message a case records names the operation, the table and the key (id, column or query)
/// it was about, so a failure reads on its own, e.g.
/// `lookup(values, id 'd-1') column 'd': expected -0.0, got 0.0`.
final class CaseContext: Sendable {
    let suite: ConformanceSuite
    let caseName: String
    private let state = Locked<(failures: [String], stores: [any LocalStore])>(([], []))

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

    /// A new, unopened store over the location of `store`, from the suite's
    /// ``ConformanceSuite/makeStoreSharingLocation``; closed when the case ends.
    func makeStore(sharingLocationOf store: any LocalStore) throws -> any LocalStore {
        guard let make = suite.makeStoreSharingLocation else {
            throw OfflineSyncError(.invalidOperation, "the suite has no makeStoreSharingLocation")
        }
        let other = try make(store)
        state.withLock { $0.stores.append(other) }
        return other
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

    /// Records a failure when an operation that answered `nil` (it failed, and said so already) or
    /// a value other than `expected`.
    @discardableResult
    func expectEqual<T: Equatable>(_ actual: T?, _ expected: T, _ what: @autoclosure () -> String) -> Bool {
        expect(actual == expected, "\(what()): expected \(expected), got \(actual.map { "\($0)" } ?? "nothing")")
    }

    /// Runs `body`; when it throws, records `what` with the error and returns `nil`.
    func attempt<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            fail("\(what()) threw \(Self.describe(error))")
            return nil
        }
    }

    /// Runs `body` in a transaction of `store` that its end rolls back (by throwing ``RollBack``);
    /// records `what` with the error when anything else is thrown.
    func rollingBack(
        _ store: any LocalStore, _ what: @autoclosure () -> String, _ body: (any StoreTransaction) throws -> Void
    ) {
        do {
            try store.write { transaction in
                try body(transaction)
                throw RollBack()
            }
        } catch is RollBack {
        } catch {
            fail("\(what()) threw \(Self.describe(error))")
        }
    }

    /// Expects `body` to throw; when `code` is given, an ``OfflineSyncError`` of that code, and
    /// when `mentioning` is given, an error whose text contains each of those words (the table,
    /// column or id at fault). Returns the error thrown, if any.
    @discardableResult
    func expectThrows<T>(
        _ what: @autoclosure () -> String, code: OfflineSyncError.Code? = nil,
        mentioning words: [String] = [], _ body: () throws -> T
    ) -> (any Error)? {
        do {
            let value = try body()
            fail(
                "\(what()): expected \(code.map { "a \($0) error" } ?? "an error"), but it succeeded and returned \(value)"
            )
            return nil
        } catch {
            if let code {
                if let error = error as? OfflineSyncError {
                    expect(
                        error.code == code, "\(what()): expected a \(code) error, got \(error.code): \(error.message)")
                } else {
                    fail("\(what()): expected an OfflineSyncError \(code), got \(type(of: error)): \(error)")
                }
            }
            let text = Self.describe(error)
            for word in words where !text.contains(word) {
                fail("\(what()): the error should name '\(word)' but says: \(text)")
            }
            return error
        }
    }

    /// The text of an error as a person reads it (an ``OfflineSyncError`` shows code and message).
    static func describe(_ error: any Error) -> String {
        if let error = error as? OfflineSyncError { return "\(error.code): \(error.message)" }
        return String(describing: error)
    }
}
