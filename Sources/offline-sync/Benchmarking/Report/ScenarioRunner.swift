import Foundation
import OfflineSync

/// Runs scenarios over backends and their raw baselines, one trial at a time, each in a fresh
/// directory that is removed afterwards.
///
/// A cell's store and raw trials are interleaved, one pair per repetition (store then raw, then
/// raw then store, alternately), so that both sides of a ratio are measured under the same load;
/// the cell's ratio is the median of the pairs' ratios in CPU time (see
/// ``BenchmarkReport/Cell/ratio``). A trial that only reads (``Trial/repeatable``) runs its body
/// again until it has run ``minimumRepeatableSeconds``.
struct ScenarioRunner: Sendable {
    /// The backends to measure, in column order.
    var backends: [BenchmarkBackend]
    /// The scenarios to run, in row order.
    var scenarios: [BenchmarkScenario]
    /// How big each scenario is.
    var size: BenchmarkSize
    /// The directory under which each trial gets its own temporary directory.
    var workDirectory: String
    /// How many times each trial runs; the report keeps the run with the median wall clock and
    /// the median of the per-repetition ratios.
    var repetitions: Int

    /// Creates a runner.
    init(
        backends: [BenchmarkBackend], scenarios: [BenchmarkScenario], size: BenchmarkSize,
        workDirectory: String = NSTemporaryDirectory(), repetitions: Int = 1
    ) {
        self.backends = backends
        self.scenarios = scenarios
        self.size = size
        self.workDirectory = workDirectory
        self.repetitions = max(repetitions, 1)
    }

    /// How many trials ``run(progress:)`` performs (for a progress bar).
    var trialCount: Int {
        scenarios.reduce(0) { total, scenario in
            total
                + backends.filter { scenario.applies(to: $0.name) }.reduce(0) { count, backend in
                    count + repetitions * (hasBaseline(scenario, backend) ? 2 : 1)
                }
        }
    }

    private func hasBaseline(_ scenario: BenchmarkScenario, _ backend: BenchmarkBackend) -> Bool {
        backend.makeBaseline != nil && scenario.prepareBaseline != nil
    }

    /// Runs every applicable (scenario, backend) pair and its baseline. A failing trial is
    /// recorded in the report with its error; the run goes on.
    /// - Parameter progress: called before each trial with the number done, the total and a label.
    func run(progress: (Int, Int, String) -> Void = { _, _, _ in }) async -> BenchmarkReport {
        var report = BenchmarkReport(
            size: size, backends: backends.map(\.name),
            scenarios: scenarios.map {
                BenchmarkReport.ScenarioInfo(id: $0.id, title: $0.title, unit: $0.unit)
            })
        let total = trialCount
        var done = 0
        for scenario in scenarios {
            for backend in backends where scenario.applies(to: backend.name) {
                var cell = BenchmarkReport.Cell(scenario: scenario.id, backend: backend.name)
                let paired = hasBaseline(scenario, backend)
                var storeRuns: [Measurement] = []
                var rawRuns: [Measurement] = []
                var wallRatios: [Double] = []
                for repetition in 0..<repetitions {
                    var store: Measurement?
                    var raw: Measurement?
                    func runStore() async {
                        progress(done, total, "\(scenario.id) · \(backend.name)")
                        done += 1
                        guard cell.error == nil else { return }
                        do {
                            store = try await measureStore(scenario, backend)
                        } catch {
                            cell.error = "\(error)"
                        }
                    }
                    func runRaw() async {
                        progress(done, total, "\(scenario.id) · raw \(backend.name)")
                        done += 1
                        guard cell.rawError == nil else { return }
                        do {
                            raw = try await measureBaseline(scenario, backend)
                        } catch {
                            cell.rawError = "\(error)"
                        }
                    }
                    if paired && repetition % 2 == 1 {
                        await runRaw()
                        await runStore()
                    } else {
                        await runStore()
                        if paired { await runRaw() }
                    }
                    if let store { storeRuns.append(store) }
                    if let raw { rawRuns.append(raw) }
                    if let cpu = store?.cpuSecondsPerOperation { cell.storeCPUSecondsPerOperation.append(cpu) }
                    if let cpu = raw?.cpuSecondsPerOperation { cell.rawCPUSecondsPerOperation.append(cpu) }
                    if let store, let raw, raw.throughput > 0 {
                        wallRatios.append(store.throughput / raw.throughput)
                        if let storeCPU = store.cpuSeconds, let rawCPU = raw.cpuSeconds {
                            // Operations per CPU second, store ÷ raw (a clock tick of 1 ns floors both).
                            cell.ratios.append(
                                (Double(store.operations) / max(storeCPU, 1e-9))
                                    / (Double(raw.operations) / max(rawCPU, 1e-9)))
                        }
                    }
                }
                cell.store = ScenarioRunner.median(storeRuns)
                cell.raw = ScenarioRunner.median(rawRuns)
                if cell.error == nil, cell.rawError == nil, !cell.ratios.isEmpty {
                    cell.ratio = ScenarioRunner.median(cell.ratios)
                    cell.wallRatio = ScenarioRunner.median(wallRatios)
                } else {
                    cell.ratios = []
                }
                report.cells.append(cell)
            }
        }
        progress(done, total, "done")
        return report
    }

    private func measureStore(_ scenario: BenchmarkScenario, _ backend: BenchmarkBackend) async throws -> Measurement {
        try await measure(try await scenario.storeTrial(on: backend, size: size, under: workDirectory))
    }

    private func measureBaseline(_ scenario: BenchmarkScenario, _ backend: BenchmarkBackend) async throws
        -> Measurement
    {
        guard let trial = try await scenario.baselineTrial(on: backend, size: size, under: workDirectory) else {
            throw BenchmarkError("\(scenario.id) has no raw baseline for \(backend.name)")
        }
        return try await measure(trial)
    }

    /// The measurement with the median wall clock (`nil` for none).
    static func median(_ runs: [Measurement]) -> Measurement? {
        guard !runs.isEmpty else { return nil }
        return runs.sorted { $0.seconds < $1.seconds }[runs.count / 2]
    }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The least wall clock a repeatable trial is measured over: its body runs again until the
    /// runs add up to this. Short read trials (an indexed query batch takes about a millisecond)
    /// otherwise swing with every timer tick and cache miss; repeated, their median ratios
    /// reproduce from run to run (BENCHMARKS.md, "Stability").
    static let minimumRepeatableSeconds = 0.1

    private func measure(_ trial: Trial) async throws -> Measurement {
        do {
            let measurement =
                trial.repeatable
                ? try await Measurement.measure(
                    operationsPerRun: trial.operations, minimumSeconds: ScenarioRunner.minimumRepeatableSeconds
                ) { try await trial.run() }
                : try await Measurement.measure(operations: trial.operations) { try await trial.run() }
            try await trial.finish()
            return measurement
        } catch {
            try? await trial.finish()
            throw error
        }
    }
}
