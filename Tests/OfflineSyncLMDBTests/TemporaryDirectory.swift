import Foundation
import OfflineSync

@testable import OfflineSyncLMDB

/// A fresh directory under the system's temporary directory, removed by ``remove()`` or, at the
/// latest, when the last reference goes (so a test that throws early leaves nothing behind).
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "offline-sync-lmdb-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw OfflineSyncError(.storage, "mkdtemp failed with errno \(errno)")
        }
        path = String(cString: created)
    }

    /// A path inside the directory that does not exist yet.
    func child(_ name: String) -> String { path + "/" + name }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}

/// A table of five app columns of every type plus the synced system columns.
let notes = TableSchema(
    "notes",
    columns: [
        Column("title", .string), Column("rank", .integer), Column("score", .double),
        Column("due", .date), Column("done", .bool), Column("tags", .json),
    ])

/// `notes` with indexes on rank, title and (due, rank).
let indexedNotes = TableSchema(
    "notes", columns: notes.columns,
    indexes: [
        TableIndex("byRank", on: ["rank"]), TableIndex("byTitle", on: ["title"]),
        TableIndex("byDueRank", on: ["due", "rank"]),
        TableIndex("byScore", on: ["score"]), TableIndex("byDone", on: ["done"]),
        TableIndex("byDoneTitle", on: ["done", "title", "rank"]),
    ], synced: true)

/// Opens an LMDB store in a new directory of `directory`.
func openStore(
    _ schema: StoreSchema, in directory: TemporaryDirectory, name: String = "store",
    options: LMDBStore.Options = .init()
) throws -> LMDBStore {
    let store = try LMDBStore(path: directory.child(name), options: options)
    try store.open(schema: schema)
    return store
}
