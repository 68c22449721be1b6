import Logging
import OfflineSync
import Synchronization

/// A logger whose messages (every level) are kept for the test to read.
final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])

    /// A logger writing into this capture, at `trace` level.
    var logger: Logger {
        var logger = Logger(label: "test.capture") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The messages logged so far, in order.
    var messages: [String] { lines.withLock { $0 } }

    fileprivate func append(_ message: String) {
        lines.withLock { $0.append(message) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.append(event.message.description)
        }
    }
}
