import Foundation

/// The results of a run: one cell per (scenario, backend) with the backend's and the raw
/// baseline's measurements, rendered as a side-by-side table, Markdown or JSON.
package struct BenchmarkReport: Sendable, Codable {
    /// A row of the report.
    struct ScenarioInfo: Sendable, Codable, Hashable {
        /// The scenario's identifier.
        var id: String
        /// The row title.
        var title: String
        /// The unit of its operations.
        var unit: String
    }

    /// One (scenario, backend) result.
    package struct Cell: Sendable, Codable, Hashable {
        /// The scenario's identifier.
        package var scenario: String
        /// The backend's name.
        package var backend: String
        /// The backend's measurement, `nil` when it failed.
        var store: Measurement?
        /// The raw baseline's measurement, `nil` when there is none or it failed.
        var raw: Measurement?
        /// Why the backend's trial failed.
        package var error: String?
        /// Why the baseline's trial failed.
        package var rawError: String?
        /// The cell's ratio, backend ÷ raw C API (1.0 = as fast as the raw C API): operations per
        /// CPU second of the whole process, the median of ``ratios``; `nil` without a baseline or
        /// when a trial failed. CPU time, not wall clock, because it does not count the time other
        /// processes hold the cores (BENCHMARKS.md has the measurements behind this choice); it
        /// does not count time spent waiting for the disk either, which both sides of the durable
        /// scenario spend alike (``wallRatio`` includes it).
        var ratio: Double?
        /// The CPU-time ratio of each repetition: the store's runs against the raw side's runs
        /// that alternated with them (see `ScenarioRunner`).
        var ratios: [Double] = []
        /// The store's CPU seconds per operation in each repetition, in the order they ran.
        var storeCPUSecondsPerOperation: [Double] = []
        /// The raw baseline's CPU seconds per operation in each repetition, in the order they ran.
        var rawCPUSecondsPerOperation: [Double] = []
        /// The same ratio in wall-clock throughput (median over the repetitions).
        var wallRatio: Double?
        /// How many runs of the store were measured in each repetition (`nil` in reports from
        /// runners that ran one trial of each side per repetition).
        var storeRuns: [Int]?
        /// How many runs of the raw baseline were measured in each repetition.
        var rawRuns: [Int]?
    }

    /// The sizes the run used.
    var size: BenchmarkSize
    /// The backend columns, in order.
    var backends: [String]
    /// The scenario rows, in order.
    var scenarios: [ScenarioInfo]
    /// The results.
    package var cells: [Cell] = []

    /// The output formats.
    package enum Format: String, Sendable, CaseIterable {
        /// Aligned plain text for a terminal.
        case table
        /// GitHub-flavoured Markdown tables.
        case markdown
        /// The whole report as JSON.
        case json
    }

    /// The cell of a scenario and backend, if it ran.
    func cell(_ scenario: String, _ backend: String) -> Cell? {
        cells.first { $0.scenario == scenario && $0.backend == backend }
    }

    /// The report rendered in `format`.
    package func rendered(as format: Format) -> String {
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        case .table:
            return [Self.aligned(throughputRows()), Self.aligned(costRows()), legend].joined(separator: "\n\n")
        case .markdown:
            return [Self.markdown(throughputRows()), Self.markdown(costRows()), legend].joined(separator: "\n\n")
        }
    }

    private var legend: String {
        """
        Throughput of each backend through OfflineSync (wall clock), with [its ratio to the raw C API doing \
        the same storage work in the same run, in operations per CPU second: the median, over the \
        repetitions, of each store trial against the raw trial run right next to it]: 1.00 = as fast as \
        hand-written C calls; a cell without brackets \
        has no raw C equivalent (the row title says what else it involves). The second table gives \
        wall clock and peak resident memory above the start of the measured part (backend / raw). \
        "—" = not applicable; "failed" = the trial threw (the JSON report says why).
        """
    }

    private func throughputRows() -> [[String]] {
        rows(heading: "scenario") { scenario, cell, store in
            let ratio = cell.ratio.map { String(format: " [%.2f]", $0) } ?? ""
            return Self.rate(store.throughput) + " \(scenario.unit)/s" + ratio
        }
    }

    private func costRows() -> [[String]] {
        rows(heading: "wall clock, peak memory") { _, cell, store in
            Self.cost(store) + (cell.raw.map { " / " + Self.cost($0) } ?? "")
        }
    }

    /// A table with a row per scenario and a column per backend: "—" where the scenario does not
    /// apply, "failed" where the trial threw, else what `text` makes of the cell and its store's
    /// measurement.
    private func rows(
        heading: String, _ text: (ScenarioInfo, Cell, Measurement) -> String
    ) -> [[String]] {
        var rows = [[heading] + backends]
        for scenario in scenarios {
            rows.append(
                [scenario.title]
                    + backends.map { backend in
                        guard let cell = cell(scenario.id, backend) else { return "—" }
                        guard let store = cell.store else { return "failed" }
                        return text(scenario, cell, store)
                    })
        }
        return rows
    }

    static func rate(_ value: Double) -> String {
        switch value {
        case 1_000_000...: return String(format: "%.2fM", value / 1_000_000)
        case 10_000...: return String(format: "%.0fk", value / 1_000)
        case 1_000...: return String(format: "%.1fk", value / 1_000)
        default: return String(format: "%.1f", value)
        }
    }

    static func cost(_ measurement: Measurement) -> String {
        let time =
            measurement.seconds >= 1
            ? String(format: "%.2f s", measurement.seconds)
            : String(format: "%.1f ms", measurement.seconds * 1000)
        guard let peak = measurement.peakResidentBytes, let start = measurement.startResidentBytes else { return time }
        return time + String(format: ", +%.0f MB", Double(max(peak - start, 0)) / 1_048_576)
    }

    static func aligned(_ rows: [[String]]) -> String {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.enumerated().map { index, row in
            let line = zip(row, widths).enumerated().map { column, pair in
                column == 0
                    ? pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: pair.1 - pair.0.count) + pair.0
            }.joined(separator: "  ")
            return index == 0 ? line + "\n" + String(repeating: "-", count: line.count) : line
        }.joined(separator: "\n")
    }

    static func markdown(_ rows: [[String]]) -> String {
        guard let header = rows.first else { return "" }
        let lines =
            [
                "| " + header.joined(separator: " | ") + " |",
                "|" + header.indices.map { $0 == 0 ? " --- |" : " ---: |" }.joined(),
            ]
            + rows.dropFirst().map { "| " + $0.joined(separator: " | ") + " |" }
        return lines.joined(separator: "\n")
    }
}
