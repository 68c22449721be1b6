import Dispatch
import Foundation
import OfflineSync
import OfflineSyncHTTP

/// `sync --watch`: a `Replicator` on the command's context and remote, with the server's change
/// stream, printing one status line per change of state until SIGINT or SIGTERM.
struct SyncWatch {
    let command: Sync

    /// Runs until interrupted, then reports what is still queued.
    func run(_ context: SyncContext) async throws {
        let configuration = try command.remoteConfiguration()
        let stream = ChangeStream(configuration: configuration)
        let replicator = Replicator(
            context: context, pulls: [PullRequest(table: command.table, queryId: command.pulledQueryId)],
            signal: stream,
            options: Replicator.Options(
                pollInterval: .milliseconds(Int64(command.pollInterval * 1000)), pageSize: command.pageSize))
        let syncing = Task { try await replicator.run() }
        let printing = Task {
            var output = StandardOutput()
            var last = ""
            for await status in replicator.status {
                let line = Self.line(status)
                guard line != last else { continue }
                last = line
                output.write("\(Self.clock()) \(line)\n")
                output.flush()
            }
        }
        let interrupts = Self.onInterrupt { syncing.cancel() }
        defer { interrupts.forEach { $0.cancel() } }
        try await syncing.value
        await printing.value
        try? await stream.shutdown()
        var output = StandardOutput()
        let pending = (try? context.pendingOperationCount()) ?? 0
        output.write("\(Self.clock()) stopped; \(pending) operations queued for the next sync\n")
        output.flush()
    }

    /// The state a line reports: the connection, what moves, what waits, the last error; not the
    /// progress counts or times, so a long pull is one line, not one per page.
    static func line(_ status: ReplicatorStatus) -> String {
        var parts: [String] = []
        if status.isPaused {
            parts.append("paused")
        } else if status.connection == .connected, let source = status.changeSource {
            parts.append("connected (\(source == .stream ? "change stream" : "polling"))")
        } else {
            parts.append(status.connection.rawValue)
        }
        if status.isUploading { parts.append("uploading") }
        if let progress = status.downloadProgress, status.isDownloading {
            parts.append("downloading \(progress.table)")
        }
        parts.append("\(status.pendingOperationCount) pending")
        if status.operationErrorCount > 0 { parts.append("\(status.operationErrorCount) refused (see 'inspect')") }
        if let error = status.lastError { parts.append("last error: \(error)") }
        return parts.joined(separator: ", ")
    }

    /// `HH:MM:SS` in UTC.
    static func clock() -> String {
        let time = Timestamp.now().components
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(time.hour)):\(two(time.minute)):\(two(time.second))"
    }

    /// Calls `handler` on SIGINT and SIGTERM (instead of ending the process), until the returned
    /// sources are cancelled.
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}
