import Foundation
import OfflineSync
import Testing

/// Another process moves the store's file away and another store's file over its path while the
/// store is open (a restore from a backup, a deploy script). SQLite names its write-ahead log by
/// the path, so a log left behind would be applied to the new file at its next open.
@Suite("a store file moved while open keeps its writes, and the file now at the path gets none")
struct MovedFileTests {
    @Test(arguments: SQLBackend.all)
    func closingAMovedStoreLeavesNothingForTheFileNowAtItsPath(backend: SQLBackend) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store")
        let other = directory.file("other")
        let moved = directory.file("moved-away")
        let replacement = try backend.make(other)
        try replacement.open(schema: Corpus.schema)
        try replacement.upsert([Item(id: "other", values: ["s": "the replacement's own row"])], into: "t")
        try replacement.close()

        let store = try backend.make(path)
        try store.open(schema: Corpus.schema)
        try store.upsert(Array(Corpus.items.prefix(5)), into: "t")
        try FileManager.default.moveItem(atPath: path, toPath: moved)
        try FileManager.default.moveItem(atPath: other, toPath: path)
        // Written after the move: into the moved file, through the log at the old path.
        try store.upsert(Array(Corpus.items.dropFirst(5)), into: "t")
        try store.close()

        let now = try backend.make(path)
        try now.open(schema: Corpus.schema)
        #expect(try now.read(Query(table: "t")).items.map(\.id) == ["other"], "the file now at the path")
        try now.close()
        let away = try backend.make(moved)
        try away.open(schema: Corpus.schema)
        #expect(
            try away.read(Query(table: "t")).items.map(\.id).sorted() == Corpus.items.map(\.id).sorted(),
            "the moved file holds every write, those made after the move included")
        try away.close()
    }
}
