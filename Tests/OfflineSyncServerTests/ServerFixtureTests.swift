import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Testing

/// The reference server answers the recorded requests of the JavaScript client as the Azure Node
/// server did: same status, same body shape, the same items (user columns, `deleted`), a strong
/// `ETag` equal to the item's version where Node sent one.
///
/// Server-assigned values differ by nature (generated ids, versions, timestamps); the replay maps
/// each recorded one to the value this server assigned and rewrites later requests with it, the
/// way a client would have sent them.
@Suite("TableServer against recorded Azure Mobile Apps traffic")
struct ServerFixtureTests {
    /// Recorded server-assigned values and the ones this server assigned instead.
    struct Renames {
        var ids: [String: String] = [:]
        var versions: [String: String] = [:]
        var stamps: [String: String] = [:]

        func target(_ text: String) -> String {
            var result = text
            for (recorded, ours) in ids { result = result.replacingOccurrences(of: recorded, with: ours) }
            for (recorded, ours) in stamps { result = result.replacingOccurrences(of: recorded, with: ours) }
            return result
        }

        /// Versions are only unique per item, so they are keyed by id.
        func version(_ recorded: String, id: String) -> String {
            versions["\(id)|\(recorded)"] ?? recorded
        }
    }

    @Test("online session: statuses, ETags and bodies as the Node server answered")
    func onlineSession() async throws {
        try await replay(WireExchange.onlineFile)
    }

    @Test("offline-sync session: incremental pulls, pushes, 412 and soft deletes as the Node server answered")
    func offlineSyncSession() async throws {
        try await replay(WireExchange.offlineFile)
    }

    private func replay(_ file: String) async throws {
        let exchanges = try WireExchange.load(file)
        try await withTableServer { port in
            var renames = Renames()
            for (index, exchange) in exchanges.enumerated() {
                let recordedId = exchange.target.split(separator: "?")[0].split(separator: "/").dropFirst(2).first.map(
                    String.init)
                var headers: [(String, String)] = []
                for (name, value) in exchange.requestHeaders {
                    if name == "If-Match", let id = recordedId {
                        let version = String(value.dropFirst().dropLast())
                        headers.append((name, "\"\(renames.version(version, id: id))\""))
                    } else {
                        headers.append((name, value))
                    }
                }
                var body: [UInt8]?
                if let object = exchange.requestBody as? [String: Any] {
                    var rewritten = object
                    if let id = object["id"] as? String { rewritten["id"] = renames.ids[id] ?? id }
                    body = Array(try JSONSerialization.data(withJSONObject: rewritten))
                }
                let answer = try await send(
                    exchange.method, renames.target(exchange.target), port: port, headers: headers, body: body)
                #expect(
                    answer.status == exchange.status,
                    "exchange \(index): status of \(exchange.method) \(exchange.target)")
                check(answer, against: exchange, index, &renames)
            }
        }
    }

    private func check(_ answer: RawAnswer, against exchange: WireExchange, _ index: Int, _ renames: inout Renames) {
        let recorded = exchange.responseBody
        let ours = answer.json
        switch recorded {
        case let items as [Any]:
            guard let list = ours as? [Any] else {
                Issue.record("exchange \(index): expected a JSON array, got \(String(describing: ours))")
                return
            }
            compare(items, list, ordered: exchange.target.contains("$orderby"), index, &renames)
        case let object as [String: Any] where object["results"] != nil:
            guard let page = ours as? [String: Any], let list = page["results"] as? [Any] else {
                Issue.record("exchange \(index): expected {results, count}, got \(String(describing: ours))")
                return
            }
            #expect((page["count"] as? Int) == (object["count"] as? Int), "exchange \(index): count")
            compare(object["results"] as? [Any] ?? [], list, ordered: true, index, &renames)
        case let object as [String: Any] where object["error"] != nil:
            #expect((ours as? [String: Any])?["error"] is String, "exchange \(index): an {\"error\": …} body")
        case let object as [String: Any]:
            guard let item = ours as? [String: Any] else {
                Issue.record("exchange \(index): expected an item, got \(String(describing: ours))")
                return
            }
            if let recordedId = object["id"] as? String, let id = item["id"] as? String, recordedId != id,
                renames.ids[recordedId] == nil
            {
                renames.ids[recordedId] = id
            }
            compare([object], [item], ordered: true, index, &renames)
            if let tag = exchange.responseHeaders["ETag"], !tag.hasPrefix("W/") {
                #expect(
                    answer.header("ETag") == "\"\(item["version"] as? String ?? "")\"",
                    "exchange \(index): ETag is the quoted version")
            }
        default:
            Issue.record("exchange \(index): unexpected recorded body")
        }
    }

    /// Pairs recorded and served items by (renamed) id and compares what the client sees.
    private func compare(_ recorded: [Any], _ served: [Any], ordered: Bool, _ index: Int, _ renames: inout Renames) {
        let expected = recorded.compactMap { $0 as? [String: Any] }
        let actual = served.compactMap { $0 as? [String: Any] }
        let expectedIds = expected.map { renames.ids[$0["id"] as? String ?? ""] ?? ($0["id"] as? String ?? "") }
        let actualIds = actual.map { $0["id"] as? String ?? "" }
        if ordered {
            #expect(actualIds == expectedIds, "exchange \(index): items in order")
        } else {
            #expect(
                Set(actualIds) == Set(expectedIds) && actualIds.count == expectedIds.count, "exchange \(index): items")
        }
        for (position, item) in expected.enumerated() {
            guard let mine = actual.first(where: { ($0["id"] as? String) == expectedIds[position] }) else { continue }
            for key in ["text", "complete", "deleted"] {
                #expect(jsonEqual(item[key], mine[key]), "exchange \(index): '\(key)' of \(expectedIds[position])")
            }
            for key in ["createdAt", "updatedAt", "version"] {
                #expect(mine[key] is String, "exchange \(index): '\(key)' of \(expectedIds[position]) is present")
            }
            if let version = item["version"] as? String, let ours = mine["version"] as? String {
                renames.versions["\(item["id"] as? String ?? "")|\(version)"] = ours
            }
            for key in ["updatedAt", "createdAt"] {
                if let stamp = item[key] as? String, let ours = mine[key] as? String { renames.stamps[stamp] = ours }
            }
        }
    }
}
