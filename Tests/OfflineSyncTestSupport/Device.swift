package import OfflineSync
package import OfflineSyncHTTP

/// A client device of the end-to-end tests: its own store, an ``HTTPRemote`` to the server, a
/// sync context over both.
package struct Device {
    let name: String
    let store: any LocalStore
    let remote: HTTPRemote
    package let context: SyncContext
    package let todo: SyncTable

    package static let todoSchema = TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])

    /// A device on `store` talking to `http://127.0.0.1:port`, sending a push's chunks as batches
    /// or one write at a time as `batchWrites` says.
    package static func make(
        _ name: String, store: any LocalStore, port: Int, handler: any PushHandler = DefaultPushHandler(),
        batchWrites: HTTPRemote.BatchWrites = .whenSupported,
        configure: (inout HTTPRemote.Configuration) -> Void = { _ in }
    ) throws -> Device {
        var configuration = HTTPRemote.Configuration(baseURL: "http://127.0.0.1:\(port)")
        configuration.batchWrites = batchWrites
        // Connecting to a stopped server on loopback is refused at once; the limit only has to
        // outlast a machine busy with other tests.
        configuration.connectTimeout = .seconds(5)
        configuration.readRetries = 1
        configuration.retryDelay = .milliseconds(10)
        configuration.clientVersion = "ZUMO/2.0 (lang=Swift; os=--; os_version=--; arch=--; version=\(name))"
        configure(&configuration)
        let remote = try HTTPRemote(configuration: configuration)
        return try make(name, store: store, remote: remote, handler: handler)
    }

    private static func make(_ name: String, store: any LocalStore, remote: HTTPRemote, handler: any PushHandler) throws
        -> Device
    {
        let context = try SyncContext(store: store, remote: remote, tables: [todoSchema], pushHandler: handler)
        return Device(name: name, store: store, remote: remote, context: context, todo: try context.table("todoitem"))
    }

    /// Closes the store and opens a new context over it, as an app restart does.
    package func restarted(handler: any PushHandler = DefaultPushHandler()) throws -> Device {
        try context.close()
        return try Device.make(name, store: store, remote: remote, handler: handler)
    }

    /// Pulls every todo item incrementally.
    @discardableResult
    package func pullAll() async throws -> PullResult {
        try await todo.pull(queryId: "allTodoItems")
    }

    /// The local items by id.
    package func items() throws -> [String: Item] {
        Dictionary(uniqueKeysWithValues: try todo.read().items.map { ($0.id, $0) })
    }

    package func close() async throws {
        try context.close()
        try await remote.shutdown()
    }

    package static func todo(_ id: String, _ text: String, complete: Bool = false) -> Item {
        Item(id: id, values: ["text": .string(text), "complete": .bool(complete)])
    }
}
