/// Entity tags of the table protocol: the item version in double quotes.
package enum ETag {
    /// `"version"`.
    package static func quoted(_ version: String) -> String { "\"" + version + "\"" }

    /// The version inside a strong entity tag; `nil` for weak tags (`W/"…"`, which the Node
    /// server sends for lists) and for anything that is not a quoted string.
    package static func version(fromStrong tag: String) -> String? {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
        return String(decoding: bytes[1..<bytes.count - 1], as: UTF8.self)
    }
}
