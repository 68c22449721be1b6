import Foundation
import NIOHTTP1
import OfflineSync
import OfflineSyncProtocol

/// A received answer: status, headers and the whole body.
struct WireResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var etag: String? { headers.first(name: WireHeader.etag) }

    /// `true` when the answer is an HTML page (a proxy's or web server's error page).
    var isHTML: Bool {
        if headers.first(name: "Content-Type")?.lowercased().contains("html") == true { return true }
        return body.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "<")
    }

    /// A short human summary of the body: the `error` text of a JSON error, an HTML page's title,
    /// or the start of a text body. It is cut to a few hundred bytes and its control characters
    /// are escaped (``Swift/String/escapingControlCharacters``): it goes into error messages,
    /// terminals and the stored operation errors, and the server is not trusted to keep it short
    /// or free of terminal escape sequences.
    var summary: String? {
        if body.isEmpty { return nil }
        if let error = try? WireJSON.decodeObject(body), case .string(let text)? = error["error"] {
            return Self.quoted(text)
        }
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        if isHTML {
            if let start = text.range(of: "<title>", options: .caseInsensitive),
                let end = text.range(of: "</title>", options: .caseInsensitive, range: start.upperBound..<text.endIndex)
            {
                let title = text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
                return "page title '\(Self.quoted(title))'"
            }
            return "an HTML page"
        }
        let line = text.prefix(200).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.isEmpty ? nil : "'\(Self.quoted(line))'"
    }

    /// The most bytes of the server's text a ``summary`` quotes.
    static let summaryLimit = 500

    /// `text` from the server as a ``summary`` quotes it: cut to ``summaryLimit`` bytes, control
    /// characters escaped.
    private static func quoted(_ text: some StringProtocol) -> String {
        String.quotedForError(Array(text.utf8), limit: summaryLimit)
    }
}
