import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `offline-sync sync` declares a table it does not know from a sample of the server's records:
/// one page, so columns first filled later in the table (or added to the server's table after
/// the first sync) were never declared, and their values were dropped from every record, exit 0.
/// The sync now declares them after the pull and pulls again to fill them.
@Suite("sync learns columns beyond its sample")
struct SyncLearnsColumnsTests {
    static let enabled = FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)

    /// Posts `body` to the served table `things`; `#expect`s 201.
    static func post(_ body: String, port: Int) async throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/tables/things")!)
        request.httpMethod = "POST"
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 201, "\(String(decoding: data, as: UTF8.self))")
    }

    /// The exported records of `things` in `store`, by id.
    static func exported(_ store: String) throws -> [String: [String: Any]] {
        let export = try ServeCommand.run(["export", "--store", store, "--table", "things"])
        #expect(export.status == 0, "\(export)")
        var records: [String: [String: Any]] = [:]
        for line in export.output.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            records[object["id"] as? String ?? ""] = object
        }
        return records
    }

    @Test(
        "columns first seen after the sample page, and columns the server gains later, are declared and filled",
        .enabled(if: enabled), arguments: ["sqlite", "lmdb"], [false, true])
    func laterColumnsAreDeclared(backend: String, incremental: Bool) async throws {
        let directory = try TemporaryDirectory()
        // A new store without --schema: a dynamic schema, pages of 50 records.
        let server = try ServeProcess(
            store: "sqlite:" + directory.path("server.sqlite"), port: 0, options: ["--dynamic-schema"])
        defer { server.kill() }
        // Ids sort in insertion order; the first 60 records (the whole sample page) have no
        // `extra` nor `score`.
        for index in 0..<120 {
            let id = String(format: "t%03d", index)
            let more = index < 60 ? "" : #", "extra": "e\#(index)", "score": \#(index).5"#
            try await Self.post(#"{"id": "\#(id)", "text": "thing \#(index)"\#(more)}"#, port: server.port)
        }
        let store = "\(backend):" + directory.path("device.\(backend)")
        let sync =
            ["sync", "--store", store, "--remote", "http://127.0.0.1:\(server.port)", "--table", "things"]
            + (incremental ? ["--query-id", "all"] : [])
        let first = try ServeCommand.run(sync)
        #expect(first.status == 0, "\(first)")
        #expect(first.output.contains("declared 2 more columns of things"), "\(first)")
        #expect(first.output.contains("extra string") && first.output.contains("score double"), "\(first)")
        #expect(first.output.contains("pulled 120 records of things"), "\(first)")
        var records = try Self.exported(store)
        #expect(records.count == 120)
        #expect(records["t000"]?["extra"] == nil)
        #expect(records["t061"]?["extra"] as? String == "e61", "\(records["t061"] ?? [:])")
        #expect(records["t061"]?["score"] as? Double == 61.5)
        #expect(records["t119"]?["extra"] as? String == "e119")

        // The server's table gains a column; the next sync declares it too.
        try await Self.post(#"{"id": "t200", "text": "late", "label": "new column"}"#, port: server.port)
        let second = try ServeCommand.run(sync)
        #expect(second.status == 0, "\(second)")
        #expect(second.output.contains("declared 1 more column of things found in the pulled records (label string)"))
        records = try Self.exported(store)
        #expect(records["t200"]?["label"] as? String == "new column", "\(records["t200"] ?? [:])")
        #expect(records["t119"]?["extra"] as? String == "e119", "an earlier column keeps its values")

        // Nothing new: one pull, no second round.
        let third = try ServeCommand.run(sync)
        #expect(third.status == 0, "\(third)")
        #expect(!third.output.contains("declared"), "\(third)")
    }

    @Test(
        "with --schema the declared columns are kept as given; fields no table can declare are named, the rest stored",
        .enabled(if: enabled))
    func schemaFileAndUndeclarableFields() async throws {
        let directory = try TemporaryDirectory()
        let records = [
            #"{"id":"a","text":"one","bad-name":1,"sqlite_x":2,"updatedAt":"2026-01-01T00:00:00.000Z","version":"v1","deleted":false}"#,
            #"{"id":"b","text":"two","Text":"shadow","note":"kept","updatedAt":"2026-01-01T00:00:01.000Z","version":"v1","deleted":false}"#,
        ]
        try await withLoopbackServer({ request in
            let body =
                request.target.contains("inlinecount")
                ? #"{"results":[],"count":2}"#
                : request.target.contains("%20gt%20")
                    ? "[]"
                    // The sample that declares the table is the first record alone.
                    : request.target.contains("top=200") ? "[\(records[0])]" : "[\(records.joined(separator: ","))]"
            return ScriptedResponse(
                status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }) { port in
            let remote = "http://127.0.0.1:\(port)"
            let store = "sqlite:" + directory.path("device.sqlite")
            let learned = try await onOwnThread {
                try ServeCommand.run(["sync", "--store", store, "--remote", remote, "--table", "things"])
            }
            #expect(learned.status == 0, "\(learned)")
            #expect(
                learned.output.contains(
                    "carry 3 fields no local table can declare as columns, so their values are not stored: 'Text', 'bad-name', 'sqlite_x'"
                ), "\(learned)")
            #expect(learned.output.contains("declared 1 more column of things"), "\(learned)")
            let stored = try Self.exported(store)
            #expect(stored["a"]?["text"] as? String == "one")
            #expect(stored["b"]?["note"] as? String == "kept")

            let schema = directory.path("schema.json")
            try Data(#"{"name": "things", "columns": [{"name": "text", "type": "string"}]}"#.utf8)
                .write(to: URL(fileURLWithPath: schema))
            let other = "sqlite:" + directory.path("given.sqlite")
            let given = try await onOwnThread {
                try ServeCommand.run([
                    "sync", "--store", other, "--remote", remote, "--table", "things", "--schema", schema,
                ])
            }
            #expect(given.status == 0, "\(given)")
            #expect(!given.output.contains("declared"), "\(given)")
            #expect(try Self.exported(other)["b"]?["note"] == nil, "a schema file's table is not widened")
        }
    }

    @Test(
        "columns the store cannot hold are named, and the records are stored without them",
        .enabled(if: enabled), arguments: [false, true])
    func moreColumnsThanTheStoreHolds(incremental: Bool) async throws {
        let directory = try TemporaryDirectory()
        let system = #""updatedAt":"2026-01-01T00:00:00.000Z","version":"v1","deleted":false"#
        let wide = (0..<2_100).map { #""c\#($0)":\#($0)"# }.joined(separator: ",")
        let records = [#"{"id":"a","text":"one",\#(system)}"#, #"{"id":"b","text":"two",\#(wide),\#(system)}"#]
        try await withLoopbackServer({ request in
            let body =
                request.target.contains("inlinecount")
                ? #"{"results":[],"count":2}"#
                : request.target.contains("%20gt%20")
                    ? "[]" : request.target.contains("top=200") ? "[\(records[0])]" : "[\(records.joined(separator: ","))]"
            return ScriptedResponse(
                status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }) { port in
            let store = "sqlite:" + directory.path("device.sqlite")
            let sync =
                ["sync", "--store", store, "--remote", "http://127.0.0.1:\(port)", "--table", "things"]
                + (incremental ? ["--query-id", "all"] : [])
            for round in 0..<2 {
                let synced = try await onOwnThread { try ServeCommand.run(sync) }
                #expect(synced.status == 0, "\(synced)")
                if incremental && round == 1 {
                    // The token came back to the last record: nothing new, nothing pulled again.
                    #expect(synced.output.contains("pulled 0 records of things"), "\(synced.output.suffix(300))")
                    #expect(!synced.output.contains("could not declare"))
                } else {
                    #expect(
                        synced.output.contains(
                            "could not declare 2100 more columns of things found in the pulled records (c0 integer, c1 integer, c10 integer, c100 integer, c1000 integer, c1001 integer, c1002 integer, c1003 integer, c1004 integer, c1005 integer, …), so their values are not stored: "
                        ), "\(synced.output.prefix(600))")
                    #expect(synced.output.contains("at most 2000"))
                    #expect(synced.output.count < 2_000, "the message names a few columns, not all 2100")
                    #expect(synced.output.contains("pulled 2 records of things"), "\(synced.output.suffix(300))")
                }
                if incremental {
                    // The token, reset before the widening was tried, is back at the last record.
                    let token = try ServeCommand.run(["inspect", "--store", store])
                    let row = token.output.split(separator: "\n").first { $0.hasPrefix("things ") && $0.contains(" all ") }
                    #expect(row?.hasSuffix(" b") == true, "\(token.output)")
                }
                let stored = try Self.exported(store)
                #expect(stored["b"]?["text"] as? String == "two")
            }
        }
    }
}
