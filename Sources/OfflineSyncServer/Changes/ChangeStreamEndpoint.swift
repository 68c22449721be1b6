import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import OfflineSync
import OfflineSyncProtocol

/// `GET /changes`: a Server-Sent Events stream telling a client which tables changed, so it
/// pulls them at once instead of polling (an extension of the table protocol that Azure servers
/// and clients ignore; `docs/PROTOCOL.md`, "Change stream").
///
/// The request follows the tables' rules: `ZUMO-API-VERSION: 2.0.x` (header or query option)
/// unless the check is off, the same token, and `?tables=a,b` naming only tables the caller may
/// read (401 without the token a table needs, 405 for a disabled one, as the table endpoints
/// answer); without `tables`, every table it may read. The stream starts with `event: ready`
/// once the subscription is registered (a write committed after it is announced), then sends
/// `event: change` / `data: {"table":…,"updatedAt":…}` after each committed write the caller may
/// read (for a per-user table, only its own rows' writes), and a comment line every
/// ``heartbeat`` so proxies keep an idle stream open. Beyond the subscriber cap: 503 with
/// `Retry-After`.
struct ChangeStreamEndpoint: Sendable {
    /// Why a subscription is refused: the status, the message, extra headers.
    struct Refusal: Error, Sendable {
        var status: Int
        var message: String
        var headers: [(String, String)] = []
    }

    let broadcaster: ChangeBroadcaster
    let heartbeat: Duration
    let access: AccessPolicy
    let checksAPIVersion: Bool

    /// The path of the endpoint.
    static let path = "/changes"

    /// The filter of a request to `target` (path and query, still percent-encoded) from `user`
    /// (the subject of a valid token, `nil` without one), or why it is refused.
    func admit(target: String, header: (String) -> String?, user: String?) -> Result<ChangeFilter, Refusal> {
        var options: [String: String] = [:]
        if let question = target.firstIndex(of: "?") {
            for pair in target[target.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decode(parts[0], plusAsSpace: true),
                    let value = PercentEncoding.decode(parts.count > 1 ? parts[1] : "", plusAsSpace: true)
                else {
                    return .failure(Refusal(status: 400, message: "the query of GET /changes is not valid percent-encoding"))
                }
                options[name.lowercased()] = value
            }
        }
        if checksAPIVersion {
            let version = header(WireHeader.apiVersion) ?? options[WireHeader.apiVersion.lowercased()]
            guard let version, WireHeader.isSupportedAPIVersion(version) else {
                return .failure(
                    Refusal(
                        status: 400,
                        message:
                            "GET /changes needs ZUMO-API-VERSION 2.0.x, like the tables: send 'ZUMO-API-VERSION: 2.0.0'"))
            }
        }
        var tables: Set<String>?
        if let list = options["tables"] {
            let names = list.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            guard !names.isEmpty else {
                return .failure(
                    Refusal(
                        status: 400,
                        message: "the tables option of GET /changes names no table; give a list (tables=todoitem,tag) or leave it out for every table"))
            }
            for name in names {
                guard (try? Identifier.validateUserTable(name)) != nil else {
                    return .failure(Refusal(status: 400, message: "'\(name.prefix(64))' in the tables option of GET /changes is not a table name"))
                }
                let rule = access.access(name)
                switch rule.level {
                case .disabled:
                    return .failure(Refusal(status: 405, message: "table '\(name)' is disabled on this server", headers: [("Allow", "")]))
                case .authenticated where user == nil:
                    return .failure(
                        Refusal(
                            status: 401,
                            message:
                                "table '\(name)' needs a signed-in user: send 'Authorization: Bearer <token>' or 'X-ZUMO-AUTH: <token>'",
                            headers: [("WWW-Authenticate", #"Bearer realm="offline-sync""#)]))
                default:
                    break
                }
            }
            tables = Set(names.map(Identifier.folded))
        }
        if broadcaster.isFull {
            return .failure(
                Refusal(
                    status: 503,
                    message:
                        "this server has \(broadcaster.maximumSubscribers) open change streams, its cap; try again later or poll",
                    headers: [("Retry-After", "5")]))
        }
        let access = self.access
        return .success(
            ChangeFilter(tables: tables, user: user) { table in
                let rule = access.access(table)
                switch rule.level {
                case .disabled: return (false, false)
                case .anonymous: return (true, false)
                case .authenticated: return (user != nil, rule.ownerColumn != nil)
                }
            })
    }

    /// The streamed answer: registers the subscription when the body starts, announces `ready`,
    /// then changes and heartbeats until the client goes away or the server stops.
    func response(for filter: ChangeFilter) -> Response {
        let broadcaster = self.broadcaster
        let heartbeat = self.heartbeat
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        // nginx buffers proxied answers by default, which would hold events back.
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        let body = ResponseBody { writer in
            // Registered here, not before the head: a body that is never written must not leave a
            // subscription behind. The client counts itself subscribed at `ready`.
            guard let (id, subscription) = broadcaster.subscribe(filter) else {
                try await writer.finish(nil)
                return
            }
            defer { broadcaster.unsubscribe(id) }
            try await writer.write(ByteBuffer(string: "event: ready\ndata: {}\n\n"))
            while let changes = await subscription.next(timeout: heartbeat) {
                if changes.isEmpty {
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                } else {
                    try await writer.write(ByteBuffer(string: changes.map(\.event).joined()))
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}
