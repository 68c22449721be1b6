import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of a few MiB mounted for one test (the test process must be root), unmounted and
/// removed when released.
final class SmallFileSystem {
    let path: String

    /// `true` when this process can mount a tmpfs (checked once, by mounting one).
    static let isAvailable: Bool = {
        guard let probe = SmallFileSystem(bytes: 1 << 20) else { return false }
        _ = probe
        return true
    }()

    init?(bytes: Int) {
        path = NSTemporaryDirectory() + "offline-sync-small-fs-\(UUID().uuidString)"
        guard mkdir(path, 0o755) == 0 else { return nil }
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(bytes),mode=755") == 0 else {
            rmdir(path)
            return nil
        }
    }

    deinit {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    private var filler: String { path + "/filler" }

    /// Writes a file until the file system has no byte left.
    func fill() {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        var byte: UInt8 = 0
        while write(descriptor, &byte, 1) > 0 {}
    }

    /// Fills the file system, then gives back `bytes` of it.
    func fill(leaving bytes: Int) {
        fill()
        guard let size = (try? FileManager.default.attributesOfItem(atPath: filler))?[.size] as? Int else { return }
        truncate(filler, off_t(max(0, size - bytes)))
    }

    /// Removes the file written by ``fill()``.
    func free() {
        unlink(filler)
    }
}

/// Each file backend on a file system that fills up during local writes and pulls: the writes
/// that fail say the disk is full, every write acknowledged before stays with its queued
/// operation, and everything works again once space is freed.
@Suite(
    "a full disk gives errors and loses nothing acknowledged",
    .enabled(if: SmallFileSystem.isAvailable, "mounting a tmpfs needs root; the disk-full tests are skipped"),
    .serialized)
struct DiskFullTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])
    static let key = SQLCipherKey.raw(Array(repeating: 0x3c, count: 32))

    enum FileBackend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, sqlcipher, lmdb

        func makeStore(in directory: String) throws -> any LocalStore {
            switch self {
            case .sqlite: return SQLiteStore(path: directory + "/store.sqlite")
            case .sqlcipher: return try SQLCipherStore(path: directory + "/store.db", key: DiskFullTests.key)
            case .lmdb:
                return try LMDBStore(path: directory + "/store.lmdb", options: .init(initialMapSize: 1 << 20))
            }
        }

        var testDescription: String { rawValue }

        /// Every file backend, without SQLCipher in a process built with a sanitizer.
        static var available: [FileBackend] {
            allCases.filter { $0 != .sqlcipher || SQLCipherLibrary.activeSanitizer == nil }
        }
    }

    static func text(_ number: Int) -> String {
        String(repeating: "\(number) ", count: 200)
    }

    /// A remote holding `count` items of about 1 KiB, all updated at one instant.
    static func remote(count: Int) throws -> InMemoryRemote {
        let remote = try InMemoryRemote(tables: [todo])
        let stamp = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        let items = (0..<count).map { number in
            Item(
                id: "remote-\(10000 + number)",
                values: [
                    "text": .string(text(number)), "updatedAt": .date(stamp), "createdAt": .date(stamp),
                    "version": "v", "deleted": false,
                ])
        }
        try remote.service.store.upsert(items, into: "todo")
        return remote
    }

    static func isDiskFull(_ error: any Error) -> Bool {
        let text = "\(error)".lowercased()
        return text.contains("full") || text.contains("no space")
    }

    @Test(arguments: FileBackend.available)
    func localWritesFailClearlyWhenTheDiskFillsAndKeepEveryAcknowledgedEdit(backend: FileBackend) async throws {
        let disk = try #require(SmallFileSystem(bytes: 3 << 20))
        let remote = try Self.remote(count: 0)
        var store = try backend.makeStore(in: disk.path)
        var context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        var acknowledged: [String] = []
        for number in 0..<50 {
            _ = try context.table("todo").insert(Item(id: "local-\(number)", values: ["text": .string(Self.text(number))]))
            acknowledged.append("local-\(number)")
        }
        disk.fill()
        var failure: (any Error)?
        for number in 50..<5000 {
            do {
                _ = try context.table("todo").insert(
                    Item(id: "local-\(number)", values: ["text": .string(Self.text(number))]))
                acknowledged.append("local-\(number)")
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure, "writing 5000 items on a full disk never failed")
        #expect(Self.isDiskFull(error), "the error does not say the disk is full: \(error)")
        try Self.expectEveryAcknowledgedEdit(acknowledged, in: context, store: store)

        disk.free()
        _ = try context.table("todo").insert(Item(id: "after", values: ["text": "space again"]))
        acknowledged.append("after")
        try store.close()
        store = try backend.makeStore(in: disk.path)
        context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        try Self.expectEveryAcknowledgedEdit(acknowledged, in: context, store: store)
        try store.close()
    }

    @Test(arguments: FileBackend.available)
    func aPullFailsClearlyWhenTheDiskFillsKeepsItsTokenBehindItsPagesAndCompletesOnceSpaceIsFreed(
        backend: FileBackend
    ) async throws {
        let disk = try #require(SmallFileSystem(bytes: 32 << 20))
        let remote = try Self.remote(count: 4000)
        var store = try backend.makeStore(in: disk.path)
        var context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        disk.fill(leaving: 1 << 20)
        await #expect {
            try await context.table("todo").pull(queryId: "all")
        } throws: { error in
            Self.isDiskFull(error)
        }
        let stored = try store.read(Query(table: "todo", selection: ["id"])).items.map(\.id)
        #expect(stored.count < 4000)
        if let token = try context.table("todo").deltaToken(queryId: "all"), let last = token.itemId {
            // Items arrive in id order (one updatedAt): every item up to the token is stored.
            let upToToken = (0..<4000).map { "remote-\(10000 + $0)" }.filter { $0 <= last }
            #expect(Set(stored).isSuperset(of: upToToken), "the delta token is ahead of the stored pages")
        }

        disk.free()
        let retry = try await context.table("todo").pull(queryId: "all")
        #expect(retry.received + stored.count >= 4000)
        #expect(try store.count("todo") == 4000)
        try store.close()
        store = try backend.makeStore(in: disk.path)
        context = try SyncContext(store: store, remote: remote, tables: [Self.todo])
        #expect(try store.count("todo") == 4000)
        try store.close()
    }

    @Test(arguments: FileBackend.available)
    func aStoreOpensAndReadsWhileTheDiskIsFull(backend: FileBackend) async throws {
        let disk = try #require(SmallFileSystem(bytes: 3 << 20))
        var store = try backend.makeStore(in: disk.path)
        var context = try SyncContext(store: store, remote: try Self.remote(count: 0), tables: [Self.todo])
        for number in 0..<100 {
            _ = try context.table("todo").insert(Item(id: "local-\(number)", values: ["text": .string("\(number)")]))
        }
        try store.close()
        disk.fill()
        store = try backend.makeStore(in: disk.path)
        context = try SyncContext(store: store, remote: try Self.remote(count: 0), tables: [Self.todo])
        try Self.expectEveryAcknowledgedEdit((0..<100).map { "local-\($0)" }, in: context, store: store)
        try store.close()
    }

    static func expectEveryAcknowledgedEdit(_ ids: [String], in context: SyncContext, store: any LocalStore) throws {
        let stored = Set(try store.read(Query(table: "todo", selection: ["id"])).items.map(\.id))
        let missing = ids.filter { !stored.contains($0) }
        #expect(missing.isEmpty, "acknowledged items lost: \(missing.prefix(5))")
        #expect(try context.pendingOperationCount() == ids.count, "every acknowledged insert keeps its operation")
    }
}
