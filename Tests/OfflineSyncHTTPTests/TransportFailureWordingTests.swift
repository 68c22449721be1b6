import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Testing

/// Transport failures that a wrong base URL causes say what is wrong in words, instead of
/// repeating a TLS library's error code.
@Suite("HTTPRemote transport failures in words")
struct TransportFailureWordingTests {
    @Test("an https base URL pointing at a plain HTTP server fails naming TLS and what to check")
    func httpsToAPlainServer() async throws {
        let log = RequestLog()
        try await withLoopbackServer({ request in
            log.append(request)
            return ScriptedResponse.emptyPage
        }) { port in
            var configuration = HTTPRemote.Configuration(baseURL: "https://127.0.0.1:\(port)")
            configuration.readRetries = 0
            let remote = try HTTPRemote(configuration: configuration)
            do {
                _ = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
                Issue.record("a plain HTTP server cannot answer an https request")
            } catch let error as RemoteError {
                #expect(error.kind == .network, "\(error)")
                #expect(error.message.contains("the TLS handshake or session failed"), "\(error)")
                #expect(error.message.contains("https server"), "\(error)")
            }
            try await remote.shutdown()
        }
        #expect(log.all.isEmpty)
    }
}
