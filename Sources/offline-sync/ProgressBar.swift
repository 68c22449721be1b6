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
