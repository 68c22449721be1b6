import Foundation
import Testing

/// A value damaged inside an otherwise sound store: JSON text whose bytes changed in the file,
/// which no page check of SQLite or LMDB notices.
@Suite("a damaged JSON value is named with its store and a repair, and import repairs it")
struct DamagedValueTests {
    static let schema = #"{"name": "notes", "columns": [{"name": "meta", "type": "json"}, {"name": "title", "type": "string"}]}"#
    /// The marker's JSON text, as the store keeps it (compact).
    static let marker = #"{"k":"damaged-json-marker"}"#
    static let lines = """
        {"id":"a","meta":{"k":"damaged-json-marker"},"title":"first"}
        {"id":"b","meta":[1,2],"title":"second"}
        """

    /// Replaces the first byte of every copy of ``marker`` in `file` with `!`, which makes the
    /// text invalid JSON of the same length. Returns how many copies it changed.
    static func damage(_ file: String) throws -> Int {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let needle = Array(marker.utf8)
        var changed = 0
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], Array(bytes[index..<index + needle.count]) == needle {
                bytes[index] = UInt8(ascii: "!")
                changed += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return changed
    }

    // SQLCipher encrypts its pages, so its text cannot be changed in place.
    @Test(arguments: Backend.available.filter { $0 != .sqlcipher })
    func exportAndMigrateNameTheStoreAndImportRepairs(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let store = backend.url("store", in: directory)
        let schema = try directory.write("schema.json", Self.schema)
        let file = try directory.write("notes.jsonl", Self.lines)
        let imported = try CLI.run(["import", "--store", store, "--table", "notes", "--file", file, "--schema", schema])
        #expect(imported.status == 0, "\(imported)")
        #expect(try Self.damage(DamageFixture.dataFile(of: backend, "store", in: directory)) >= 1)

        let export = try CLI.run(["export", "--store", store, "--table", "notes"])
        #expect(export.status == 1, "\(export)")
        for fragment in [store, "notes", "'meta'", "'a'", "not a valid array or object", "offline-sync import"] {
            #expect(export.stderr.contains(fragment), "export: no \(fragment) in \(export.stderr)")
        }
        #expect(!export.stderr.contains("damaged-json-marker"), "the value is never quoted: \(export.stderr)")

        let destination = Backend.sqlite.url("copy", in: directory)
        let migrate = try CLI.run(["migrate", "--from", store, "--to", destination])
        #expect(migrate.status == 1, "\(migrate)")
        for fragment in [store, "notes", "'meta'", "'a'", "not one JSON array or object", "offline-sync import"] {
            #expect(migrate.stderr.contains(fragment), "migrate: no \(fragment) in \(migrate.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("copy.sqlite")), "migrate left a destination")

        let repair = try directory.write("repair.jsonl", #"{"id":"a","meta":{"k":"repaired"},"title":"first"}"#)
        let repaired = try CLI.run(["import", "--store", store, "--table", "notes", "--file", repair])
        #expect(repaired.status == 0, "\(repaired)")
        let after = try CLI.run(["export", "--store", store, "--table", "notes"])
        #expect(after.status == 0, "\(after)")
        #expect(after.stdout.contains(#""meta":{"k":"repaired"}"#), "\(after)")
        #expect(try CLI.run(["migrate", "--from", store, "--to", destination]).status == 0)
    }
}
