extension String {
    /// This text with every character that could break a line or drive a terminal written as a
    /// Swift escape: `\n`, `\r`, `\t`, and `\u{1B}` for the other control characters (C0, DEL,
    /// C1), for invisible format characters (bidirectional overrides …), line and paragraph
    /// separators, and unassigned or private-use code points. Other text, backslashes included,
    /// is kept as it is.
    ///
    /// Use it before printing text that came from a store or a server in a human-readable form.
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.needsEscaping) else { return self }
        var escaped = ""
        for scalar in unicodeScalars {
            escaped += scalar.escapedForDisplay
        }
        return escaped
    }

    /// `bytes` (text read from a file, perhaps damaged: an id, a key, a name) fit to be quoted in
    /// an error message: cut before the first NUL byte (no id or name holds one, so what follows
    /// belongs to something else), decoded as UTF-8 (invalid bytes become `�`), escaped as
    /// ``escapingControlCharacters`` does, and cut to at most `limit` bytes of UTF-8, with `…`
    /// after whatever was cut, so that a damaged length cannot pour the rest of the file (other
    /// items' contents) into the message.
    package static func quotedForError<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int = 64) -> String {
        let text = bytes.prefix { $0 != 0 }.prefix(limit + 1)
        let isCut = text.count < bytes.count
        var quoted = ""
        var length = 0
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            let piece = scalar.escapedForDisplay
            length += piece.utf8.count
            guard length <= limit else { return quoted + "…" }
            quoted += piece
        }
        return isCut ? quoted + "…" : quoted
    }
}

extension Unicode.Scalar {
    /// `true` for a scalar that ``Swift/String/escapingControlCharacters`` escapes.
    fileprivate var needsEscaping: Bool {
        // Zero-width (non-)joiners are format characters that join emoji and Indic letters.
        if self == "\u{200C}" || self == "\u{200D}" { return false }
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
            return true
        default:
            return false
        }
    }

    /// The scalar as it is printed by ``Swift/String/escapingControlCharacters``.
    fileprivate var escapedForDisplay: String {
        guard needsEscaping else { return String(self) }
        switch self {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default: return "\\u{\(String(value, radix: 16, uppercase: true))}"
        }
    }
}
