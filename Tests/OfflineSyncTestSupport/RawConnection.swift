package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to a loopback port, for requests no HTTP client would send (partial,
/// HTTP/1.0, odd headers) and for watching when the server closes.
package final class RawConnection {
    private let socket: Int32

    /// Connects to 127.0.0.1:`port`; a read gives up after `timeoutSeconds` without a byte (long
    /// enough for a server starved of CPU by a full test run beside other work).
    package init(port: Int, timeoutSeconds: Int = 30) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawConnectionError(message: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw RawConnectionError(message: "connect() to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close(socket) }

    /// Sends `text` as it is.
    package func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Sends `bytes` as they are (stops quietly when the server has closed).
    package func send(_ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            written += count
        }
    }

    /// Sends `bytes` over and over without reading, for at most `seconds`, until a send would
    /// block for a whole second (the server stopped reading) or fails (the server closed).
    /// Answers how many bytes were sent and whether the server closed the connection.
    package func flood(_ bytes: [UInt8], seconds: Double) -> (sent: Int, closed: Bool) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = Date().addingTimeInterval(seconds)
        var sent = 0
        var offset = 0
        while Date() < deadline {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
                offset = (offset + count) % bytes.count
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                continue
            } else {
                return (sent, true)
            }
        }
        return (sent, false)
    }

    /// Closes the sending side: the server reads the end of the stream after what was sent.
    package func finishSending() {
        shutdown(socket, Int32(SHUT_WR))
    }

    /// Reads until the server closes the connection or the read timeout passes; answers what was
    /// read and whether the server closed.
    package func readUntilClosed() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count > 0 {
                received += buffer[0..<count]
                continue
            }
            return (String(decoding: received, as: UTF8.self), count == 0 || (count < 0 && errno == ECONNRESET))
        }
    }

    /// Reads until `count` complete answers (by `Content-Length`) have arrived, the server
    /// closes, or the read timeout passes.
    package func readAnswers(_ count: Int) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while RawConnection.completeAnswers(in: String(decoding: received, as: UTF8.self)) < count {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(socket, $0.baseAddress, $0.count) }
            guard read > 0 else { break }
            received += buffer[0..<read]
        }
        return String(decoding: received, as: UTF8.self)
    }

    private static func completeAnswers(in text: String) -> Int {
        var rest = Substring(text)
        var answers = 0
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let head = rest[..<headEnd.lowerBound].lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = headEnd.upperBound
            guard rest[bodyStart...].utf8.count >= length else { break }
            answers += 1
            rest = rest[rest.utf8.index(bodyStart, offsetBy: length)...]
        }
        return answers
    }
}

package struct RawConnectionError: Error, CustomStringConvertible {
    var message: String
    package var description: String { message }
}

/// Runs blocking socket work on a thread of its own, never on Swift concurrency's cooperative
/// pool: the server under test accepts its connections on that pool, so a test blocking it in
/// `read` would starve the server it waits for.
package func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
    }
}
