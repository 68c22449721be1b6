import Benchmark
import Foundation
import OfflineSync
import OfflineSyncBenchmarking

/// Every scenario of OfflineSyncBenchmarking over every available backend, each next to its raw
/// C baseline, plus GRDB doing the storage work of the store scenarios. Benchmark names are
/// `scenario/backend`, `scenario/raw backend` and `scenario/grdb`.
///
/// `OFFLINE_SYNC_BENCH_RECORDS=N` scales every scenario down (or up) from 100,000 rows.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 0,
        maxDuration: .seconds(30),
        maxIterations: 3)

    let size =
        ProcessInfo.processInfo.environment["OFFLINE_SYNC_BENCH_RECORDS"].flatMap(Int.init)
        .map(BenchmarkSize.scaled(records:)) ?? .full
    let workDirectory = NSTemporaryDirectory()

    for scenario in BenchmarkScenario.all {
        for backend in BenchmarkBackend.available where scenario.applies(to: backend.name) {
            Benchmark("\(scenario.id)/\(backend.name)") { benchmark in
                try await measure(
                    try await scenario.storeTrial(on: backend, size: size, under: workDirectory), benchmark)
            }
            if scenario.measuresBaseline(on: backend) {
                Benchmark("\(scenario.id)/raw \(backend.name)") { benchmark in
                    if let trial = try await scenario.baselineTrial(on: backend, size: size, under: workDirectory) {
                        try await measure(trial, benchmark)
                    }
                }
            }
        }
    }
    GRDBScenarios.register(size: size, workDirectory: workDirectory)
}

/// Times only the trial's measured part; set-up and teardown stay outside the measurement.
func measure(_ trial: Trial, _ benchmark: Benchmark) async throws {
    benchmark.startMeasurement()
    do {
        try await trial.run()
    } catch {
        try? await trial.finish()
        throw error
    }
    benchmark.stopMeasurement()
    try await trial.finish()
}
