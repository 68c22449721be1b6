import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import OfflineSync

/// A failed attempt whose connection could not be established: the request was never sent, so
/// repeating it is safe for any method.
struct Unconnected: Error {
    /// The failure to report when the attempt is not repeated.
    var error: RemoteError
}

/// A failed attempt that repeating cannot change (a TLS handshake the server cannot complete):
/// reported without the retries a network failure gets.
struct NotRetried: Error {
    /// The failure to report.
    var error: RemoteError
}

/// The words for transport failures.
enum TransportFailure {
    /// Whether `error` is a failure of TLS itself (BoringSSL's or NIOSSL's, e.g. a plain HTTP
    /// server's answer to a client hello, or a refused certificate), which a retry meets again.
    static func isTLSFailure(_ error: any Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError
    }

    /// Why no connection could be made, or `nil` when `error` is not a failure to connect. A
    /// connection to an address is refused (nothing listens) or the network or host is
    /// unreachable (`IOError` of `connect`); a connection to a host name fails with the
    /// resolver's or every address's error (`NIOConnectionError`). None of them can happen once
    /// the request was sent.
    static func connectFailure(_ error: any Error) -> String? {
        if let failure = error as? NIOConnectionError {
            let reasons =
                failure.connectionErrors.map { connectFailure($0.error) ?? String(describing: $0.error) }
                + [failure.dnsAError, failure.dnsAAAAError].compactMap { $0.map { "name resolution: \($0)" } }
            return reasons.isEmpty ? "no address found for \(failure.host)" : reasons.joined(separator: "; ")
        }
        switch (error as? IOError)?.errnoCode {
        case ECONNREFUSED?: return "the connection was refused (no server listens there)"
        case ENETUNREACH?: return "the network is unreachable"
        case EHOSTUNREACH?: return "the host is unreachable"
        default: return nil
        }
    }

    /// A transport error in words.
    static func describe(_ error: any Error) -> String {
        switch error as? HTTPClientError {
        case .connectTimeout?: return "connecting timed out"
        case .deadlineExceeded?: return "the request timed out"
        case .readTimeout?: return "the server stopped answering (read timed out)"
        case .remoteConnectionClosed?: return "the server closed the connection"
        case .tlsHandshakeTimeout?:
            return "the TLS handshake timed out; check that the server speaks https on this port"
        default: break
        }
        if isTLSFailure(error) {
            // A plain HTTP server answering a TLS client hello is BoringSSL's WRONG_VERSION_NUMBER.
            if "\(error)".contains("WRONG_VERSION_NUMBER") {
                return
                    "the TLS handshake or session failed: the server did not answer TLS (a plain HTTP server answers so); give it an http:// base URL, or the port of an https server"
            }
            return
                "the TLS handshake or session failed (\(tlsReasons(error))); check that the base URL's scheme and port are those of an https server, that its certificate is trusted (tlsConfiguration) and that it names the host"
        }
        if error is HTTPParserError {
            return
                "the answer is not HTTP/1.1 (\(error)); check that the base URL's scheme and port are those of the table service (an https server answers an http:// request with TLS bytes)"
        }
        return String(describing: error)
    }

    /// The reasons a TLS error gives, in words ("OPENSSL_internal:CERTIFICATE_VERIFY_FAILED" is
    /// "certificate verify failed"), without BoringSSL's error numbers and the source paths of the
    /// build that its error stack carries.
    static func tlsReasons(_ error: any Error) -> String {
        let text = "\(error)"
        let marker = "OPENSSL_internal:"
        var reasons: [String] = []
        var rest = text[...]
        while let found = rest.firstRange(of: marker) {
            rest = rest[found.upperBound...]
            let reason = rest.prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
            if !reason.isEmpty { reasons.append(String(reason.map { $0 == "_" ? " " : $0 }).lowercased()) }
        }
        if !reasons.isEmpty { return reasons.joined(separator: "; ") }
        // No BoringSSL stack: NIOSSL's own description, cut before any source path.
        return text.firstRange(of: " at /").map { String(text[..<$0.lowerBound]) } ?? text
    }
}
