import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OfflineSyncBenchmarking
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
              offline-sync bench-serve \\
                --url http://127.0.0.1:8081,http://127.0.0.1:8082 --clients 2,8
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

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
