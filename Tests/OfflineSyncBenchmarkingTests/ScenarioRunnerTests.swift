import Foundation
import OfflineSync
import Testing

@testable import OfflineSyncBenchmarking

@Suite("The benchmark runner")
struct ScenarioRunnerTests {
    static let size = BenchmarkSize.scaled(records: 1_000)

    /// The in-memory store, with the raw SQLite baseline as its raw side (so that a quick store
    /// has a ratio to report).
    static let memoryBesideRawSQLite = BenchmarkBackend(
        name: "memory", makeStore: { _ in InMemoryStore() },
        makeBaseline: { try BenchmarkBackend.rawSQLiteBaseline($0) })

    /// The cell of `scenario` on ``memoryBesideRawSQLite``, measured on its own.
    static func measuredCell(_ scenario: BenchmarkScenario, repetitions: Int = 1) async throws
        -> BenchmarkReport.Cell
    {
        let runner = ScenarioRunner(
            backends: [memoryBesideRawSQLite], scenarios: [scenario], size: size, repetitions: repetitions)
        return try #require(await runner.run().cell(scenario.id, "memory"))
    }

    @Test("runs every applicable scenario on every available backend and its raw baseline")
    func measuresEveryApplicableScenario() async throws {
        let runner = ScenarioRunner(
            backends: BenchmarkBackend.available, scenarios: BenchmarkScenario.all, size: Self.size)
        let report = await runner.run()
        for backend in BenchmarkBackend.available {
            let applicable = BenchmarkScenario.all.filter { $0.applies(to: backend.name) }
            #expect(report.cells.filter { $0.backend == backend.name }.map(\.scenario) == applicable.map(\.id))
        }
        for cell in report.cells {
            #expect(cell.error == nil, "\(cell.scenario) on \(cell.backend) failed: \(cell.error ?? "")")
            #expect(cell.rawError == nil, "\(cell.scenario) on raw \(cell.backend) failed: \(cell.rawError ?? "")")
            #expect((cell.store?.operations ?? 0) > 0, "\(cell.scenario) on \(cell.backend) measured no operations")
            let hasBaseline = BenchmarkScenario.all.first { $0.id == cell.scenario }?.prepareBaseline != nil
            #expect(
                (cell.raw != nil) == (cell.backend != "memory" && hasBaseline),
                "\(cell.scenario) on \(cell.backend): raw baseline ran")
        }
    }

    @Test("reports a backend next to its raw baseline with their ratio")
    func reportsRatioToRawBaseline() async throws {
        let report = await ScenarioRunner(
            backends: [Self.memoryBesideRawSQLite], scenarios: [.bulkUpsert], size: Self.size
        ).run()
        let cell = try #require(report.cell("bulk-upsert", "memory"))
        let raw = try #require(cell.raw, "the raw baseline ran: \(cell.rawError ?? "")")
        // Every run upserts every record; a repetition sums its runs.
        #expect(raw.operations > 0 && raw.operations % Self.size.records == 0)
        #expect(cell.ratio != nil)
        let table = report.rendered(as: .table)
        #expect(table.contains("bulk upsert, pages of 1,000"))
        #expect(table.contains("["), "the table shows the ratio in brackets")
    }

    @Test("interleaves a cell's store and raw trials and reports the median of the pairs' ratios")
    func interleavesStoreAndRawTrials() async throws {
        let backend = Self.memoryBesideRawSQLite
        let runner = ScenarioRunner(backends: [backend], scenarios: [.lookup], size: Self.size, repetitions: 3)
        var labels: [String] = []
        let report = await runner.run { _, _, label in labels.append(label) }
        #expect(
            labels == [
                "lookup · memory", "lookup · raw memory", "lookup · raw memory", "lookup · memory", "lookup · memory",
                "lookup · raw memory", "done",
            ])
        let cell = try #require(report.cell("lookup", "memory"))
        #expect(cell.ratios.count == 3)
        #expect(cell.ratio == cell.ratios.sorted()[1])
        #expect(cell.storeCPUSecondsPerOperation.count == 3 && cell.rawCPUSecondsPerOperation.count == 3)
        #expect(cell.storeCPUSecondsPerOperation.allSatisfy { $0 > 0 }, "each repetition's CPU time is kept")
        let json = report.rendered(as: .json)
        #expect(json.contains("\"ratio\""), "the JSON report carries each cell's ratio")
        let decoded = try JSONDecoder().decode(BenchmarkReport.self, from: Data(json.utf8))
        #expect(decoded.cells.first?.ratio == cell.ratio)
    }

    @Test("runs a short trial again within a repetition, the store's runs alternating with the raw side's")
    func repeatsShortTrialsWithinARepetition() async throws {
        // 100 inserts in one batch take a few milliseconds: each repetition runs them again, each
        // run on a fresh store (the queue check in the teardown would fail on a reused one).
        let cell = try await Self.measuredCell(.enqueueBatch, repetitions: 2)
        #expect(cell.error == nil && cell.rawError == nil, "\(cell.error ?? "") \(cell.rawError ?? "")")
        let storeRuns = try #require(cell.storeRuns)
        let rawRuns = try #require(cell.rawRuns)
        #expect(storeRuns.count == 2 && rawRuns.count == 2)
        #expect(storeRuns.allSatisfy { $0 > 1 }, "a short write trial ran more than once per repetition: \(storeRuns)")
        #expect(zip(storeRuns, rawRuns).allSatisfy { abs($0 - $1) <= 1 }, "the two sides alternate")
        #expect(storeRuns.allSatisfy { $0 <= ScenarioRunner.maximumRuns })
        let store = try #require(cell.store)
        #expect(store.operations % Self.size.batchInserts == 0 && store.operations > Self.size.batchInserts)
        #expect(cell.ratios.count == 2)
    }

    @Test("re-arms a trial that can do its work again: an incremental pull of the records changed again")
    func rearmsATrialBetweenRuns() async throws {
        let cell = try await Self.measuredCell(.pullIncremental)
        // Each run checks that it pulled exactly the changed records, so a run on a set-up that
        // was not changed again would have failed the cell.
        #expect(cell.error == nil && cell.rawError == nil, "\(cell.error ?? "") \(cell.rawError ?? "")")
        let runs = try #require(cell.storeRuns?.first)
        #expect(runs > 1)
        #expect(cell.store?.operations == runs * Self.size.changedRecords)
    }

    @Test("calls progress once per trial and finally with the total")
    func reportsProgress() async {
        let runner = ScenarioRunner(backends: [.memory], scenarios: [.lookup], size: Self.size)
        var calls: [(Int, Int)] = []
        _ = await runner.run { done, total, _ in calls.append((done, total)) }
        #expect(calls.map(\.0) == [0, 1])
        #expect(calls.allSatisfy { $0.1 == runner.trialCount })
    }

    @Test("renders Markdown tables and decodable JSON")
    func rendersMarkdownAndJSON() async throws {
        let report = await ScenarioRunner(backends: [.memory], scenarios: [.lookup], size: Self.size).run()
        #expect(report.rendered(as: .markdown).contains("| lookup by random id |"))
        let decoded = try JSONDecoder().decode(BenchmarkReport.self, from: Data(report.rendered(as: .json).utf8))
        #expect(decoded.cells == report.cells)
    }

    @Test("reads the resident memory of the process")
    func readsResidentMemory() throws {
        #expect(try #require(ProcessMemory.residentBytes) > 0)
        #expect(try #require(ProcessMemory.peakResidentBytes) > 0)
        // Other tests of this process reset the peak and free memory: one reading of both.
        let both = try #require(ProcessMemory.residentAndPeakBytes)
        #expect(both.resident > 0 && both.peak >= both.resident, "\(both)")
    }

    @Test("names unknown scenarios in the error")
    func rejectsUnknownScenario() {
        #expect(throws: BenchmarkError.self) { try BenchmarkScenario.named(["lookup", "nope"]) }
    }
}
