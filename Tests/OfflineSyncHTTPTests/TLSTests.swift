import Foundation
import Hummingbird
import HummingbirdTLS
import NIOSSL
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import OfflineSyncServer
import Testing

/// `https` remotes: the HTTP client speaks TLS, trust what
/// `HTTPRemote.Configuration.tlsConfiguration` says, and refuse a certificate they do not trust.
@Suite("HTTPRemote over TLS")
struct TLSTests {
    /// A self-signed certificate for `localhost` and `127.0.0.1`, made with the `openssl` tool.
    struct Credentials {
        let certificate: NIOSSLCertificate
        let key: NIOSSLPrivateKey

        init(in directory: TemporaryDirectory) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-keyout", directory.path("key.pem"), "-out", directory.path("certificate.pem"),
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw OfflineSyncError(
                    .configuration,
                    "openssl could not make a test certificate (status \(process.terminationStatus)); install the openssl package"
                )
            }
            guard let certificate = try NIOSSLCertificate.fromPEMFile(directory.path("certificate.pem")).first else {
                throw OfflineSyncError(
                    .configuration, "openssl wrote no certificate to \(directory.path("certificate.pem"))")
            }
            self.certificate = certificate
            key = try NIOSSLPrivateKey(file: directory.path("key.pem"), format: .pem)
        }
    }

    /// Runs a TLS server answering writes as a table server does and reads with `[]`, calls
    /// `body` with its port, and returns the requests it received.
    func withTLSServer(_ credentials: Credentials, _ body: @Sendable (Int) async throws -> Void) async throws
        -> [ReceivedRequest]
    {
        let log = RequestLog()
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(credentials.certificate)],
            privateKey: .privateKey(credentials.key))
        try await withLoopbackServer(
            { request in
                log.append(request)
                return request.method == "GET"
                    ? ScriptedResponse.emptyPage
                    : BatchedPushTests.answer(request)
            }, server: try .tls(tlsConfiguration: tls), body)
        return log.all
    }

    @Test("a TLS handshake that never finishes is closed after the request read timeout")
    func stalledHandshakeIsClosed() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try Credentials(in: directory)
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(credentials.certificate)], privateKey: .privateKey(credentials.key))
        try await withTableServer(configure: {
            $0.tls = tls
            $0.requestReadTimeout = .seconds(1)
        }) { port in
            let (text, closed) = try await onOwnThread {
                let connection = try RawConnection(port: port, timeoutSeconds: 30)
                // The first bytes of a ClientHello, and nothing more.
                connection.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])
                return connection.readUntilClosed()
            }
            // Before, the 408 waited behind the handshake and the connection stayed open for good.
            #expect(closed, "closed, not left open until the read timeout of the test's socket")
            #expect(text.isEmpty)
        }
    }

    @Test("a push and a read over https, trusting the server's certificate")
    func trusted() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try Credentials(in: directory)
        let requests = try await withTLSServer(credentials) { port in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([credentials.certificate])
            var configuration = HTTPRemote.Configuration(baseURL: "https://localhost:\(port)")
            configuration.tlsConfiguration = tls
            configuration.batchWrites = .never
            let remote = try HTTPRemote(configuration: configuration)
            let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Device.todoSchema])
            _ = try context.table("todoitem").insert((0..<30).map { Device.todo("s\($0)", "secure \($0)") })
            let result = try await context.push()
            #expect(result.completedCount == 30 && result.errors.isEmpty)
            let page = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
            #expect(page.items.isEmpty)
            try context.close()
            try await remote.shutdown()
        }
        #expect(requests.filter { $0.method == "POST" }.map(BatchedPushTests.itemId) == (0..<30).map { "s\($0)" })
        #expect(requests.last?.method == "GET")
    }

    @Test("a certificate the remote does not trust fails the push as a network failure naming TLS, the queue intact")
    func untrusted() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try Credentials(in: directory)
        let requests = try await withTLSServer(credentials) { port in
            var configuration = HTTPRemote.Configuration(baseURL: "https://127.0.0.1:\(port)")
            configuration.readRetries = 0
            let remote = try HTTPRemote(configuration: configuration)
            let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [Device.todoSchema])
            _ = try context.table("todoitem").insert((0..<5).map { Device.todo("u\($0)", "text") })
            let failure = await #expect(throws: PushFailure.self) { try await context.push() }
            #expect(failure?.status == .abortedByNetwork)
            #expect(failure?.message.contains("TLS") == true, "\(String(describing: failure))")
            #expect(try context.pendingOperationCount() == 5)
            await #expect(throws: RemoteError.self) {
                _ = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
            }
            try context.close()
            try await remote.shutdown()
        }
        #expect(requests.isEmpty, "nothing reached the server")
    }
}
