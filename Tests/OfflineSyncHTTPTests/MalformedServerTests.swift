import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Testing

/// A device syncing with a server that answers garbage gets clear errors and loses nothing: the
/// queue, the local items and the delta token stay as they were, and a later sync with a sound
/// server completes.
@Suite("Malformed server answers lose nothing")
struct MalformedServerTests {
    static let json = [("Content-Type", "application/json")]

    /// What a broken server or proxy might send: a page body, an item body, and what the error
    /// must say.
    struct Garbage: Sendable {
        var name: String
        var page: String
        var item: String
        var says: String
        var contentType = "application/json"

        func response(forPage: Bool) -> ScriptedResponse {
            ScriptedResponse(
                status: 200, headers: [("Content-Type", contentType)], body: Array((forPage ? page : item).utf8))
        }
    }

    static let answers = [
        Garbage(
            name: "truncated JSON", page: #"[{"id":"a","text":"x"},{"id":"#, item: #"{"id":"a","text":"#,
            says: "truncated"),
        Garbage(
            name: "wrong types", page: #"[{"id":"a","updatedAt":42}]"#, item: #"{"id":"a","deleted":"no"}"#,
            says: "must be"),
        Garbage(name: "missing id", page: #"[{"text":"no id"}]"#, item: #"{"text":"no id"}"#, says: "'id'"),
        Garbage(
            name: "HTML error page", page: "<html><title>Service Unavailable</title></html>",
            item: "<html><title>Service Unavailable</title></html>", says: "HTML page", contentType: "text/html"),
    ]

    @Test(
        "a push answered with garbage records an error, keeps the queue and the item, and succeeds later",
        arguments: answers.indices)
    func pushKeepsEverything(_ index: Int) async throws {
        let garbage = Self.answers[index]
        let name = garbage.name
        let store = InMemoryStore()
        try await withLoopbackServer({ _ in garbage.response(forPage: false) }) { port in
            let device = try Device.make("device", store: store, port: port)
            _ = try device.todo.insert(Device.todo("a", "keep me"))
            let result = try await device.context.push()
            #expect(result.errors.count == 1, "\(name)")
            #expect(
                result.errors.first?.message.contains(garbage.says) == true,
                "\(name): \(result.errors.first?.message ?? "no error")")
            #expect(try device.context.pendingOperationCount() == 1, "\(name): the insert stays queued")
            #expect(try device.todo.lookup(id: "a")?["text"] == "keep me", "\(name): the local item is intact")
            try await device.close()
        }
        try await withTableServer { port in
            let device = try Device.make("device", store: store, port: port)
            let result = try await device.context.push()
            #expect(result.succeeded, "\(name): \(result.errors)")
            #expect(try device.todo.lookup(id: "a")?.version != nil, "\(name): the server's copy arrived")
            try await device.close()
        }
    }

    @Test("a pull answered with garbage throws a clear error and changes nothing", arguments: answers.indices)
    func pullChangesNothing(_ index: Int) async throws {
        let garbage = Self.answers[index]
        let name = garbage.name
        let store = InMemoryStore()
        let token = try await withTableServer { port in
            _ = try await send(
                "POST", "/tables/todoitem", port: port, headers: Self.json,
                body: Array(#"{"id":"s","text":"server"}"#.utf8))
            let device = try Device.make("device", store: store, port: port)
            try await device.pullAll()
            let token = try device.context.deltaToken(table: "todoitem", queryId: "allTodoItems")
            try await device.close()
            return token
        }
        try await withLoopbackServer({ _ in garbage.response(forPage: true) }) { port in
            let device = try Device.make("device", store: store, port: port)
            let before = try device.items()
            do {
                try await device.pullAll()
                Issue.record("\(name): the pull should fail")
            } catch {
                #expect("\(error)".contains(garbage.says), "\(name): \(error)")
            }
            #expect(try device.items() == before, "\(name): local items unchanged")
            #expect(
                try device.context.deltaToken(table: "todoitem", queryId: "allTodoItems") == token,
                "\(name): token unchanged")
            try await device.close()
        }
    }
}
