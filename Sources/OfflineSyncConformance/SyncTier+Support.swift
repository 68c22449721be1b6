import OfflineSync
import OfflineSyncService
import Synchronization

/// The tables, store, remote and context a sync-tier case works with.
struct SyncFixture {
    let store: ThrowingStore
    let remote: InMemoryRemote
    let context: SyncContext
    let todo: SyncTable
    let tag: SyncTable

    static let todoSchema = TableSchema(
        "todo",
        columns: [
            Column("text", .string), Column("complete", .bool), Column("priority", .integer),
        ])
    static let tagSchema = TableSchema("tag", columns: [Column("name", .string)])

    /// A fresh store from the suite's factory (wrapped so writes can be failed), a fresh remote.
    static func make(
        _ c: CaseContext, handler: any PushHandler = DefaultPushHandler(),
        remoteOptions: TableService.Options = TableService.Options()
    ) throws -> SyncFixture {
        let store = ThrowingStore(wrapping: try c.makeStore())
        let remote = try InMemoryRemote(tables: [todoSchema, tagSchema], options: remoteOptions)
        return try make(store: store, remote: remote, handler: handler)
    }

    static func make(
        store: ThrowingStore, remote: InMemoryRemote, handler: any PushHandler = DefaultPushHandler(),
        extraTables: [TableSchema] = []
    ) throws -> SyncFixture {
        let context = try SyncContext(
            store: store, remote: remote, tables: [todoSchema, tagSchema] + extraTables, pushHandler: handler)
        return SyncFixture(
            store: store, remote: remote, context: context, todo: try context.table("todo"),
            tag: try context.table("tag"))
    }

    /// Closes the store and opens a new context over it, as an app restart does.
    func reopened(handler: any PushHandler = DefaultPushHandler()) throws -> SyncFixture {
        try context.close()
        return try SyncFixture.make(store: store, remote: remote, handler: handler)
    }

    /// A todo item.
    static func todo(_ id: String, _ text: String, complete: Bool = false) -> Item {
        Item(id: id, values: ["text": .string(text), "complete": .bool(complete)])
    }

    /// Puts records straight into the server's store (all with one `updatedAt` when given),
    /// as a bulk import on the server would.
    func seedServer(_ count: Int, table: String = "todo", prefix: String = "s", updatedAt: Timestamp? = nil) throws {
        let stamp = updatedAt ?? Timestamp(year: 2020, month: 1, day: 1)!
        let items = (0..<count).map { index -> Item in
            let id = prefix + String(repeating: "0", count: max(0, 5 - String(index).count)) + String(index)
            return Item(
                id: id,
                values: [
                    "text": .string("seed \(index)"), "complete": .bool(false),
                    "createdAt": .date(stamp), "updatedAt": .date(stamp),
                    "version": .string("seed\(index)"), "deleted": .bool(false),
                ])
        }
        try remote.service.store.upsert(items, into: table)
    }

    /// The server's live copy of an item.
    func serverItem(_ id: String, table: String = "todo") throws -> Item? {
        try remote.service.lookup(id: id, in: table)
    }

