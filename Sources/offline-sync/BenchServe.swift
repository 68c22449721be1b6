import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OfflineSyncHTTP

/// `offline-sync bench-serve`: load on a running table server (ours or any server of the
/// protocol) from concurrent clients: pages/s, inserts/s, and the latency of a small read while a
/// large page is being read on another connection.
struct BenchServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-serve",
        abstract: "Measure a table server under concurrent clients: pages/s, inserts/s, small-read latency under load.",
        discussion: """
            Start a server first, e.g. 'offline-sync serve --store sqlite:/tmp/load.sqlite --page-size 1000 --port 8080', \
            then run this against it. Each client is one keep-alive connection sending one request at a time. \
            'inserts' POSTs new items to the table for --seconds; 'pages' reads pages of --page-rows rows at random \
            offsets; 'latency' times 50-row reads alone and then while another connection reads 1,000-row pages \
            without pause (the server's --page-size must be 1,000 or more). The table is filled with --rows rows \
            first when it has fewer. --url takes a comma-separated list to load a server that runs as several \
            processes over one store (serve --store postgres://…): client i talks to URL i modulo their count.

            Examples:
              offline-sync bench-serve --url http://127.0.0.1:8080 --clients 1,8,64
              offline-sync bench-serve --url http://127.0.0.1:8080 --scenarios latency
              offline-sync bench-serve --url http://127.0.0.1:8081,http://127.0.0.1:8082 --clients 2,8
            """)

    @Option(help: "The server's base URL, or several separated by commas (one server process each).")
    var url = "http://127.0.0.1:8080"

    @Option(help: "The table to use (created by the first insert on a dynamic-schema server).")
    var table = "todoitem"

    @Option(help: "Comma-separated client counts.")
    var clients = "1,8,64"

    @Option(help: "Seconds each measurement runs.")
    var seconds = 5

    @Option(help: "Rows the table holds before pages are read.")
    var rows = 5_000

    @Option(help: "Rows per page in the 'pages' scenario.")
    var pageRows = 50

    @Option(help: "Comma-separated scenarios: inserts, pages, latency.")
    var scenarios = "inserts,pages,latency"

    func validate() throws {
        guard seconds >= 1 else { throw ValidationError("--seconds must be 1 or more") }
        guard rows >= 1_000 else { throw ValidationError("--rows must be at least 1000 (the large page)") }
        guard !baseURLs.isEmpty else { throw ValidationError("--url must name at least one URL") }
        for base in baseURLs { try RemoteURLOption.validate(base, option: "--url") }
        guard clientCounts.allSatisfy({ $0 >= 1 && $0 <= 1024 }), !clientCounts.isEmpty else {
            throw ValidationError("--clients must list counts between 1 and 1024, e.g. 1,8,64")
        }
    }

    /// The servers' base URLs, without a trailing `/`.
    var baseURLs: [String] {
        url.split(separator: ",").map { part in
            var base = part.trimmingCharacters(in: .whitespaces)
            while base.hasSuffix("/") { base.removeLast() }
            return base
        }.filter { !$0.isEmpty }
    }

    var clientCounts: [Int] {
        clients.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1100
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(client)
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func measure(_ client: HTTPClient) async throws {
        let load = ServerLoad(client: client, tableURLs: baseURLs.map { "\($0)/tables/\(table)" })
        let chosen = Set(scenarios.split(separator: ",").map(String.init))
        var output = StandardOutput()
        output.write("server \(baseURLs.joined(separator: ", ")), table \(table), \(seconds) s per measurement\n")
        output.flush()
        if chosen.contains("inserts") {
            for count in clientCounts {
                let rate = try await load.inserts(clients: count, seconds: seconds)
                output.write("inserts/s  \(String(count).leftPadded(3)) clients  \(Int(rate))\n")
                output.flush()
            }
        }
        try await load.fill(rows: rows)
        if chosen.contains("pages") {
            for count in clientCounts {
                let rate = try await load.pages(clients: count, rows: pageRows, seconds: seconds, tableRows: rows)
                output.write(
                    "pages/s    \(String(count).leftPadded(3)) clients  \(Int(rate))  (\(pageRows) rows a page)\n")
                output.flush()
            }
        }
        if chosen.contains("latency") {
            let alone = try await load.smallReadLatencies(seconds: seconds, alongsideLargePages: false)
            let loaded = try await load.smallReadLatencies(seconds: seconds, alongsideLargePages: true)
            output.write("50-row read, alone:                      \(alone.summary)\n")
            output.write(
                "50-row read, 1,000-row pages alongside:  \(loaded.summary)  (\(loaded.largePages) large pages read)\n")
            output.flush()
        }
    }
}

