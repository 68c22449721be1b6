import ArgumentParser
import Foundation
import OfflineSyncBenchmarking
import OfflineSync

/// `offline-sync bench`: every benchmark scenario over the chosen backends, side by side, each
/// next to the raw C API doing the same storage work.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Side-by-side benchmarks of the store backends, each as a ratio to its raw C API.",
        discussion: """
            Runs the benchmark scenarios (local enqueue, push, full and incremental pull, query, \
            lookup, purge, cold open) through OfflineSync's shared sync logic on each store, and the \
            same storage work with hand-written C calls (libsqlite3, the dlopen'ed libsqlcipher, \
            LMDB). Each cell shows the store's throughput and, in brackets, its ratio to the raw C \
            API in the same run (1.00 = as fast as C; operations per CPU second, the median of the \
            repetitions; in each repetition the backend's and the raw side's runs alternate until each \
            side has been measured 0.1 s). The HTTP scenarios (http-push, http-push-batched, \
            http-pull) sync the column's store with a table server in the same process over loopback HTTP, \
            its store an SQLite file; they have no raw C equivalent. The default run (15,000 rows, \
            3 repetitions) takes about two and a half minutes on two cores and shows the ratios to within about \
            ±25 %; --long runs 100,000 rows with 9 repetitions (the run behind BENCHMARKS.md, with which \
            two runs agree within ±15 % on almost every ratio; 25 to 35 minutes), and the Benchmarks/ \
            package runs the full-size suite under package-benchmark. Progress goes to standard error: a \
            bar on a terminal, otherwise a line at every tenth of the trials.

            Scenarios, for --scenarios: \(Bench.scenarioList).

            Examples:
              offline-sync bench
              offline-sync bench --long
              offline-sync bench --stores sqlite,lmdb --records 100000 \\
                --repetitions 3 --format markdown
              offline-sync bench --scenarios pull-full-1000 --records 1000000 \\
                --format json
              offline-sync bench --scenarios push,http-push,pull-full-1000,http-pull \\
                --stores sqlite
            """)

    /// The identifiers of every scenario, in report order, for the help text.
    static var scenarioList: String {
        BenchmarkScenario.catalog(workDirectory: NSTemporaryDirectory()).map(\.id).joined(separator: ", ")
    }

    @OptionGroup var global: GlobalOptions

    @Option(help: "Comma-separated backends to compare (default: every backend in this build).")
    var stores: String?

    @Flag(help: "The long, reproducible run: 100,000 rows and 9 repetitions (--records and --repetitions override it).")
    var long = false

    @Option(
        help: "Rows in the table for pulls, queries, lookups and purge; the other scenarios scale with it (default: 15000, 100000 with --long)."
    )
    var records: Int?

    @Option(help: "Comma-separated scenario identifiers to run (default: all; listed above).")
    var scenarios: String?

    @Option(
        help:
            "Repetitions of each cell, a backend's runs alternating with its raw baseline's; the median wall clock and the median ratio are reported (default: 3, 9 with --long; fewer repetitions give ratios that move more between runs)."
    )
    var repetitions: Int?

    /// The rows of the run: `--records`, else the default of the run's length.
    var recordCount: Int { records ?? (long ? 100_000 : 15_000) }

    /// The repetitions of the run: `--repetitions`, else the default of the run's length.
    var repetitionCount: Int { repetitions ?? (long ? 9 : 3) }

    @Option(help: "Output format: table, markdown or json.")
    var format: BenchmarkReport.Format = .table

    @Option(help: "Directory for the temporary stores (default: the system's temporary directory).")
    var workDirectory: String?

    func validate() throws {
        guard recordCount >= 1_000 else { throw ValidationError("--records must be at least 1000") }
        guard repetitionCount >= 1 else { throw ValidationError("--repetitions must be at least 1") }
    }

    func run() async throws {
        _ = global.start("bench")
        let backends = try BenchmarkBackend.named(Self.list(stores))
        let directory = workDirectory ?? NSTemporaryDirectory()
        let catalog = BenchmarkScenario.catalog(workDirectory: directory)
        let selected = try scenarios.map { try BenchmarkScenario.named(Self.list($0), among: catalog) } ?? catalog
        let runner = ScenarioRunner(
            backends: backends, scenarios: selected, size: .scaled(records: recordCount),
            workDirectory: directory, repetitions: repetitionCount)
        var progress = WorkProgress("bench", unit: "trials", total: runner.trialCount)
        let report = await runner.run { done, _, _ in progress.update(done) }
        progress.finish()
        print(report.rendered(as: format))
        let failures = report.cells.flatMap { cell in
            [
                cell.error.map { "\(cell.scenario) on \(cell.backend): \($0)" },
                cell.rawError.map { "\(cell.scenario) on raw \(cell.backend): \($0)" },
            ].compactMap { $0 }
        }
        guard failures.isEmpty else {
            FileHandle.standardError.write(Data(failures.map { "failed: \($0)\n" }.joined().utf8))
            throw ExitCode.failure
        }
    }

    private static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

extension BenchmarkReport.Format: ExpressibleByArgument {}

