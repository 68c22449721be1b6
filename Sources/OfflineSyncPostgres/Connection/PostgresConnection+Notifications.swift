import CLibPQ
import OfflineSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One notification of PostgreSQL's `LISTEN`/`NOTIFY`.
package struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on.
    package var channel: String
    /// The payload (up to 8000 bytes).
    package var payload: String
    /// The process id of the server backend that sent it (``PostgresConnection/backendProcessId``
    /// of the sending connection).
    package var senderProcessId: Int32
}

extension PostgresConnection {
    /// The process id of this connection's server backend, as notifications name their sender.
    var backendProcessId: Int32 {
        handle.map { PQbackendPID($0) } ?? 0
    }

    /// `"name"` with inner quotes doubled: a channel name as an SQL identifier.
    static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacingQuotes + "\""
    }

    /// Starts listening on `channel` (outside a transaction, so it takes effect at once).
    func listen(_ channel: String) throws {
        try execute("LISTEN \(Self.quotedIdentifier(channel))")
    }

    /// Sends a notification (`pg_notify`, committed at once outside a transaction).
    func notify(_ channel: String, payload: String) throws {
        try run("SELECT pg_notify($1, $2)", [PostgresParameter(.string(channel), as: .text), PostgresParameter(.string(payload), as: .text)])
    }

    /// Waits up to `timeout` milliseconds for the socket to be readable, then returns every
    /// notification received. Throws when the connection broke.
    func waitForNotifications(timeoutMilliseconds timeout: Int32) throws -> [PostgresNotification] {
        guard let handle else {
            throw OfflineSyncError(.notOpen, "the connection to \(location) is closed")
        }
        var received = try takeNotifications(handle)
        guard received.isEmpty else { return received }
        let socket = PQsocket(handle)
        guard socket >= 0 else {
            throw PostgresError(message: "the connection has no socket", context: "listening on \(location)")
        }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeout)
        if ready < 0, errno != EINTR {
            throw PostgresError(message: "poll failed (errno \(errno))", context: "listening on \(location)")
        }
        if ready > 0 {
            guard PQconsumeInput(handle) == 1 else {
                throw PostgresError(
                    message: String(cString: PQerrorMessage(handle)), context: "reading notifications from \(location)")
            }
            received = try takeNotifications(handle)
        }
        return received
    }

    private func takeNotifications(_ handle: OpaquePointer) throws -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            defer { PQfreemem(notification) }
            received.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname),
                    payload: notification.pointee.extra.map { String(cString: $0) } ?? "",
                    senderProcessId: notification.pointee.be_pid))
        }
        return received
    }
}

extension String {
    fileprivate var replacingQuotes: String {
        var text = ""
        for character in self {
            if character == "\"" { text.append("\"") }
            text.append(character)
        }
        return text
    }
}
