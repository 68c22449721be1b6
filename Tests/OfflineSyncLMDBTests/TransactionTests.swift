import Foundation
import OfflineSync
import Synchronization
import Testing

@testable import OfflineSyncLMDB

@Suite struct TransactionTests {
    static let schema = StoreSchema([
        indexedNotes, TableSchema("log", columns: [Column("entry", .string)], synced: false),
    ])

    @Test func aThrowingWriteLeavesNothingInAnyTable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(Self.schema, in: directory)
        defer { try? store.close() }
        try store.upsert([Item(id: "kept", values: ["rank": 1])], into: "notes")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.write { transaction in
                try transaction.upsert([Item(id: "new", values: ["rank": 2])], into: "notes", origin: .local)
                try transaction.upsert([Item(id: "e1", values: ["entry": "x"])], into: "log", origin: .local)
                try transaction.delete(ids: ["kept"], from: "notes")
                throw Abort()
            }
        }
        #expect(try store.lookup(table: "notes", id: "kept") == Item(id: "kept", values: ["rank": 1]))
        #expect(try store.lookup(table: "notes", id: "new") == nil)
        #expect(try store.count("log") == 0)
        #expect(try store.read(Query(table: "notes", filter: ReferenceData.cmp("rank", .eq, 2))).items.isEmpty)
    }

    @Test func readsInsideAWriteSeeItsOwnWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(Self.schema, in: directory)
        defer { try? store.close() }
        let seen = try store.write { transaction in
            try transaction.upsert([Item(id: "a", values: ["rank": 7])], into: "notes", origin: .local)
            return try transaction.read(Query(table: "notes", filter: ReferenceData.cmp("rank", .eq, 7))).items.map(
                \.id)
        }
        #expect(seen == ["a"])
    }

    @Test func aTransactionUsedAfterItsClosureIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(Self.schema, in: directory)
        defer { try? store.close() }
        let escaped = try store.write { $0 }
        #expect(throws: OfflineSyncError.self) { try escaped.upsert([Item(id: "late")], into: "notes", origin: .local) }
    }

    @Test func concurrentReadModifyWritesNeverInterleave() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(Self.schema, in: directory, options: .init(durability: .noSync))
        defer { try? store.close() }
        try store.upsert([Item(id: "counter", values: ["rank": 0])], into: "notes")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<25 {
                        try store.write { transaction in
                            let current = try transaction.lookup(table: "notes", id: "counter")?["rank"].intValue ?? 0
                            try transaction.upsert(
                                [Item(id: "counter", values: ["rank": .int(current + 1)])], into: "notes",
                                origin: .local)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.lookup(table: "notes", id: "counter")?["rank"] == .int(200))
    }

    @Test func readersProceedOnTheirSnapshotWhileAWriteIsOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(Self.schema, in: directory)
        defer { try? store.close() }
        try store.upsert(ReferenceData.items(count: 100), into: "notes")
        let writerInside = DispatchSemaphore(value: 0)
        let readersDone = DispatchSemaphore(value: 0)
        let counts = Locked<[Int]>([])
        let writer = Thread {
            try? store.write { transaction in
                try transaction.upsert([Item(id: "during", values: ["rank": 1])], into: "notes", origin: .local)
                writerInside.signal()
                _ = readersDone.wait(timeout: .now() + 60)
            }
        }
        writer.start()
        #expect(writerInside.wait(timeout: .now() + 60) == .success)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let count = (try? store.count("notes")) ?? -1
            counts.withLock { $0.append(count) }
        }
        readersDone.signal()
        #expect(counts.withLock { $0 } == Array(repeating: 100, count: 8))
        try store.write { _ in }
        #expect(try store.count("notes") == 101)
    }
}

@Suite struct NestedWriteTests {
    @Test func writingToTheStoreFromInsideItsOwnWriteIsRefusedInsteadOfDeadlocking() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try openStore(TransactionTests.schema, in: directory)
        defer { try? store.close() }
        let error = #expect(throws: OfflineSyncError.self) {
            try store.write { _ in try store.upsert([Item(id: "inner")], into: "notes") }
        }
        #expect(error?.code == .invalidOperation)
        try store.upsert([Item(id: "after")], into: "notes")
        #expect(try store.lookup(table: "notes", id: "after") != nil)
    }
}
