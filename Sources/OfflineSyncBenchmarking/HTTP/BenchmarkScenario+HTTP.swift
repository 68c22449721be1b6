import Foundation
import OfflineSync

/// The scenarios over HTTP: a `TableServer` in this process on the loopback interface, its store
/// an SQLite file, the client store the column's backend. They live here rather than in
/// `Benchmarking/`, which the `Benchmarks/` package compiles too and which stays free of NIO and
/// Hummingbird.
extension BenchmarkScenario {
    /// Every scenario of the kit, with the HTTP ones next to their in-process counterparts
    /// (`http-push` and `http-push-batched` after `push`, `http-pull` after the full pull with
    /// pages of 1,000). Server
    /// stores are created under `workDirectory` and removed after each trial.
    package static func catalog(workDirectory: String) -> [BenchmarkScenario] {
        var scenarios = all
        for (scenario, predecessor) in [
            (httpPush(workDirectory: workDirectory), push.id),
            (httpPush(workDirectory: workDirectory, batched: true), "http-push"),
            (httpPull(workDirectory: workDirectory), pullFull(pageSize: 1_000).id),
        ] {
            let position = scenarios.firstIndex { $0.id == predecessor }.map { $0 + 1 } ?? scenarios.endIndex
            scenarios.insert(scenario, at: position)
        }
        return scenarios
    }

    /// A full first pull of `records` rows from the server with pages of 1,000.
    static func httpPull(workDirectory: String) -> BenchmarkScenario {
        BenchmarkScenario(
            id: "http-pull", title: "full pull over HTTP loopback, pages of 1,000 (server: sqlite)", unit: "rows",
            prepareStore: { store, size in
                try await loopbackTrial(workDirectory: workDirectory) { serverStore in
                    try await LoopbackBenchmark.preparePull(
                        records: size.records, pageSize: 1_000, serverStore: serverStore, clientStore: store)
                }
            },
            prepareBaseline: nil)
    }

    /// A push of the queued inserts of the in-process push scenario, one request each; `batched`,
    /// one `POST /$batch` per chunk of 64.
    static func httpPush(workDirectory: String, batched: Bool = false) -> BenchmarkScenario {
        BenchmarkScenario(
            id: batched ? "http-push-batched" : "http-push",
            title: batched
                ? "push queued inserts over HTTP loopback, a batch per 64 (server: sqlite)"
                : "push queued inserts over HTTP loopback, one at a time (server: sqlite)",
            unit: "ops",
            prepareStore: { store, size in
                try await loopbackTrial(workDirectory: workDirectory) { serverStore in
                    try await LoopbackBenchmark.preparePush(
                        operations: size.pushOperations, batched: batched,
                        serverStore: serverStore, clientStore: store)
                }
            },
            prepareBaseline: nil)
    }

    /// A trial over a run prepared with a new SQLite server store (the `sqlite` backend's, at
    /// normal durability) in a directory of its own.
    private static func loopbackTrial(
        workDirectory: String,
        _ prepare: (any LocalStore) async throws -> LoopbackBenchmark.Run
    ) async throws -> Trial {
        let location = try StoreLocation.makeTemporary(under: workDirectory, durability: .normal, usesPassphrase: false)
        do {
            let run = try await prepare(try BenchmarkBackend.sqlite.makeStore(location))
            return Trial(
                operations: run.count, body: { _ = try await run.measure() },
                teardown: {
                    defer { location.removeDirectory() }
                    try await run.finish()
                })
        } catch {
            location.removeDirectory()
            throw error
        }
    }
}
