import Foundation
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

/// The SQL engine's read connections: reads run beside a write transaction and see only what was
/// committed before they began; stores whose database cannot be shared read on the writer.
@Suite struct ReadConnectionTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private static let schema = StoreSchema([TableSchema("notes", columns: [Column("text", .string)])])

    private func engine(_ store: any LocalStore) -> SQLTableStore? {
        (store as? SQLiteStore)?.engine ?? (store as? SQLCipherStore)?.engine
    }

    /// A write transaction holds still (uncommitted row inside) until a read on another thread
    /// has finished. With reads confined to the writer's connection the read would wait for the
    /// transaction, which waits for the read: the transaction's wait runs out and the read then
    /// sees the row.
    @Test(arguments: SQLBackend.all)
    func aReadRunsBesideAnOpenWriteTransactionAndSeesOnlyCommittedRows(_ backend: SQLBackend) throws {
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["text": "committed"])], into: "notes")

        let inTransaction = DispatchSemaphore(value: 0)
        let readFinished = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        let readFinishedInsideTransaction = LockedFlag()
        let writeFailed = LockedFlag()
        let writer = Thread {
            do {
                try store.write { transaction in
                    try transaction.upsert(
                        [Item(id: "b", values: ["text": "uncommitted"])], into: "notes", origin: .local)
                    inTransaction.signal()
                    if readFinished.wait(timeout: .now() + 20) == .success { readFinishedInsideTransaction.set() }
                }
            } catch {
                writeFailed.set()
            }
            writerDone.signal()
        }
        writer.start()
        #expect(inTransaction.wait(timeout: .now() + 20) == .success, "the write transaction did not start")
        let page = try store.read(Query(table: "notes", includeTotalCount: true))
        let uncommitted = try store.lookup(table: "notes", id: "b")
        readFinished.signal()
        writerDone.wait()

        #expect(!writeFailed.value, "the write transaction failed")
        #expect(readFinishedInsideTransaction.value, "the read waited for the write transaction to end")
        #expect(page.items.map(\.id) == ["a"])
        #expect(page.totalCount == 1)
        #expect(uncommitted == nil)
        #expect(engine(store)?.readsUseThePool == true)
        #expect(engine(store)?.hasReadConnections == true, "the read that met the write opened a read connection")
        // Committed now: a new read (on a read connection) sees it.
        #expect(try store.read(Query(table: "notes")).items.map(\.id) == ["a", "b"])
        #expect(try store.lookup(table: "notes", id: "b")?["text"] == "uncommitted")
    }

    /// Reads that meet no write transaction run on the idle writer: opening a store and reading
    /// from it opens no second connection (for SQLCipher with a passphrase, no second key
    /// derivation).
    @Test(arguments: SQLBackend.all)
    func readsThatMeetNoWriteOpenNoReadConnection(_ backend: SQLBackend) throws {
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["text": "one"])], into: "notes")
        #expect(try store.lookup(table: "notes", id: "a")?["text"] == "one")
        #expect(try store.read(Query(table: "notes", includeTotalCount: true)).totalCount == 1)
        #expect(engine(store)?.readsUseThePool == true)
        #expect(engine(store)?.hasReadConnections == false)
    }

    /// Many threads reading and writing at once: every read sees a whole number of committed
    /// transactions (each writes two rows), and every thread's reads see its own earlier writes.
    @Test(arguments: SQLBackend.all)
    func concurrentReadersSeeWholeTransactionsAndTheirOwnWrites(_ backend: SQLBackend) throws {
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        let failures = LockedFlag()
        let group = DispatchGroup()
        for thread in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    for round in 0..<40 {
                        try store.write { transaction in
                            try transaction.upsert(
                                [
                                    Item(id: "t\(thread)-\(round)-1", values: ["text": "x"]),
                                    Item(id: "t\(thread)-\(round)-2", values: ["text": "x"]),
                                ], into: "notes", origin: .local)
                        }
                        let count = try store.count("notes")
                        let own = try store.lookup(table: "notes", id: "t\(thread)-\(round)-2")
                        if count % 2 != 0 || count < 2 * (round + 1) || own == nil { failures.set() }
                    }
                } catch {
                    failures.set()
                }
            }.start()
        }
        group.wait()
        #expect(!failures.value, "a read saw half a transaction, or missed a write its thread had made")
        #expect(try store.count("notes") == 6 * 40 * 2)
    }

    /// More readers than read connections (a pool of 1 and of 2), writers, and a thread that
    /// closes and reopens the store and runs exclusive work on the writer, all at once: nothing
    /// waits forever (the time limit), every read that succeeds sees whole transactions, and after
    /// the storm the pool still serves reads and the table holds every committed write.
    @Test(.timeLimit(.minutes(2)), arguments: [1, 2], SQLBackend.all)
    func readersBeyondThePoolSizeWritersAndReopensNeverWedgeTheStore(poolSize: Int, _ backend: SQLBackend) throws {
        defer { directory.remove() }
        let path = directory.file("store.db")
        let store: any LocalStore =
            backend.name == "sqlite"
            ? SQLiteStore(path: path, options: SQLStoreOptions(readConnections: poolSize))
            : try SQLCipherStore(
                path: path, key: .raw(Array(repeating: 0x42, count: 32)),
                options: SQLStoreOptions(readConnections: poolSize))
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        let halfTransaction = LockedFlag()
        let unexpected = LockedFlag()
        let committed = Locked(0)
        let stop = LockedFlag()
        /// Failures a read or write may meet while the reopening thread has the store closed.
        @Sendable func expected(_ error: any Error) -> Bool { (error as? OfflineSyncError)?.code == .notOpen }
        let group = DispatchGroup()
        for writer in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                for round in 0..<60 {
                    do {
                        try store.write { transaction in
                            try transaction.upsert(
                                [
                                    Item(id: "w\(writer)-\(round)-1", values: ["text": "x"]),
                                    Item(id: "w\(writer)-\(round)-2", values: ["text": "x"]),
                                ], into: "notes", origin: .local)
                        }
                        committed.update { $0 += 2 }
                    } catch {
                        if !expected(error) { unexpected.set() }
                    }
                }
            }.start()
        }
        for _ in 0..<6 {
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop.value {
                    do {
                        let count = try store.count("notes")
                        let page = try store.read(Query(table: "notes", top: 500, includeTotalCount: true))
                        _ = try store.lookup(table: "notes", id: "w0-0-1")
                        if count % 2 != 0 || page.items.count % 2 != 0 || (page.totalCount ?? 0) % 2 != 0 {
                            halfTransaction.set()
                        }
                    } catch {
                        if !expected(error) { unexpected.set() }
                    }
                }
            }.start()
        }
        let reopener = DispatchGroup()
        reopener.enter()
        Thread {
            defer { reopener.leave() }
            for _ in 0..<15 {
                do {
                    try store.close()
                    try store.open(schema: Self.schema)
                    if let engine = (store as? SQLiteStore)?.engine ?? (store as? SQLCipherStore)?.engine {
                        try engine.withConnection { try $0.execute("PRAGMA wal_checkpoint(PASSIVE)") }
                    }
                } catch {
                    unexpected.set()
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }.start()
        reopener.wait()
        stop.set()
        group.wait()
        #expect(!halfTransaction.value, "a read saw half a transaction")
        #expect(!unexpected.value, "a call failed with something other than 'not open' while the store was reopened")
        #expect(try store.count("notes") == committed.value)
        #expect(try store.read(Query(table: "notes", top: 1_000)).items.count == committed.value)
        #expect(engine(store)?.readsUseThePool == true)
    }

    @Test func anInMemoryDatabaseReadsOnItsOneConnection() throws {
        let store = SQLiteStore(path: ":memory:")
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["text": "kept"])], into: "notes")
        #expect(try store.read(Query(table: "notes")).items.map(\.id) == ["a"])
        #expect(try store.lookup(table: "notes", id: "a")?["text"] == "kept")
        #expect(store.engine.readsUseThePool == false)
    }

    @Test func aPoolOfSizeZeroReadsOnTheWriter() throws {
        defer { directory.remove() }
        let store = SQLiteStore(path: directory.file("store.db"), options: SQLStoreOptions(readConnections: 0))
        try store.open(schema: Self.schema)
        defer { try? store.close() }
        try store.upsert([Item(id: "a", values: ["text": "kept"])], into: "notes")
        #expect(try store.read(Query(table: "notes")).items.map(\.id) == ["a"])
        #expect(store.engine.readsUseThePool == false)
    }

    /// Reopening with a wider schema closes the read connections, so reads see the new column.
    @Test(arguments: SQLBackend.all)
    func readsAfterAReopenSeeTheWidenedSchema(_ backend: SQLBackend) throws {
        defer { directory.remove() }
        let store = try backend.make(directory.file("store.db"))
        try store.open(schema: Self.schema)
        try store.upsert([Item(id: "a", values: ["text": "one"])], into: "notes")
        #expect(try store.read(Query(table: "notes")).items.count == 1)
        try store.close()
        #expect(throws: OfflineSyncError.self) { try store.read(Query(table: "notes")) }
        let wider = TableSchema("notes", columns: [Column("text", .string), Column("rank", .integer)])
        try store.open(schema: StoreSchema([wider]))
        defer { try? store.close() }
        try store.upsert([Item(id: "b", values: ["text": "two", "rank": 2])], into: "notes")
        let rows = try store.read(Query(table: "notes", filter: .comparison(.column("rank"), .eq, .literal(2))))
        #expect(rows.items.map(\.id) == ["b"])
        #expect(engine(store)?.readsUseThePool == true)
    }
}

/// Shorthands the tests use on the package's ``Locked``.
extension Locked {
    /// The current value.
    var value: Value { withLock { $0 } }

    /// Changes the value while holding the lock.
    @discardableResult
    func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withLock { try body(&$0) }
    }
}

/// A flag set from any thread.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false

    func set() { lock.withLock { isSet = true } }

    var value: Bool { lock.withLock { isSet } }
}
