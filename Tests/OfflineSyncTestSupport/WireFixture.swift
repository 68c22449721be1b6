package import Foundation
package import OfflineSync

/// One recorded exchange of `Fixtures/*.jsonl`: real traffic between the Azure Mobile Apps
/// JavaScript client 2.0.1 and the Node server 3.0.0.
package struct WireExchange: @unchecked Sendable {
    // @unchecked: the dictionaries come from JSONSerialization and are only read after loading.
    package var method: String
    package var target: String
    package var requestHeaders: [String: String]
    package var requestBody: Any?
    package var status: Int
    package var responseHeaders: [String: String]
    package var responseBody: Any?

    /// The recorded response body as JSON bytes.
    package var responseBytes: [UInt8] {
        guard let responseBody, !(responseBody is NSNull),
            let data = try? JSONSerialization.data(withJSONObject: responseBody, options: [.fragmentsAllowed])
        else { return [] }
        return Array(data)
    }

    /// The recorded response body read as items, independently of the code under test: system
    /// dates become dates, every other value keeps its JSON type.
    package var responseItems: [Item] {
        if let array = responseBody as? [Any] { return array.compactMap(Self.item) }
        if let object = responseBody as? [String: Any], let results = object["results"] as? [Any] {
            return results.compactMap(Self.item)
        }
        return responseBody.flatMap(Self.item).map { [$0] } ?? []
    }

    private static func item(_ raw: Any) -> Item? {
        guard let object = raw as? [String: Any], let id = object["id"] as? String else { return nil }
        var item = Item(id: id)
        for (key, value) in object where key != "id" {
            switch value {
            case let text as String where key == "createdAt" || key == "updatedAt":
                item.values[key] = Timestamp(iso8601: text).map(Value.date) ?? .string(text)
            case let text as String: item.values[key] = .string(text)
            case let number as NSNumber where String(cString: number.objCType) == "c":
                item.values[key] = .bool(number.boolValue)
            case let number as NSNumber: item.values[key] = .int(number.int64Value)
            default: break
            }
        }
        return item
    }

    /// Loads a fixture file by name from `Tests/OfflineSyncHTTPTests/Fixtures/`.
    package static func load(_ name: String) throws -> [WireExchange] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("OfflineSyncHTTPTests/Fixtures").appendingPathComponent(name)
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let request = object["request"] as? [String: Any] ?? [:]
            let response = object["response"] as? [String: Any] ?? [:]
            return WireExchange(
                method: request["method"] as? String ?? "", target: request["target"] as? String ?? "",
                requestHeaders: request["headers"] as? [String: String] ?? [:],
                requestBody: request["body"], status: response["status"] as? Int ?? 0,
                responseHeaders: response["headers"] as? [String: String] ?? [:],
                responseBody: response["body"])
        }
    }

    package static let onlineFile = "js-client-2.0.1--node-server-3.0.0--online.jsonl"
    package static let offlineFile = "js-client-2.0.1--node-server-3.0.0--offline-sync.jsonl"
}

/// `true` when two JSON documents are equal as values (key order ignored, booleans distinct
/// from numbers).
package func jsonEqual(_ lhs: Any?, _ rhs: Any?) -> Bool {
    let left = lhs ?? NSNull()
    let right = rhs ?? NSNull()
    switch (left, right) {
    case (is NSNull, is NSNull): return true
    case (let a as [String: Any], let b as [String: Any]):
        return a.count == b.count && a.allSatisfy { key, value in b[key].map { jsonEqual(value, $0) } ?? false }
    case (let a as [Any], let b as [Any]):
        return a.count == b.count && zip(a, b).allSatisfy { jsonEqual($0, $1) }
    case (let a as String, let b as String): return a == b
    case (let a as NSNumber, let b as NSNumber):
        let aBool = String(cString: a.objCType) == "c"
        let bBool = String(cString: b.objCType) == "c"
        return aBool == bBool && (aBool ? a.boolValue == b.boolValue : a.doubleValue == b.doubleValue)
    default: return false
    }
}

/// Parses a JSON body, `nil` for an empty one.
package func parseJSON(_ bytes: [UInt8]) -> Any? {
    bytes.isEmpty ? nil : try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}
