import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncTestSupport
import Testing

/// No request can close, corrupt or wedge a dynamic-schema server, on any backend.
@Suite("Malformed writes to a dynamic-schema server")
struct MalformedWriteTests {
    static let api = [("ZUMO-API-VERSION", "2.0.0")]
    static let json = api + [("Content-Type", "application/json")]

    /// One malformed write: what it is, and the request.
    struct Write: Sendable {
        var what: String
        var method = "POST"
        var target = "/tables/todoitem"
        var headers: [(String, String)] = MalformedWriteTests.json
        var body: String
    }

    static let longName = String(repeating: "c", count: 200)
    static let manyColumns = "{" + (0..<600).map { "\"c\($0)\": \($0)" }.joined(separator: ", ") + "}"
    static let deepArray = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)

    /// Every kind of malformed write the protocol allows.
    static let writes: [Write] = [
        Write(what: "a column name with a space", body: #"{"id": "x", "bad name": 1}"#),
        Write(what: "a column name starting with a digit", body: #"{"id": "x", "1st": 1}"#),
        Write(what: "an empty column name", body: #"{"id": "x", "": 1}"#),
        Write(what: "a column name with U+0000", body: #"{"id": "x", "a\u0000b": 1}"#),
        Write(what: "a non-ASCII column name", body: #"{"id": "x", "prénom": "a"}"#),
        Write(what: "a column name of 200 characters", body: #"{"id": "x", "\#(longName)": 1}"#),
        Write(what: "a column differing from one only in case", body: #"{"id": "x", "TEXT": "a"}"#),
        Write(what: "a column named like the id", body: #"{"id": "x", "ID": "a"}"#),
        Write(what: "a column named like a system property", body: #"{"id": "x", "UpdatedAt": "a"}"#),
        Write(what: "600 new columns", body: manyColumns),
        Write(what: "a new column and a wrong type", body: #"{"id": "x", "fresh": 1, "complete": "yes"}"#),
        Write(what: "a string for a bool", body: #"{"id": "x", "complete": "yes"}"#),
        Write(what: "a number for a string", body: #"{"id": "x", "text": 5}"#),
        Write(what: "an object for a string", body: #"{"id": "x", "text": {"a": 1}}"#),
        Write(what: "an array for a bool", body: #"{"id": "x", "complete": [true]}"#),
        Write(what: "a string of 2 MiB", body: #"{"id": "x", "text": "\#(String(repeating: "s", count: 2 << 20))"}"#),
        Write(what: "a number beyond Double", body: #"{"id": "x", "huge": 1e999}"#),
        Write(what: "arrays nested 5,000 deep", body: #"{"id": "x", "deep": \#(deepArray)}"#),
        Write(what: "a body that is an array", body: #"[{"id": "x"}]"#),
        Write(what: "a body that is a string", body: #""x""#),
        Write(what: "a body that is null", body: "null"),
        Write(what: "an empty body", body: ""),
        Write(what: "truncated JSON", body: #"{"id": "x", "text": "#),
        Write(what: "a numeric id", body: #"{"id": 5, "text": "a"}"#),
        Write(what: "an object id", body: #"{"id": {"a": 1}, "text": "a"}"#),
        Write(what: "an id with U+0000", body: #"{"id": "a\u0000b", "text": "a"}"#),
        Write(what: "an id of 300 bytes", body: #"{"id": "\#(String(repeating: "i", count: 300))"}"#),
        Write(what: "an existing id", body: #"{"id": "seed", "text": "again"}"#),
        Write(what: "a table name with a space", target: "/tables/bad%20name", body: #"{"id": "x"}"#),
        Write(what: "a system table", target: "/tables/__operations", body: #"{"id": "x"}"#),
        Write(what: "a table differing from one only in case", target: "/tables/TODOITEM", body: #"{"id": "x"}"#),
        Write(what: "a malformed percent escape in the table", target: "/tables/a%zz", body: #"{"id": "x"}"#),
        Write(what: "a table name of 200 characters", target: "/tables/\(longName)", body: #"{"id": "x"}"#),
        Write(
            what: "a PATCH with a bad column", method: "PATCH", target: "/tables/todoitem/seed",
            body: #"{"bad name": 1}"#),
        Write(
            what: "a PATCH with a wrong type", method: "PATCH", target: "/tables/todoitem/seed",
            body: #"{"complete": 3}"#),
        Write(
            what: "a PATCH of a missing id", method: "PATCH", target: "/tables/todoitem/missing",
            body: #"{"text": "a"}"#),
        Write(
            what: "a PATCH whose body names another id", method: "PATCH", target: "/tables/todoitem/seed",
            body: #"{"id": "other"}"#),
        Write(
            what: "a PATCH with a stale If-Match", method: "PATCH", target: "/tables/todoitem/seed",
            headers: json + [("If-Match", "\"AAAAAAAAAAA=\"")], body: #"{"text": "a"}"#),
        Write(
            what: "a PATCH with an If-Match list", method: "PATCH", target: "/tables/todoitem/seed",
            headers: json + [("If-Match", "\"a\", \"b\"")], body: #"{"text": "a"}"#),
        Write(
            what: "a PATCH with a malformed If-Match", method: "PATCH", target: "/tables/todoitem/seed",
            headers: json + [("If-Match", "\"a")], body: #"{"text": "a"}"#),
        Write(
            what: "a PATCH of an unknown table", method: "PATCH", target: "/tables/nothere/seed",
            body: #"{"text": "a"}"#),
        Write(what: "a DELETE of a missing id", method: "DELETE", target: "/tables/todoitem/missing", body: ""),
        Write(
            what: "a DELETE with a stale If-Match", method: "DELETE", target: "/tables/todoitem/seed",
            headers: api + [("If-Match", "\"AAAAAAAAAAA=\"")], body: ""),
        Write(what: "an undelete of a missing id", target: "/tables/todoitem/missing", body: ""),
        Write(
            what: "a write without ZUMO-API-VERSION", headers: [("Content-Type", "application/json")],
            body: #"{"id": "x"}"#),
        Write(what: "an unsupported method", method: "PUT", target: "/tables/todoitem/seed", body: #"{"text": "a"}"#),
    ]

    /// Writes naming a table or a column with a prefix a backend reserves (`sqlite_`), refused on
    /// every backend so that any store can be migrated to SQLite.
    static func reservedNameWrites(_ prefixes: [String]) -> [Write] {
        prefixes.flatMap { prefix in
            [
                Write(what: "a column name starting with '\(prefix)'", body: #"{"id": "x", "\#(prefix)x": 1}"#),
                Write(
                    what: "a table name starting with '\(prefix)'", target: "/tables/\(prefix)master",
                    body: #"{"id": "x"}"#),
            ]
        }
    }

    /// Runs `body` with a fresh store of `backend` and a server over it that widens the schema
    /// and creates tables, as `serve --dynamic-schema` does.
    static func withDynamicServer(
        _ backend: ServerBackend, _ body: @Sendable (any LocalStore, Int) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let store = try backend.makeStore(in: directory)
        defer { try? store.close() }
        try await withTableServer(
            store: store, tables: [todoItemSchema], options: .init(widensSchema: true), createsTables: true
        ) { port in try await body(store, port) }
    }

    @Test(
        "every malformed write is a 4xx, changes nothing, and good requests still work",
        arguments: ServerBackend.allCases)
    func malformedWritesChangeNothing(backend: ServerBackend) async throws {
        try await Self.withDynamicServer(backend) { store, port in
            let seeded = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.json,
                body: Array(#"{"id": "seed", "text": "kept", "complete": false}"#.utf8))
            #expect(seeded.status == 201)
            let before = try StoreSnapshot(store)
            for write in Self.writes + Self.reservedNameWrites(Identifier.portablyReservedPrefixes) {
                let answer = try await send(
                    write.method, write.target, port: port, headers: write.headers,
                    body: write.body.isEmpty && write.method == "DELETE" ? nil : Array(write.body.utf8))
                #expect((400..<500).contains(answer.status), "\(backend): \(write.what) answered \(answer.status)")
                #expect(
                    (answer.json as? [String: Any])?["error"] != nil || answer.status == 409 || answer.status == 412,
                    "\(backend): \(write.what) names its fault")
            }
            #expect(try StoreSnapshot(store) == before, "\(backend): the malformed writes changed the store")

            let widened = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.json,
                body: Array(#"{"id": "good", "text": "new", "rank": 2}"#.utf8))
            #expect(widened.status == 201, "\(backend): a good write that widens the table still works")
            let created = try await send(
                "POST", "/tables/notes", port: port, headers: Self.json, body: Array(#"{"id": "n", "title": "t"}"#.utf8)
            )
            #expect(created.status == 201, "\(backend): a good write that creates a table still works")
            let page = try await send(
                "GET", "/tables/todoitem?$filter=rank%20eq%202", port: port, headers: Self.api)
            #expect((page.json as? [[String: Any]])?.map { $0["id"] as? String } == ["good"])
            let patched = try await send(
                "PATCH", "/tables/todoitem/seed", port: port, headers: Self.json,
                body: Array(#"{"text": "edited"}"#.utf8))
            #expect(patched.status == 200)
            #expect(try store.lookup(table: "todoitem", id: "seed")?["text"] == "edited")
        }
    }

    /// The members of a body of 50,000 new column names, the size a 1 MiB body allows.
    static let fiftyThousandColumns = (0..<50_000).map { "\"k\($0)\": 1" }.joined(separator: ", ")

    @Test(
        "a write of 50,000 new columns is a 400 naming the column limit, for an insert, a new table and a PATCH",
        arguments: [ServerBackend.memory, .sqlite])
    func thousandsOfNewColumnsAreRefusedByTheirCount(backend: ServerBackend) async throws {
        try await Self.withDynamicServer(backend) { store, port in
            let seeded = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.json, body: Array(#"{"id": "seed"}"#.utf8))
            #expect(seeded.status == 201)
            let before = try StoreSnapshot(store)
            let writes = [
                ("POST", "/tables/todoitem", #"{"id": "wide", "#, 50_000 + todoItemSchema.columns.count),
                ("POST", "/tables/wide", #"{"id": "wide", "#, 50_000 + SystemProperty.allCases.count),
                ("PATCH", "/tables/todoitem/seed", "{", 50_000 + todoItemSchema.columns.count),
            ]
            for (method, target, opening, columns) in writes {
                let answer = try await send(
                    method, target, port: port, headers: Self.json,
                    body: Array((opening + Self.fiftyThousandColumns + "}").utf8))
                let error = (answer.json as? [String: Any])?["error"] as? String ?? ""
                #expect(answer.status == 400, "\(backend): \(method) \(target) answered \(answer.status)")
                #expect(
                    error.contains("would have \(columns) columns; the server allows at most 500"),
                    "\(backend): \(method) \(target): \(error)")
            }
            #expect(try StoreSnapshot(store) == before, "\(backend): the refused writes changed the store")
        }
    }

    @Test(
        "a table or column name starting with sqlite_ in any letter case is the same 400 on every backend",
        arguments: ServerBackend.allCases)
    func sqliteNamesAreRefusedOnEveryBackend(backend: ServerBackend) async throws {
        try await Self.withDynamicServer(backend) { store, port in
            let writes = [
                ("/tables/sqlite_master", #"{"id": "x"}"#, "table name 'sqlite_master'"),
                ("/tables/SQLite_x", #"{"id": "x"}"#, "table name 'SQLite_x'"),
                ("/tables/todoitem", #"{"id": "x", "sqlite_x": 1}"#, "column name 'sqlite_x'"),
                ("/tables/fresh", #"{"id": "x", "SQLITE_y": 1}"#, "column name 'SQLITE_y'"),
            ]
            for (target, body, name) in writes {
                let answer = try await send("POST", target, port: port, headers: Self.json, body: Array(body.utf8))
                let error = (answer.json as? [String: Any])?["error"] as? String ?? ""
                #expect(answer.status == 400, "\(backend): \(target) \(body) answered \(answer.status)")
                #expect(
                    error
                        == "\(name) starts with 'sqlite_', which a storage backend reserves for its own use; choose another name",
                    "\(backend): \(error)")
            }
            let tables = try await send("GET", "/tables/fresh", port: port, headers: Self.api)
            #expect(tables.status == 404, "\(backend): a refused write creates no table")
        }
    }
}
