import Foundation
import OfflineSync
import Testing

@testable import OfflineSyncLMDB

/// What the errors for a damaged record say: enough to name it, never the contents of the file.
@Suite("errors about damaged records quote ids short and escaped")
struct DamagedRecordMessageTests {
    @Test func aKeyMadeLongerByDamageIsQuotedShortWithoutTheRecordsAfterIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.child("store")
        let store = try LMDBStore(path: path)
        try store.open(schema: StoreSchema([notes]))
        try store.upsert(
            (0..<40).map { Item(id: "id\(1000 + $0)", values: ["title": .string("contents of note \($0)\u{7}\u{1B}[31m")]) },
            into: "notes")
        try store.close()

        // A leaf node is 2+2 bytes of value size, 2 of flags, 2 of key size, the key, the value.
        // Lengthen the key of one node by 100 bytes, keeping the node inside its page (so the
        // structural checks pass), as a flipped bit in the key size does.
        let file = path + "/data.mdb"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let growth = 100
        var damaged: String?
        for number in 1000..<1040 {
            let key = Array("id\(number)".utf8)
            guard let start = nodeKeyOffset(of: key, in: bytes) else { continue }
            let dataSize = Int(bytes[start - 8]) | Int(bytes[start - 7]) << 8
            let pageEnd = (start / 4096 + 1) * 4096
            guard start + key.count + growth + dataSize <= pageEnd else { continue }
            bytes[start - 2] = UInt8(key.count + growth)
            damaged = "id\(number)"
            break
        }
        let id = try #require(damaged, "no record of the store could be lengthened inside its page")
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let reopened = try LMDBStore(path: path)
        try reopened.open(schema: StoreSchema([notes]))
        defer { try? reopened.close() }
        let error = try #require(throws: LMDBError.self) { try reopened.read(Query(table: "notes")) }
        let text = "\(error)"
        #expect(text.contains("'\(id)"), "\(text)")
        #expect(!text.contains("contents of note"), "the error shows stored contents: \(text)")
        #expect(
            !text.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "the error holds control characters: \(text.debugDescription)")
        #expect(text.utf8.count < 500, "the error is \(text.utf8.count) bytes long: \(text)")
    }

    @Test func quotedTextIsCutAtNULAndAtTheLimitAndEscaped() {
        #expect(String.quotedForError(Array("abc".utf8)) == "abc")
        #expect(String.quotedForError(Array("id7\u{1}\u{0}secret".utf8)) == "id7\\u{1}…")
        #expect(String.quotedForError(Array(repeating: UInt8(ascii: "x"), count: 65)) == String(repeating: "x", count: 64) + "…")
        #expect(String.quotedForError(Array(repeating: UInt8(ascii: "x"), count: 64)) == String(repeating: "x", count: 64))
        #expect(String.quotedForError(Array("a\u{1B}[31m\n\u{9B}\u{202E}".utf8)) == "a\\u{1B}[31m\\n\\u{9B}\\u{202E}")
        #expect(String.quotedForError([0x61, 0xFF]) == "a\u{FFFD}")
    }

    /// The offset of the first occurrence of `key` in `bytes` that follows node flags 0 and a key
    /// size equal to its length (so it is the key of a node, not text inside a value).
    private func nodeKeyOffset(of key: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count > key.count + 8 else { return nil }
        for start in 8..<(bytes.count - key.count)
        where bytes[start] == key[0] && Array(bytes[start..<start + key.count]) == key
            && Int(bytes[start - 2]) | Int(bytes[start - 1]) << 8 == key.count && bytes[start - 4] == 0
            && bytes[start - 3] == 0
        {
            return start
        }
        return nil
    }
}

/// A data file that is not a regular file is refused at once, without opening it (opening a
/// FIFO blocks until something writes to it).
@Suite("a data.mdb that is not a regular file is refused")
struct SpecialDataFileTests {
    @Test(arguments: ["fifo", "directory"])
    func refusedWithoutOpening(kind: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.child("store")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if kind == "fifo" {
            #expect(mkfifo(path + "/data.mdb", 0o600) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: path + "/data.mdb", withIntermediateDirectories: false)
        }
        let store = try LMDBStore(path: path)
        let error = try #require(throws: LMDBError.self) { try store.open(schema: StoreSchema([notes])) }
        #expect(error.kind == .damaged)
        #expect("\(error)".contains(kind == "fifo" ? "a FIFO" : "a directory"), "\(error)")
    }
}
