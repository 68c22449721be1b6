import Foundation
import OfflineSync

/// Runs scenarios over backends and their raw baselines, one trial at a time, each in a fresh
/// directory that is removed afterwards.
struct ScenarioRunner: Sendable {
    /// The backends to measure, in column order.
    var backends: [BenchmarkBackend]
    /// The scenarios to run, in row order.
    var scenarios: [BenchmarkScenario]
    /// How big each scenario is.
    var size: BenchmarkSize
    /// The directory under which each trial gets its own temporary directory.
    var workDirectory: String
    /// How many times each trial runs; the report keeps the run with the median wall clock.
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
                    count + 1 + (backend.makeBaseline != nil && scenario.prepareBaseline != nil ? 1 : 0)
                }
        }
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
                progress(done, total, "\(scenario.id) · \(backend.name)")
                var cell = BenchmarkReport.Cell(scenario: scenario.id, backend: backend.name)
                do {
                    cell.store = try await measureStore(scenario, backend)
                } catch {
                    cell.error = "\(error)"
                }
                done += 1
                if backend.makeBaseline != nil, scenario.prepareBaseline != nil {
                    progress(done, total, "\(scenario.id) · raw \(backend.name)")
                    do {
                        cell.raw = try await measureBaseline(scenario, backend)
                    } catch {
                        cell.rawError = "\(error)"
                    }
                    done += 1
                }
                report.cells.append(cell)
            }
        }
        progress(done, total, "done")
        return report
    }

    private func measureStore(_ scenario: BenchmarkScenario, _ backend: BenchmarkBackend) async throws -> Measurement {
        try await median {
            try await measure(try await scenario.storeTrial(on: backend, size: size, under: workDirectory))
        }
    }

    private func measureBaseline(_ scenario: BenchmarkScenario, _ backend: BenchmarkBackend) async throws
        -> Measurement?
    {
        try await median {
            guard let trial = try await scenario.baselineTrial(on: backend, size: size, under: workDirectory) else {
                throw BenchmarkError("\(scenario.id) has no raw baseline for \(backend.name)")
            }
            return try await measure(trial)
        }
    }

    /// The measurement with the median wall clock of ``repetitions`` runs.
    private func median(_ run: () async throws -> Measurement) async throws -> Measurement {
        var runs: [Measurement] = []
        for _ in 0..<repetitions {
            runs.append(try await run())
        }
        return runs.sorted { $0.seconds < $1.seconds }[runs.count / 2]
    }

    private func measure(_ trial: Trial) async throws -> Measurement {
        do {
            let measurement = try await Measurement.measure(operations: trial.operations) { try await trial.run() }
            try await trial.finish()
            return measurement
        } catch {
            try? await trial.finish()
            throw error
        }
    }
}
