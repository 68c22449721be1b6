package import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The requests of `offline-sync bench-serve`: load on a running table server from concurrent clients.
package struct ServerLoad: Sendable {
    let client: HTTPClient
    /// The table's URL on each server process; client `i` of a measurement uses URL `i` modulo
    /// their count. The latency scenario uses the first.
    let tableURLs: [String]
    var tableURL: String { tableURLs[0] }

    package init(client: HTTPClient, tableURLs: [String]) {
        self.client = client
        self.tableURLs = tableURLs
    }

    /// The table URL client `index` talks to.
    func tableURL(for index: Int) -> String { tableURLs[index % tableURLs.count] }

    /// The latencies of small reads, and how many large pages were read beside them.
    package struct Latencies {
        /// Each small read's latency.
        package var milliseconds: [Double]
        /// The large pages read on another connection meanwhile.
        package var largePages: Int

        /// Median, p99 and maximum, in milliseconds.
        package var summary: String {
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

    package func inserts(clients: Int, seconds: Int) async throws -> Double {
        let run = UUID().uuidString.prefix(8)
        return try await rate(clients: clients, seconds: seconds) { client, index in
            let answer = try await request(
                .POST, tableURL(for: client),
                body: #"{"id": "l\#(run)-\#(client)-\#(index)", "text": "load \#(index)", "complete": false}"#)
            guard answer.status == 201 else { throw LoadError(message: "an insert answered \(answer.status)") }
        }
    }

    package func fill(rows: Int) async throws {
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

    package func pages(clients: Int, rows: Int, seconds: Int, tableRows: Int) async throws -> Double {
        try await rate(clients: clients, seconds: seconds) { client, index in
            let skip = (client * 7919 + index * 104_729) % max(1, tableRows - rows)
            let answer = try await request(.GET, tableURL(for: client) + "?$top=\(rows)&$skip=\(skip)&$orderby=text")
            guard answer.status == 200 else { throw LoadError(message: "a page answered \(answer.status)") }
        }
    }

    package func smallReadLatencies(seconds: Int, alongsideLargePages: Bool) async throws -> Latencies {
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

