import Foundation

/// One committed write, as the change stream announces it: the table, the written record's
/// `updatedAt`, and for a per-user table the user who owns the row (so only that user's
/// subscribers are told).
public struct TableChange: Sendable, Hashable, Codable {
    /// The table written (as the store names it).
    public var table: String
    /// The record's `updatedAt` after the write, in the protocol's ISO 8601 form.
    public var updatedAt: String
    /// The owning user's id for a per-user table; `nil` for a shared table.
    public var owner: String?

    /// Creates a change.
    public init(table: String, updatedAt: String, owner: String? = nil) {
        self.table = table
        self.updatedAt = updatedAt
        self.owner = owner
    }

    /// The `data` of the Server-Sent Event: `{"table":"…","updatedAt":"…"}` (never the owner).
    var eventData: String {
        #"{"table":"# + Self.quoted(table) + #","updatedAt":"# + Self.quoted(updatedAt) + "}"
    }

    /// The whole `event: change` block, ending with the blank line that dispatches it.
    var event: String {
        "event: change\ndata: \(eventData)\n\n"
    }

    /// A JSON string literal of `text`.
    static func quoted(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                quoted += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// The change as the relay between processes carries it (JSON, owner included).
    public var relayPayload: String {
        (try? String(decoding: JSONEncoder().encode(self), as: UTF8.self)) ?? eventData
    }

    /// The change a relay payload carries; `nil` for a payload that is not one.
    public init?(relayPayload: String) {
        guard let change = try? JSONDecoder().decode(TableChange.self, from: Data(relayPayload.utf8)) else {
            return nil
        }
        self = change
    }
}
