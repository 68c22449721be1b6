import Foundation

/// A progress bar on standard error, drawn only when standard error is a terminal.
struct ProgressBar {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var drawnPercent = -1

    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
        enabled = isatty(STDERR_FILENO) == 1 && total > 0
    }

    /// Redraws the bar when the percentage changed.
    mutating func update(_ done: Int) {
        guard enabled else { return }
        let percent = min(100, done * 100 / total)
        guard percent != drawnPercent else { return }
        drawnPercent = percent
        let width = 30
        let filled = percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(percent)% \(done)/\(total)".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        guard enabled, drawnPercent >= 0 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// The progress of long work on standard error: the bar on a terminal; otherwise (a log, CI, the
/// main job piped) one line at every tenth of the work, with the time so far, so a long run is
/// never silent (`bench: 40% (96 of 240 trials, 61 s)`).
struct WorkProgress {
    private var bar: ProgressBar
    private let label: String
    private let unit: String
    private let total: Int
    private let printsLines: Bool
    private let start = ContinuousClock.now
    private var printedTenths = 0

    /// Progress of `total` units of work named `unit` (e.g. `trials`), each line starting with
    /// `label`; `lines: false` leaves a log without lines (the bar still shows on a terminal).
    init(_ label: String, unit: String, total: Int, lines: Bool = true) {
        bar = ProgressBar(label, total: total)
        self.label = label
        self.unit = unit
        self.total = total
        printsLines = lines && isatty(STDERR_FILENO) != 1 && total > 0
    }

    /// Records that `done` units have finished.
    mutating func update(_ done: Int) {
        bar.update(done)
        guard printsLines else { return }
        let tenths = min(10, done * 10 / total)
        guard tenths > printedTenths else { return }
        printedTenths = tenths
        let seconds = Int((ContinuousClock.now - start) / .seconds(1))
        FileHandle.standardError.write(
            Data("\(label): \(tenths * 10)% (\(done) of \(total) \(unit), \(seconds) s)\n".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        bar.finish()
    }
}
