import Foundation
import OfflineSync
import OfflineSyncHTTP
import Synchronization

/// The client side of a server that runs as several processes: an ``HTTPRemote`` per process,
/// each request sent to one of them at random. A process that fails to answer (killed, say) is
/// taken out of the choice. A read is retried on another process; a write is not (it may have been
/// applied before the connection broke): its failure stops the push, and the next push sends the
/// write again through another process, where a write that did arrive meets 409/412 carrying the
/// server's copy.
final class FailoverRemote: RemoteService {
    let remotes: [HTTPRemote]
    private let state: Locked<(down: Set<Int>, random: SplitMix64, failures: Int)>

    /// How many requests failed on a process and were taken elsewhere (or stopped a push).
    var failures: Int { state.withLock { $0.failures } }

    init(urls: [String], seed: UInt64, name: String) throws {
        remotes = try urls.map { url in
            var configuration = HTTPRemote.Configuration(baseURL: url)
            configuration.connectTimeout = .milliseconds(500)
            configuration.readTimeout = .seconds(20)
            configuration.readRetries = 0
            configuration.retryDelay = .milliseconds(5)
            configuration.clientVersion = "ZUMO/2.0 (lang=Swift; os=--; os_version=--; arch=--; version=\(name))"
            return try HTTPRemote(configuration: configuration)
        }
        state = Locked((down: [], random: SplitMix64(seed: seed), failures: 0))
    }

    func shutdown() async {
        for remote in remotes { try? await remote.shutdown() }
    }

    /// A process that has not failed yet, at random (any, once all have failed).
    private func pick() -> Int {
        state.withLock { state in
            let live = remotes.indices.filter { !state.down.contains($0) }
            let pool = live.isEmpty ? Array(remotes.indices) : live
            return pool[Int(state.random.next() % UInt64(pool.count))]
        }
    }

    private func failed(_ index: Int) {
        state.withLock { state in
            state.failures += 1
            state.down.insert(index)
        }
    }

    private func reading<Result>(_ body: (HTTPRemote) async throws -> Result) async throws -> Result {
        var attempt = 0
        while true {
            let index = pick()
            do {
                return try await body(remotes[index])
            } catch let error as RemoteError where error.kind == .network && attempt < 2 * remotes.count {
                failed(index)
                attempt += 1
            }
        }
    }

    private func writing<Result>(_ body: (HTTPRemote) async throws -> Result) async throws -> Result {
        let index = pick()
        do {
            return try await body(remotes[index])
        } catch let error as RemoteError where error.kind == .network {
            failed(index)
            throw error
        }
    }

    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        try await reading { try await $0.readPage(query, includeDeleted: includeDeleted) }
    }

    func lookup(id: String, in table: String) async throws -> Item? {
        try await reading { try await $0.lookup(id: id, in: table) }
    }

    func insert(_ item: Item, into table: String) async throws -> Item {
        try await writing { try await $0.insert(item, into: table) }
    }

    func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item {
        try await writing { try await $0.update(item, in: table, ifMatch: version) }
    }

    func delete(id: String, from table: String, ifMatch version: String?) async throws {
        try await writing { try await $0.delete(id: id, from: table, ifMatch: version) }
    }
}

/// A small seeded generator, so a failing run can be repeated with its seed.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Shorthands the tests use on the package's ``Locked``.
extension Locked {
    /// The current value.
    var value: Value { withLock { $0 } }

    /// Changes the value while holding the lock.
    @discardableResult
    func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withLock { try body(&$0) }
    }
}
