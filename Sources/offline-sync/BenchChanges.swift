import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OfflineSync
import OfflineSyncHTTP

/// `offline-sync bench-changes`: what the change stream costs and how fast it is, against a real
/// `offline-sync serve` process on loopback: the delay from an insert on device A to device B's
/// observer yielding it, with 1 and with many subscribed devices, and the server's memory per idle
/// subscriber and the time for one change to reach all of them.
struct BenchChanges: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-changes",
        abstract: "Measure the change stream: insert-to-observer latency and idle subscribers' cost on one serve.",
        discussion: """
            Starts 'offline-sync serve --store memory:' as a child process on loopback. Latency: --devices \
            devices (each its own in-memory store, HTTPRemote, ChangeStream and Replicator, all in this \
            process) pull the todoitem table; device A inserts --samples items one after another and the \
            time until device B's observed query yields each is recorded (the next insert waits until \
            every device holds the item). Idle subscribers: --idle change streams are opened on one HTTP \
            client; the server's resident memory is read from /proc before and after, then one insert is \
            made and the time until every stream was told of it is measured.

            Example:
              offline-sync bench-changes --devices 1,100 --samples 200 --idle 1000
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Device counts to measure the latency with, comma-separated (A and B are two of them).")
    var devices = "1,100"

    @Option(help: "Inserts measured per device count.")
    var samples = 200

    @Option(help: "Idle subscribers to open for the memory and fan-out measurement; 0 skips it.")
    var idle = 1000

    func validate() throws {
        guard !deviceCounts.isEmpty, deviceCounts.allSatisfy({ $0 >= 1 && $0 <= 2000 }) else {
            throw ValidationError("--devices takes counts from 1 to 2000, comma-separated (e.g. 1,100)")
        }
        guard samples >= 1 else { throw ValidationError("--samples must be 1 or more") }
        guard idle >= 0, idle <= 10_000 else { throw ValidationError("--idle must be between 0 and 10000") }
    }

    var deviceCounts: [Int] { devices.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() async throws {
        _ = global.start("bench-changes")
        let largest = max(deviceCounts.max() ?? 1, 1)
        // Every device holds a stream and up to a few request connections, all from 127.0.0.1.
        let connections = 4 * largest + idle + 64
        let server = try ChildServe(arguments: [
            "--store", "memory:", "--max-connections", "\(connections)",
            "--max-connections-per-address", "\(connections)", "--changes-max-subscribers", "\(largest + idle + 16)",
        ])
        defer { server.stop() }
        var output = StandardOutput()
        output.write("serve pid \(server.process.processIdentifier) on \(server.url)\n")
        output.flush()
        for count in deviceCounts {
            let latencies = try await measureLatency(server: server, devices: count, samples: samples)
            output.write(
                "latency insert on A -> B's observer, \(max(count, 2)) subscribed devices (A, B and \(max(count, 2) - 2) more), \(samples) samples: p50 \(Self.milliseconds(Self.percentile(latencies, 0.5))) ms, p99 \(Self.milliseconds(Self.percentile(latencies, 0.99))) ms, max \(Self.milliseconds(latencies.max() ?? .zero)) ms\n"
            )
            output.flush()
        }
        if idle > 0 {
            let (perSubscriber, fanOut) = try await measureIdle(server: server, count: idle)
            output.write(
                "\(idle) idle subscribers: serve RSS +\(String(format: "%.1f", perSubscriber / 1024)) KiB per subscriber; one change reached all of them in \(Self.milliseconds(fanOut)) ms\n"
            )
            output.flush()
        }
    }

    /// A device of the measurement.
    private struct Device {
        let context: SyncContext
        let remote: HTTPRemote
        let stream: ChangeStream
        let replicator: Replicator
        let table: SyncTable
        let run: Task<Void, any Error>

        init(url: String) throws {
            var configuration = HTTPRemote.Configuration(baseURL: url)
            configuration.logger.logLevel = .critical
            remote = try HTTPRemote(configuration: configuration)
            stream = ChangeStream(configuration: configuration)
            context = try SyncContext(
                store: InMemoryStore(), remote: remote,
                tables: [TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])])
            table = try context.table("todoitem")
            replicator = Replicator(
                context: context, pulls: [PullRequest(table: "todoitem", queryId: "all")], signal: stream,
                options: .init(pushDelay: .zero, pollInterval: .seconds(3600)))
            let replicator = self.replicator
            run = Task { try await replicator.run() }
        }

        func ready() async {
            for await status in replicator.status
            where status.connection == .connected && status.changeSource == .stream && status.lastSyncedAt["todoitem"] != nil {
                return
            }
        }

        func close() async {
            run.cancel()
            _ = try? await run.value
            try? context.close()
            try? await stream.shutdown()
            try? await remote.shutdown()
        }
    }

    /// `samples` inserts on device A, each timed until device B's observer yields it.
    private func measureLatency(server: ChildServe, devices count: Int, samples: Int) async throws -> [Duration] {
        var devices: [Device] = []
        defer { for device in devices { Task { await device.close() } } }
        for _ in 0..<max(count, 2) { devices.append(try Device(url: server.url)) }
        for device in devices { await device.ready() }
        let a = devices[0]
        let b = devices[1]
        var observed = try b.table.observe().makeAsyncIterator()
        _ = try await observed.next()
        let clock = ContinuousClock()
        var latencies: [Duration] = []
        let prefix = "s\(count)-\(Timestamp.now().millisecondsSince1970)-"
        for index in 0..<samples {
            let id = prefix + String(index)
            let start = clock.now
            try a.table.insert(Item(id: id, values: ["text": "sample", "complete": false]))
            while let result = try await observed.next() {
                if result.items.contains(where: { $0.id == id }) { break }
            }
            latencies.append(start.duration(to: clock.now))
            // The next insert waits for every device to hold this one, so samples do not overlap.
            for device in devices.dropFirst(2) {
                while try device.table.lookup(id: id) == nil { try await Task.sleep(for: .milliseconds(1)) }
            }
        }
        for device in devices { await device.close() }
        devices = []
        return latencies
    }

    /// Opens `count` change streams on one HTTP client; the server's RSS growth per stream, and
    /// the time one insert takes to reach every stream.
    private func measureIdle(server: ChildServe, count: Int) async throws -> (bytesPerSubscriber: Double, fanOut: Duration) {
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = count + 8
        clientConfiguration.timeout = .init(connect: .seconds(10), read: .seconds(120))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let configuration = HTTPRemote.Configuration(baseURL: server.url)
        let connected = Locked(0)
        let told = Locked(0)
        let (allTold, signal) = AsyncStream<Void>.makeStream()
        let before = try server.residentBytes()
        var listeners: [Task<Void, any Error>] = []
        for _ in 0..<count {
            let stream = ChangeStream(configuration: configuration, client: client)
            listeners.append(
                Task {
                    try await stream.listen(to: ["todoitem"]) { event in
                        switch event {
                        case .connected: connected.withLock { $0 += 1 }
                        case .changed:
                            if told.withLock({ $0 += 1; return $0 }) == count { signal.yield() }
                        }
                    }
                })
        }
        while connected.withLock({ $0 }) < count { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(500))
        let after = try server.residentBytes()
        let writer = try HTTPRemote(configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await writer.insert(Item(id: "fan-out-\(Timestamp.now().millisecondsSince1970)", values: ["text": "x"]), into: "todoitem")
        var iterator = allTold.makeAsyncIterator()
        _ = await iterator.next()
        let fanOut = start.duration(to: clock.now)
        listeners.forEach { $0.cancel() }
        for listener in listeners { _ = try? await listener.value }
        try await writer.shutdown()
        try await client.shutdown()
        return (Double(after - before) / Double(count), fanOut)
    }

    static func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .zero }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
        return sorted[max(0, index)]
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}

/// `offline-sync serve` started by this process on a free loopback port.
final class ChildServe: Sendable {
    let process: Process
    let url: String

    init(arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["serve", "--port", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = ""
        while !line.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        guard let range = line.range(of: "http://127.0.0.1:"),
            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            process.waitUntilExit()
            throw ValidationError("offline-sync serve did not start: '\(line)'")
        }
        self.process = process
        self.url = "http://127.0.0.1:\(port)"
    }

    /// The server's resident set size (`VmRSS` of /proc/PID/status), in bytes.
    func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw ValidationError("cannot read the resident memory of serve (pid \(process.processIdentifier))") }
        return kilobytes * 1024
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
