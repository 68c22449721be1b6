import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncHTTP
import Synchronization

/// The server side of `offline-sync demo`: an in-process `InMemoryRemote` or a real server over
/// HTTP, seen through the same three handles so that one narration serves both.
struct DemoServer {
    /// What the narration calls the server.
    let name: String
    /// The remote this device's sync engine uses; ``OfflineSwitch/setOffline(_:)`` cuts it off.
    let device: OfflineSwitch
    /// A second device's own connection to the same server (for the conflicting edit).
    let otherDevice: any RemoteService
    /// The narrator's view of the server (seeding, counting, the final listing); never offline.
    let view: any RemoteService
    private let remotes: [HTTPRemote]

    /// The starter items of the tutorial, by id.
    static let starters = [("1", "Buy bread"), ("2", "Call mom"), ("3", "Water the plants")]

    /// An in-process server holding the starter items.
    static func inProcess() async throws -> DemoServer {
        let remote = try InMemoryRemote(tables: [Demo.todoSchema()])
        let server = DemoServer(
            name: "an in-process server (InMemoryRemote)", device: OfflineSwitch(remote),
            otherDevice: remote, view: remote, remotes: [])
        try await server.seed()
        return server
    }

    /// How the demo signs in to a server that checks tokens: it mints HS256 tokens for its user
    /// with the server's secret (as an app's sign-in service would), and a new one after a 401.
    struct SignIn: Sendable {
        /// The user the demo's devices act for.
        static let user = "demo-user"
        let secret: [UInt8]

        /// The authentication hook of one device.
        var authentication: HTTPAuthentication {
            let secret = secret
            let mint = { @Sendable in try await TestToken.hs256(secret: secret, subject: Self.user, lifetime: 3600) }
            let current = Locked<String?>(nil)
            return .bearer(
                token: {
                    if let token = current.withLock({ $0 }) { return token }
                    let token = try await mint()
                    current.withLock { $0 = token }
                    return token
                },
                refresh: {
                    let token = try await mint()
                    current.withLock { $0 = token }
                    return token
                })
        }
    }

    /// The server at `url` (the Azure Mobile Apps table protocol 2.0.0), with the starter items
    /// inserted into its `todoitem` table where they are missing; with `signIn`, both devices
    /// send tokens minted for ``SignIn/user``.
    static func http(_ url: String, signIn: SignIn? = nil) async throws -> DemoServer {
        let mine = try HTTPRemote(configuration: .init(baseURL: url, authentication: signIn?.authentication))
        let other: HTTPRemote
        do {
            other = try HTTPRemote(configuration: .init(baseURL: url, authentication: signIn?.authentication))
        } catch {
            try? await mine.shutdown()
            throw error
        }
        let server = DemoServer(
            name: "the server at \(url)\(signIn == nil ? "" : " as \(SignIn.user)")", device: OfflineSwitch(mine),
            otherDevice: other, view: mine, remotes: [mine, other])
        do {
            try await server.seed()
        } catch let error as RemoteError where error.kind == .network {
            try? await server.shutdown()
            throw RemoteURLOption.tlsMismatch(error, url: url) ?? OfflineSyncError(
                .configuration,
                "no server answers at \(url): \(error.message). Start one in another terminal with '\(serveCommand(for: url))' (it serves a todoitem table), then run the demo again"
            )
        } catch {
            try? await server.shutdown()
            throw OfflineSyncError(
                .configuration,
                "could not seed the todoitem table of \(url) (is 'offline-sync serve' or another Azure Mobile Apps server running there?): \(error)"
            )
        }
        return server
    }

    /// The `offline-sync serve` command that listens where `url` points.
    static func serveCommand(for url: String) -> String {
        let components = URLComponents(string: url)
        let port = components?.port.map { " --port \($0)" } ?? ""
        let host = components?.host.flatMap { ["127.0.0.1", "localhost"].contains($0) ? nil : " --host \($0)" } ?? ""
        return "offline-sync serve --store sqlite:server.sqlite\(host)\(port)"
    }

    /// Closes the HTTP connections.
    func shutdown() async throws {
        for remote in remotes { try await remote.shutdown() }
    }

    /// The live `todoitem` rows of the server, every page.
    func items() async throws -> [Item] {
        var items: [Item] = []
        while true {
            let page = try await view.readPage(
                Query(table: "todoitem", orderBy: [SortKey("id")], skip: items.count, top: 50),
                includeDeleted: false)
            items += page.items
            if page.items.isEmpty { return items }
        }
    }

    /// Another device changes an item over its own connection; the server's version changes.
    func changeFromAnotherDevice(id: String, _ change: (inout Item) -> Void) async throws {
        guard var item = try await otherDevice.lookup(id: id, in: "todoitem") else {
            throw OfflineSyncError(.invalidOperation, "the other device found no item '\(id)' on the server to change")
        }
        change(&item)
        _ = try await otherDevice.update(item, in: "todoitem", ifMatch: item.version)
    }

    private func seed() async throws {
        for (id, text) in DemoServer.starters {
            guard try await view.lookup(id: id, in: "todoitem") == nil else { continue }
            _ = try await view.insert(
                Item(id: id, values: ["text": .string(text), "complete": false]), into: "todoitem")
        }
    }
}

/// A `RemoteService` that forwards to another one, or, while offline, fails every call with a
/// `.network` `RemoteError` as a device without a connection would see it.
final class OfflineSwitch: RemoteService {
    private let base: any RemoteService
    private let offline = Locked(false)

    init(_ base: any RemoteService) {
        self.base = base
    }

    /// Cuts the connection (`true`) or restores it (`false`).
    func setOffline(_ value: Bool) {
        offline.withLock { $0 = value }
    }

    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        try check()
        return try await base.readPage(query, includeDeleted: includeDeleted)
    }

    func insert(_ item: Item, into table: String) async throws -> Item {
        try check()
        return try await base.insert(item, into: table)
    }

    func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        try check()
        return try await base.update(item, in: table, ifMatch: version)
    }

    func delete(id: String, from table: String, ifMatch version: String?) async throws {
        try check()
        try await base.delete(id: id, from: table, ifMatch: version)
    }

    func lookup(id: String, in table: String) async throws -> Item? {
        try check()
        return try await base.lookup(id: id, in: table)
    }

    private func check() throws {
        if offline.withLock({ $0 }) {
            throw RemoteError(.network, message: "the device is offline: the demo cut its connection to the server")
        }
    }
}
