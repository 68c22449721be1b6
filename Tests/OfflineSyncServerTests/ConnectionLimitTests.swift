import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncServer
import Testing

/// The limits that keep one client, or the process's open-file limit, from leaving new clients
/// unanswered.
@Suite("Connection limits")
struct ConnectionLimitTests {
    static func request() -> String {
        "GET /tables/todoitem HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\n\r\n"
    }

    static func statuses(_ answers: String) -> [String] {
        answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
    }

    @Test("beyond the per-address limit a connection from that address is answered 503, and served once below")
    func perAddressLimit() async throws {
        try await withTableServer(configure: { $0.maximumConnectionsPerAddress = 2 }) { port in
            let (heldAnswers, text, closed, served) = try await onOwnThread {
                var held = [try RawConnection(port: port), try RawConnection(port: port)]
                var heldAnswers: [String] = []
                for connection in held {
                    connection.send(Self.request())
                    heldAnswers += Self.statuses(connection.readAnswers(1))
                }
                let refused = try RawConnection(port: port)
                refused.send(Self.request())
                let (text, closed) = refused.readUntilClosed()
                held.removeAll()
                var served = false
                for _ in 0..<50 where !served {
                    let again = try RawConnection(port: port)
                    again.send(Self.request())
                    served = Self.statuses(again.readAnswers(1)) == ["200"]
                    if !served { usleep(100_000) }
                }
                return (heldAnswers, text, closed, served)
            }
            #expect(heldAnswers == ["200", "200"])
            #expect(Self.statuses(text) == ["503"], "\(text)")
            #expect(text.lowercased().contains("retry-after: 1"))
            #expect(text.contains("your address has 2 connections open"), "\(text)")
            #expect(closed)
            #expect(served, "once connections close, new ones are served")
        }
    }

    @Test(
        "serve under a low open-file limit lowers its connection cap with a warning and answers 503 beyond it",
        .enabled(if: FileManager.default.isExecutableFile(atPath: ServeCommand.executable.path)))
    func lowOpenFileLimit() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "ulimit -n 100 && exec \"$0\" serve --store memory: --port 0", ServeCommand.executable.path,
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let range = try #require(line.range(of: "127.0.0.1:"), "no port reported: \(line)")
        let port = try #require(Int(line[range.upperBound...].prefix { $0.isNumber }))
        // 100 descriptors, 64 kept for the store, the listener and the rest: 36 connections.
        let (answers, refused, closed) = try await onOwnThread {
            var held: [RawConnection] = []
            var answers: [String] = []
            for _ in 0..<36 {
                let connection = try RawConnection(port: port)
                connection.send(Self.request())
                answers += Self.statuses(connection.readAnswers(1))
                held.append(connection)
            }
            let beyond = try RawConnection(port: port)
            beyond.send(Self.request())
            let (text, closed) = beyond.readUntilClosed()
            withExtendedLifetime(held) {}
            return (answers, text, closed)
        }
        #expect(answers == Array(repeating: "200", count: 36))
        #expect(Self.statuses(refused) == ["503"], "\(refused)")
        #expect(refused.contains("36 connections open, its limit"), "\(refused)")
        #expect(closed)
        process.terminate()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr.contains("serving at most 36 connections instead of 512"), "\(stderr)")
    }
}