    /// Checks the queue and token invariants; every sync case calls it at its end.
    /// - every queued operation's item exists locally, except deletes (whose item must not);
    /// - no item has two operations (nothing is being pushed between calls);
    /// - every operation error belongs to a queued operation;
    /// - for incremental pulls named `all…` (no filter), every server record ordered at or
    ///   before the token is stored locally at the server's version, unless it has a queued
    ///   operation or was deleted on the server (then it is absent).
    func checkInvariants(_ c: CaseContext, _ step: String = "end") {
        do {
            let operations = try context.pendingOperations()
            var seen = Set<String>()
            for operation in operations {
                let local = try store.lookup(table: operation.table, id: operation.itemId)
                if operation.kind == .delete {
                    c.expect(
                        local == nil,
                        "[\(step)] queued delete of '\(operation.itemId)' in '\(operation.table)' but the item is still stored"
                    )
                } else {
                    c.expect(
                        local != nil,
                        "[\(step)] queued \(operation.kind.rawValue) of '\(operation.itemId)' in '\(operation.table)' but the item is missing"
                    )
                }
                c.expect(
                    seen.insert(operation.table + "|" + operation.itemId).inserted,
                    "[\(step)] item '\(operation.itemId)' of '\(operation.table)' has two queued operations outside a push"
                )
            }
            let sequences = operations.map(\.sequence)
            c.expectEqual(Set(sequences).count, sequences.count, "[\(step)] queue sequences are unique")
            let operationIds = Set(operations.map(\.id))
            for error in try context.operationErrors() {
                c.expect(
                    operationIds.contains(error.operationId),
                    "[\(step)] operation error for '\(error.itemId)' has no queued operation")
            }
            let tokens = try store.read(Query(table: SystemTables.config)).items.filter {
                $0.id.hasPrefix("deltaToken|")
            }
            for row in tokens {
                let parts = row.id.split(separator: "|", maxSplits: 2).map(String.init)
                guard parts.count == 3, parts[2].hasPrefix("all"),
                    let token = try context.deltaToken(table: parts[1], queryId: parts[2])
                else { continue }
                let pendingIds = Set(operations.filter { $0.table == parts[1] }.map(\.itemId))
                for server in try remote.items(in: parts[1]) {
                    guard let updatedAt = server.updatedAt, pendingIds.contains(server.id) == false else { continue }
                    let before =
                        updatedAt < token.updatedAt
                        || (updatedAt == token.updatedAt
                            && (token.itemId.map { ValueSemantics.compareBytes(server.id, $0) <= 0 } ?? true))
                    guard before else { continue }
                    let local = try store.lookup(table: parts[1], id: server.id)
                    if server.isDeleted {
                        c.expect(
                            local == nil,
                            "[\(step)] token \(token) of '\(row.id)' is past deleted record '\(server.id)', which is still stored"
                        )
                    } else {
                        c.expectEqual(
                            local?.version, server.version,
                            "[\(step)] token \(token) of '\(row.id)' is past record '\(server.id)'; local version")
                    }
                }
            }
        } catch {
            c.fail("[\(step)] checking invariants threw \(error)")
        }
    }
}

/// A push handler that records the order of the operations it sees, then executes them.
final class RecordingPushHandler: PushHandler {
    private let seen = Locked<[String]>([])
    let during: (@Sendable (PushOperation) throws -> Void)?

    init(during: (@Sendable (PushOperation) throws -> Void)? = nil) {
        self.during = during
    }

    var order: [String] { seen.withLock { $0 } }

    func push(_ operation: PushOperation) async throws -> PushOutcome {
        seen.withLock { $0.append("\(operation.kind.rawValue) \(operation.table)/\(operation.itemId)") }
        try during?(operation)
        return .pushed(try await operation.execute())
    }
}

extension CaseContext {
    /// A sync-tier case: a fresh fixture, the body, then the invariants.
    static func syncCase(
        _ name: String, requires: StoreCapabilities = [],
        handler: @escaping @Sendable () -> any PushHandler = { DefaultPushHandler() },
        remoteOptions: TableService.Options = TableService.Options(),
        _ body: @escaping @Sendable (SyncFixture, CaseContext) async throws -> SyncFixture?
    ) -> ConformanceCase {
        ConformanceCase(name, requires: requires) { c in
            let fixture = try SyncFixture.make(c, handler: handler(), remoteOptions: remoteOptions)
            let final = try await body(fixture, c) ?? fixture
            final.checkInvariants(c)
        }
    }

    /// Expects an async body to throw an error of type `E`; returns it.
    @discardableResult
    func expectThrowsAsync<E: Error, T>(
        _ what: @autoclosure () -> String, as expected: E.Type,
        _ body: () async throws -> T
    ) async -> E? {
        do {
            let value = try await body()
            fail("\(what()): expected \(E.self), but it succeeded and returned \(value)")
            return nil
        } catch let error as E {
            return error
        } catch {
            fail("\(what()): expected \(E.self), got \(type(of: error)): \(error)")
            return nil
        }
    }

    /// Expects an async body to throw an ``OfflineSyncError`` with `code`.
    func expectSyncError<T>(
        _ what: @autoclosure () -> String, code: OfflineSyncError.Code, _ body: () async throws -> T
    ) async {
        let message = what()
        if let error = await expectThrowsAsync(message, as: OfflineSyncError.self, body) {
            expect(error.code == code, "\(message): expected a \(code) error, got \(error.code): \(error.message)")
        }
    }
}

/// Sends operations normally but answers the one of `itemId` with a server copy of another item,
/// which the store must refuse to take as that item's copy.
struct WrongServerCopyHandler: PushHandler {
    let itemId: String

    func push(_ operation: PushOperation) async throws -> PushOutcome {
        let server = try await operation.execute()
        guard operation.itemId == itemId, var other = server else { return .pushed(server) }
        other.id = "not-" + itemId
        return .pushed(other)
    }
}
