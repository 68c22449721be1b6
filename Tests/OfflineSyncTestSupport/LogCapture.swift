package import Logging
package import OfflineSync
package import Synchronization

/// A logger whose messages (every level) are kept for the test to read.
package final class LogCapture: Sendable {
    private let lines = Locked<[String]>([])

    /// Creates an empty capture.
    package init() {}

    /// A logger writing into this capture, at `trace` level.
    package var logger: Logger {
        var logger = Logger(label: "test.capture") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The messages logged so far, in order.
    package var messages: [String] { lines.withLock { $0 } }

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
