/// A remote that passes every call to ``base``: a wrapper declares only the calls it changes (a
/// page it watches, a request it holds, an answer it alters) and forwards the rest, batched
/// pushes included.
package protocol ForwardingRemote: RemoteService {
    /// The remote every call goes to.
    var base: any RemoteService { get }
}

extension ForwardingRemote {
    package func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        try await base.readPage(query, includeDeleted: includeDeleted)
    }

    package func insert(_ item: Item, into table: String) async throws -> Item {
        try await base.insert(item, into: table)
    }

    package func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        try await base.update(item, in: table, ifMatch: version)
    }

    package func delete(id: String, from table: String, ifMatch version: String?) async throws {
        try await base.delete(id: id, from: table, ifMatch: version)
    }

    package func lookup(id: String, in table: String) async throws -> Item? {
        try await base.lookup(id: id, in: table)
    }

    package func send(_ writes: [RemoteWrite]) async -> [Result<Item?, any Error>] {
        await base.send(writes)
    }
}
