/// The text being parsed, with what error messages need: the parameter name and columns.
struct ODataText {
    /// The query option the text came from, e.g. `$filter`.
    let parameter: String
    let text: String
    let bytes: [UInt8]

    init(_ text: String, parameter: String) {
        self.parameter = parameter
        self.text = text
        self.bytes = Array(text.utf8)
    }

    /// The 1-based column (in characters) of a byte offset.
    func column(of offset: Int) -> Int {
        String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self).count + 1
    }

    /// The source text of a token.
    func spelling(of token: ODataToken) -> String {
        String(decoding: bytes[token.start..<token.end], as: UTF8.self)
    }

    /// The ASCII-lower-cased text of a word token, for case-insensitive keywords.
    func keyword(of token: ODataToken) -> String? {
        guard token.kind == .word else { return nil }
        return String(
            decoding: bytes[token.start..<token.end].map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// How a token is named in an error message.
    func describe(_ token: ODataToken) -> String {
        switch token.kind {
        case .end: return "end of text"
        case .literal(.string): return "string \(spelling(of: token))"
        case .literal: return "literal \(spelling(of: token))"
        default: return "'\(spelling(of: token))'"
        }
    }

    /// A syntax error pointing at a byte offset.
    func error(_ problem: String, at offset: Int, hint: String? = nil) -> OfflineSyncError {
        let column = column(of: offset)
        let shown = text.unicodeScalars.count > 200 ? String(text.unicodeScalars.prefix(200)) + "…" : text
        let message = "\(problem) at column \(column) of \(parameter) '\(shown)'" + (hint.map { "; \($0)" } ?? "")
        return OfflineSyncError(.syntax, message, position: column)
    }

    /// The error for a token that cannot stand where it is.
    func unexpected(_ token: ODataToken, hint: String) -> OfflineSyncError {
        error("unexpected \(describe(token))", at: token.start, hint: hint)
    }
}
