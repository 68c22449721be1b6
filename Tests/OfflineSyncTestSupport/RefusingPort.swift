#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback port that refuses every connection and that no other test can take meanwhile: a
/// TCP socket bound to 127.0.0.1 that never listens (a connection to it is reset at once). A
/// port freed by a stopped server could be taken by another test's server running in parallel,
/// and the "refused" request would then be answered.
package final class RefusingPort: Sendable {
    /// The port number.
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RefusingPortError(step: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw RefusingPortError(step: "bind", code: code)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// The socket call that failed while reserving a ``RefusingPort``.
package struct RefusingPortError: Error {
    let step: String
    let code: Int32
}