/// The requests of ``BenchServe``.
struct ServerLoad: Sendable {
    let client: HTTPClient
    /// The table's URL on each server process; client `i` of a measurement uses URL `i` modulo
    /// their count. The latency scenario uses the first.
    let tableURLs: [String]
    var tableURL: String { tableURLs[0] }

    init(client: HTTPClient, tableURLs: [String]) {
        self.client = client
        self.tableURLs = tableURLs
    }

    /// The table URL client `index` talks to.
    func tableURL(for index: Int) -> String { tableURLs[index % tableURLs.count] }

    struct Latencies {
        var milliseconds: [Double]
        var largePages: Int

        var summary: String {
            let sorted = milliseconds.sorted()
            guard !sorted.isEmpty else { return "no reads" }
            func quantile(_ q: Double) -> String {
                String(format: "%.2f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))])
            }
            return
                "median \(quantile(0.5)) ms, p99 \(quantile(0.99)) ms, max \(quantile(1.0)) ms over \(sorted.count) reads"
        }
    }

    func request(_ method: HTTPMethod, _ url: String, body: String? = nil) async throws -> (status: UInt, bytes: Int) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "ZUMO-API-VERSION", value: "2.0.0")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let collected = try await response.body.collect(upTo: 64 << 20)
        return (response.status.code, collected.readableBytes)
    }

    /// Runs `clients` loops of `body` for `seconds`; answers the completed requests per second.
    func rate(clients: Int, seconds: Int, _ body: @escaping @Sendable (Int, Int) async throws -> Void) async throws
        -> Double
    {
        let deadline = ContinuousClock.now + .seconds(seconds)
        let start = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for clientIndex in 0..<clients {
                group.addTask {
                    var done = 0
                    while ContinuousClock.now < deadline {
                        try await body(clientIndex, done)
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    func inserts(clients: Int, seconds: Int) async throws -> Double {
        let run = UUID().uuidString.prefix(8)
        return try await rate(clients: clients, seconds: seconds) { client, index in
            let answer = try await request(
                .POST, tableURL(for: client),
                body: #"{"id": "l\#(run)-\#(client)-\#(index)", "text": "load \#(index)", "complete": false}"#)
            guard answer.status == 201 else { throw LoadError(message: "an insert answered \(answer.status)") }
        }
    }

    func fill(rows: Int) async throws {
        let count = try await request(.GET, tableURL + "?$top=0&$inlinecount=allpages")
        guard count.status == 200 else { throw LoadError(message: "the table answered \(count.status) to a count") }
        let page = try await request(.GET, tableURL + "?$top=1&$skip=\(rows - 1)")
        guard page.bytes <= 2 else { return }
        let run = UUID().uuidString.prefix(8)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<16 {
                group.addTask {
                    for index in stride(from: client, to: rows, by: 16) {
                        _ = try await request(
                            .POST, tableURL(for: client),
                            body: #"{"id": "f\#(run)-\#(index)", "text": "fill \#(index)", "complete": false}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    func pages(clients: Int, rows: Int, seconds: Int, tableRows: Int) async throws -> Double {
        try await rate(clients: clients, seconds: seconds) { client, index in
            let skip = (client * 7919 + index * 104_729) % max(1, tableRows - rows)
            let answer = try await request(.GET, tableURL(for: client) + "?$top=\(rows)&$skip=\(skip)&$orderby=text")
            guard answer.status == 200 else { throw LoadError(message: "a page answered \(answer.status)") }
        }
    }

    func smallReadLatencies(seconds: Int, alongsideLargePages: Bool) async throws -> Latencies {
        let deadline = ContinuousClock.now + .seconds(seconds)
        return try await withThrowingTaskGroup(of: Latencies.self) { group in
            if alongsideLargePages {
                group.addTask {
                    var pages = 0
                    while ContinuousClock.now < deadline {
                        let answer = try await request(.GET, tableURL + "?$top=1000&$orderby=text")
                        guard answer.status == 200 else {
                            throw LoadError(message: "a large page answered \(answer.status)")
                        }
                        pages += 1
                    }
                    return Latencies(milliseconds: [], largePages: pages)
                }
            }
            group.addTask {
                var times: [Double] = []
                while ContinuousClock.now < deadline {
                    let start = ContinuousClock.now
                    let answer = try await request(.GET, tableURL + "?$top=50&$orderby=text&$skip=100")
                    guard answer.status == 200 else {
                        throw LoadError(message: "a small read answered \(answer.status)")
                    }
                    let elapsed = (ContinuousClock.now - start).components
                    times.append(Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15)
                    try await Task.sleep(for: .milliseconds(5))
                }
                return Latencies(milliseconds: times, largePages: 0)
            }
            var result = Latencies(milliseconds: [], largePages: 0)
            for try await part in group {
                result.milliseconds += part.milliseconds
                result.largePages += part.largePages
            }
            return result
        }
    }
}

struct LoadError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
