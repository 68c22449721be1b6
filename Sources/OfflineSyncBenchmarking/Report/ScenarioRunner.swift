import Foundation
import OfflineSync

/// Runs scenarios over backends and their raw baselines, one trial at a time, each in a fresh
/// directory that is removed afterwards.
///
/// A cell's store and raw sides are interleaved within each repetition (store first, then raw
/// first, alternately), so that both sides of a ratio are measured under the same load; the
/// cell's ratio is the median of the repetitions' ratios in CPU time (see
/// ``BenchmarkReport/Cell/ratio``). Within a repetition, the two sides run in alternating short
/// runs until each has been measured ``minimumSeconds`` (see ``measure(_:)``): a trial that only
/// reads (``Trial/repeatable``) ``sliceSeconds`` at a time on one set-up, a trial that writes once
/// per fresh set-up, or again on its set-up re-armed (``Trial/prepareAgain()``).
package struct ScenarioRunner: Sendable {
    /// The backends to measure, in column order.
    var backends: [BenchmarkBackend]
    /// The scenarios to run, in row order.
    var scenarios: [BenchmarkScenario]
    /// How big each scenario is.
    var size: BenchmarkSize
    /// The directory under which each trial gets its own temporary directory.
    var workDirectory: String
    /// How many repetitions each cell gets; the report keeps the repetition with the median wall
    /// clock and the median of the per-repetition ratios.
    var repetitions: Int

    /// Creates a runner.
    package init(
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
    package var trialCount: Int {
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
    package func run(progress: (Int, Int, String) -> Void = { _, _, _ in }) async -> BenchmarkReport {
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
                    let store = Side(label: "\(scenario.id) · \(backend.name)") {
                        try await scenario.storeTrial(on: backend, size: size, under: workDirectory)
                    }
                    let raw = Side(label: "\(scenario.id) · raw \(backend.name)") {
                        guard
                            let trial = try await scenario.baselineTrial(on: backend, size: size, under: workDirectory)
                        else { throw BenchmarkError("\(scenario.id) has no raw baseline for \(backend.name)") }
                        return trial
                    }
                    if cell.error != nil { store.error = cell.error }
                    if cell.rawError != nil { raw.error = cell.rawError }
                    let sides = paired ? (repetition % 2 == 1 ? [raw, store] : [store, raw]) : [store]
                    for side in sides {
                        progress(done, total, side.label)
                        done += 1
                    }
                    await measure(sides)
                    if cell.error == nil { cell.error = store.error }
                    if paired, cell.rawError == nil { cell.rawError = raw.error }
                    guard store.error == nil, raw.error == nil else { continue }
                    if let store = store.total { storeRuns.append(store) }
                    if let raw = raw.total { rawRuns.append(raw) }
                    cell.storeRuns = (cell.storeRuns ?? []) + [store.runs]
                    if paired { cell.rawRuns = (cell.rawRuns ?? []) + [raw.runs] }
                    if let cpu = store.total?.cpuSecondsPerOperation { cell.storeCPUSecondsPerOperation.append(cpu) }
                    if let cpu = raw.total?.cpuSecondsPerOperation { cell.rawCPUSecondsPerOperation.append(cpu) }
                    if let store = store.total, let raw = raw.total, raw.throughput > 0 {
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

    /// The least wall clock each side of a repetition is measured over: a side whose runs
    /// took less runs again (see ``measure(_:)``). Short trials otherwise swing with every timer
    /// tick, cache miss and change in the machine's speed; summed over this long, their ratios
    /// reproduce from run to run (BENCHMARKS.md, "Measurement").
    static let minimumSeconds = 0.1

    /// How long one run of a repeatable trial lasts: its body runs again until the run has
    /// taken this long, and the store's and the raw side's runs alternate (see ``measure(_:)``).
    static let sliceSeconds = 0.02

    /// The most runs of each side in one repetition.
    static let maximumRuns = 16

    /// The wall clock, set-up included, that the runs after each side's first may take in one
    /// repetition: no run starts after it. A trial whose every run needs a long set-up (purging
    /// 100,000 rows loaded first) runs once or twice per repetition.
    static let repetitionBudgetSeconds = 1.5

    /// One side of a cell (the store or its raw baseline) in one repetition: how to prepare its
    /// trial, and the sum of its runs.
    private final class Side {
        /// The progress label.
        let label: String
        /// Prepares a new trial of this side.
        let prepare: () async throws -> Trial
        /// A trial that can run again (it only reads, or it can be re-armed), kept between
        /// runs; every run of another one prepares a new trial.
        var trial: Trial?
        /// The runs so far, summed (see ``Measurement/adding(_:)``).
        var total: Measurement?
        /// How many runs were measured.
        var runs = 0
        /// Why the side failed, if it did.
        var error: String?

        init(label: String, prepare: @escaping () async throws -> Trial) {
            self.label = label
            self.prepare = prepare
        }

        /// Whether the side needs another run to reach ``ScenarioRunner/minimumSeconds``.
        var isShort: Bool { error == nil && (total?.seconds ?? 0) < ScenarioRunner.minimumSeconds }

        /// Measures one more run, preparing a trial first when none is kept.
        func runOnce() async {
            guard error == nil else { return }
            do {
                let trial: Trial
                if let kept = self.trial {
                    self.trial = nil
                    do {
                        try await kept.prepareAgain()
                    } catch {
                        try? await kept.finish()
                        throw error
                    }
                    trial = kept
                } else {
                    trial = try await prepare()
                }
                let measurement: Measurement
                do {
                    measurement =
                        trial.repeatable
                        ? try await Measurement.measure(
                            operationsPerRun: trial.operations, minimumSeconds: ScenarioRunner.sliceSeconds
                        ) { try await trial.run() }
                        : try await Measurement.measure(operations: trial.operations) { try await trial.run() }
                } catch {
                    try? await trial.finish()
                    throw error
                }
                if trial.canRunAgain {
                    self.trial = trial
                } else {
                    try await trial.finish()
                }
                total = total.map { $0.adding(measurement) } ?? measurement
                runs += 1
            } catch {
                self.error = "\(error)"
            }
        }

        /// Finishes a kept trial.
        func finish() async {
            guard let trial else { return }
            self.trial = nil
            do {
                try await trial.finish()
            } catch {
                if self.error == nil { self.error = "\(error)" }
            }
        }
    }

    /// Runs `sides` (the store and its raw baseline, in the order to start with, or the store
    /// alone) in alternating runs until each has been measured ``minimumSeconds``, or has run
    /// ``maximumRuns`` times, or the runs after the first round have taken
    /// ``repetitionBudgetSeconds``.
    ///
    /// The machine's speed moves between trials: the same raw LMDB insert of 100,000 rows in
    /// pages of 50 took 0.049 to 0.124 s of user CPU in eight trials in a row, with the same
    /// system time and page faults (BENCHMARKS.md, "Measurement"). A ratio of one store trial to
    /// one raw trial moves with it; runs of a few hundredths of a second each, alternated, put
    /// both sides of a ratio under the same mix of speeds. A repeatable (read-only) trial is set
    /// up once and runs ``sliceSeconds`` at a time; a trial that writes is set up anew for
    /// each run, or re-armed (``Trial/prepareAgain()``) when it can be, the set-up outside the
    /// measured part as always.
    private func measure(_ sides: [Side]) async {
        var extraRoundsStart: Date?
        var round = 0
        repeat {
            let order = round % 2 == 0 ? sides : sides.reversed()
            for side in order { await side.runOnce() }
            round += 1
            if round == 1 { extraRoundsStart = Date() }
        } while sides.contains(where: \.isShort) && !sides.contains(where: { $0.error != nil })
            && round < ScenarioRunner.maximumRuns
            && Date().timeIntervalSince(extraRoundsStart ?? Date()) < ScenarioRunner.repetitionBudgetSeconds
        for side in sides { await side.finish() }
    }
}
