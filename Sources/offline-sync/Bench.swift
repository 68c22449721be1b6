import ArgumentParser
import Foundation
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
            its store an SQLite file; they have no raw C equivalent. The default size (20,000 rows, 9 repetitions, \
            with which pairs of runs agreed within ±15 % on 47 to 49 of their 49 ratios in sessions 9 to 16: \
            BENCHMARKS.md) takes seven to nine \
            minutes on two cores; \
            the Benchmarks/ package runs the full-size suite. A progress bar is drawn on standard \
            error when it is a terminal.

            Examples:
              offline-sync bench
              offline-sync bench --stores sqlite,lmdb --records 100000 --repetitions 3 --format markdown
              offline-sync bench --scenarios pull-full-1000 --records 1000000 --format json
              offline-sync bench --scenarios push,http-push,pull-full-1000,http-pull --stores sqlite
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Comma-separated backends to compare (default: every backend in this build).")
    var stores: String?

    @Option(help: "Rows in the table for pulls, queries, lookups and purge; the other scenarios scale with it.")
    var records = 20_000

    @Option(help: "Comma-separated scenario identifiers to run (default: all).")
    var scenarios: String?

    @Option(
        help:
            "Repetitions of each cell, a backend's runs alternating with its raw baseline's; the median wall clock and the median ratio are reported (fewer repetitions give ratios that move more between runs)."
    )
    var repetitions = 9

    @Option(help: "Output format: table, markdown or json.")
    var format: BenchmarkReport.Format = .table

    @Option(help: "Directory for the temporary stores (default: the system's temporary directory).")
    var workDirectory: String?

    func validate() throws {
        guard records >= 1_000 else { throw ValidationError("--records must be at least 1000") }
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
    }

    func run() async throws {
        _ = global.start("bench")
        let backends = try BenchmarkBackend.named(Self.list(stores))
        let directory = workDirectory ?? NSTemporaryDirectory()
        let catalog = BenchmarkScenario.catalog(workDirectory: directory)
        let selected = try scenarios.map { try BenchmarkScenario.named(Self.list($0), among: catalog) } ?? catalog
        let runner = ScenarioRunner(
            backends: backends, scenarios: selected, size: .scaled(records: records),
            workDirectory: directory, repetitions: repetitions)
        var bar = ProgressBar("bench", total: runner.trialCount)
        let report = await runner.run { done, _, _ in bar.update(done) }
        bar.finish()
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
