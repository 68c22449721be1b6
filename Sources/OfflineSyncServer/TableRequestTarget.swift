import OfflineSync
import OfflineSyncProtocol

/// The request target of a table-protocol request, split into table, id and query options.
///
/// Accepts what the existing clients send: percent-encoded ids and values (`+` reads as a space
/// in query values), option names in any letter case (`__includeDeleted`, `__INCLUDEDELETED`),
/// unknown options (ignored), and `/tables/{table}/` with a trailing slash.
struct TableRequestTarget: Sendable {
    /// The table named in the path.
    var table: String
    /// The item id, for `/tables/{table}/{id}`.
    var id: String?
    /// The decoded query options by lower-cased name (of another option than a `$` one, which
    /// may be given once, the last occurrence wins).
    var options: [String: String]

    /// Splits `target`; `nil` when the path is not under `/tables/` (the server answers 404).
    /// Throws ``OfflineSyncError`` `.syntax` for a malformed percent escape, escaped bytes that are
    /// not UTF-8, or a `$` option given more than once.
    init?(_ target: String) throws {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let segments = parts[0].split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count == 2 || segments.count == 3, segments[0].lowercased() == "tables" else { return nil }
        guard let table = PercentEncoding.decode(segments[1]) else {
            throw OfflineSyncError(.syntax, "the table name in '\(parts[0])' \(Self.fault(segments[1]))")
        }
        self.table = table
        if segments.count == 3 {
            guard let id = PercentEncoding.decode(segments[2]) else {
                throw OfflineSyncError(.syntax, "the id in '\(parts[0])' \(Self.fault(segments[2]))")
            }
            self.id = id
        }
        var options: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decode(halves[0], plusAsSpace: true),
                    let value = PercentEncoding.decode(halves.count == 2 ? halves[1] : "", plusAsSpace: true)
                else {
                    throw OfflineSyncError(.syntax, "the query option '\(pair)' \(Self.fault(pair))")
                }
                let key = name.lowercased()
                if key.hasPrefix("$"), options[key] != nil {
                    throw OfflineSyncError(
                        .syntax,
                        "the query option '\(name)' is given more than once; give each $ option once (combine filters with 'and')"
                    )
                }
                options[key] = value
            }
        }
        self.options = options
    }

    /// Why `text` does not percent-decode: a malformed escape, or escapes whose bytes are not UTF-8.
    private static func fault(_ text: some StringProtocol) -> String {
        let bytes = Array(text.utf8)
        let isHex = { (byte: UInt8) in
            (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
        }
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard offset + 2 < bytes.count, isHex(bytes[offset + 1]), isHex(bytes[offset + 2]) else {
                return "has a malformed percent escape (% must be followed by two hex digits)"
            }
        }
        return "has percent escapes whose bytes are not UTF-8; percent-encode the UTF-8 bytes of the text"
    }

    /// `true` when `__includeDeleted=true` (any letter case) was given.
    var includeDeleted: Bool {
        options["__includedeleted"]?.lowercased() == "true"
    }

    /// The query of a `GET /tables/{table}` request; throws `.syntax` naming the bad option.
    func query() throws -> Query {
        try ODataParser.query(
            table: table, filter: options["$filter"], orderBy: options["$orderby"],
            skip: options["$skip"], top: options["$top"], select: options["$select"],
            inlineCount: options["$inlinecount"])
    }
}
