import OfflineSync

/// The values the random tier draws from: every corner `ValueSemantics`, the filter-language
/// article and rule 3 of `LocalStore` name, and sizes on both sides of every threshold a backend
/// might have (a page, a parameter list, a 16-bit length, an index key).
///
/// Strings of a threshold length are built from a few stems, so that two stored strings often
/// share their first 64 KiB and differ only after it, where an index key or a fixed buffer cuts.
enum RandomValues {
    /// The byte lengths strings are drawn around.
    static let thresholds = [1, 2, 16, 32, 64, 255, 256, 999, 1_000, 1_001, 32_766, 32_767, 65_535, 65_536, 65_537]

    static let integers: [Int64] = [
        0, 1, -1, 2, -2, 7, -7, 42, 999, 1_000, 1_001, 32_766, 65_536, .max, .min, .max - 1, .min + 1,
        9_007_199_254_740_992, 9_007_199_254_740_993, -9_007_199_254_740_993,
    ]

    static let doubles: [Double] = [
        0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 5.5, -5.5, 0.1, 0.2, 0.30000000000000004, 0.49999999999999994, 1e-7,
        1e300, -1e300, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 9_223_372_036_854_775_808.0, -9_223_372_036_854_775_808.0,
        4_503_599_627_370_497.0, 9_007_199_254_740_993.0, 42.0, 1_000.0, 2.0, -3.0,
    ]

    /// The white space `trim` removes (``OfflineSync/QueryEvaluator/whiteSpace``), U+FEFF among them.
    static let whiteSpace: [String] = QueryEvaluator.whiteSpace.sorted { $0.value < $1.value }.map { String($0) }

    static let strings: [String] = [
        "", "a", "A", "b", "B", "z", "Z", "ab", "aB", "Ab", "abc", "ABC", "al", "Al", "AL", "Alice",
        // Letters that only Unicode-aware case mapping changes.
        "\u{DF}", "\u{E9}", "\u{C9}", "e\u{301}", "E\u{301}", "\u{130}", "\u{131}", "\u{212A}", "\u{FB00}", "\u{3A3}",
        // Outside the BMP, NUL, byte order marks, line ends.
        "😀", "😀a", "a😀", "\u{10FFFF}", "\u{0}", "a\u{0}b", "a\u{0}", "\u{FEFF}", "\u{FEFF}a", "a\u{FEFF}",
        "\r", "a\rb", "\r\n", "\n",
        // Characters a LIKE pattern or an escape would read.
        "%", "_", "\\", "a%b", "a_b", "a\\b", "'", "O'Brien", "''",
        // Numeric-looking strings, kept byte for byte.
        "0", "00", "007", "7", "-0", "+5", "1e3", "1E3", "1000", "1.0", "1.50", "0x10", "NaN", "nan", "Infinity",
        "-Infinity", " 1", "1 ", "\u{663}", "9223372036854775808", "-9223372036854775809", "1e400",
        // JSON-looking text in a string column.
        "[1,2]", "{}", "null", "true",
    ]

    static let dates: [Int64] = [
        0, -1, 1, 999, -999, -1_000, 86_399_999, -86_400_000, -86_400_001, 951_782_400_000, 951_868_799_999,
        -2_208_988_800_000, -12_219_292_800_000, -12_219_292_800_001, -62_135_596_800_000, 253_402_300_799_999,
        1_767_225_599_999, 1_767_225_600_000,
    ]

    static let jsonTexts: [String] = [
        "[]", "{}", "[1,2]", "[1, 2]", "[ 1,2 ]", "{\"a\":1}", "{ \"a\" : 1 }", "{\"b\":1,\"a\":2}",
        "{\"a\":2,\"b\":1}",
        "[\"\\/\"]", "[\"/\"]", "[\"\\u00e9\"]", "[\"\u{E9}\"]", "[1e3]", "[1000]", "[-0]", "[0]", "[1.0]", "[null]",
        "[\"A\"]", "[\"a\"]", "[\"\\u0000\"]", "{\"\":{}}", "[\n1\n]",
    ]

    /// JSON arrays of 16,000 to 40,000 elements (around SQLite's 32,766 arguments and expression
    /// depth), built once: joining them for every value cost a fifth of a random run.
    static let longJSONArrays: [String] = [16_000, 21_845, 32_766, 40_000].flatMap { count in
        ["1", "\"a\"", "0.5"].map { element in
            "[" + Array(repeating: element, count: count).joined(separator: ",") + "]"
        }
    }

    /// A string of about `length` UTF-8 bytes: a stem repeated (ASCII, a two-byte letter or an
    /// emoji, so a cut can fall inside a character), then a short tail that tells strings of one
    /// stem apart.
    static func sized(_ length: Int, stem: Int, tail: Int, lead: Int) -> String {
        let stems = ["a", "\u{E9}", "😀", "A", "ab"]
        let tails = ["", "a", "b", "B", "\u{E9}", "😀", " ", "\u{FEFF}", "\u{0}"]
        let leads = ["", "", " ", "\u{FEFF}", "\u{3000}"]
        let piece = stems[stem % stems.count]
        let head = leads[lead % leads.count]
        let end = tails[tail % tails.count]
        let count = max(0, (length - head.utf8.count - end.utf8.count) / piece.utf8.count)
        // Built as bytes: `String(repeating:count:)` appends piece by piece, which cost a third
        // of a random run's time.
        var bytes = Array(head.utf8)
        bytes.reserveCapacity(head.utf8.count + count * piece.utf8.count + end.utf8.count)
        let pieceBytes = Array(piece.utf8)
        if pieceBytes.count == 1 {
            bytes.append(contentsOf: repeatElement(pieceBytes[0], count: count))
        } else {
            for _ in 0..<count { bytes.append(contentsOf: pieceBytes) }
        }
        bytes.append(contentsOf: end.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Value {
    /// The value as a failure message shows it: long strings by their start, length and end.
    var shortDescription: String {
        switch self {
        case .string(let text): return "'" + RandomText.short(text) + "'"
        case .json(let text): return "json'" + RandomText.short(text) + "'"
        case .double(let number): return number == 0 && number.sign == .minus ? "-0.0" : "\(number)"
        default: return description
        }
    }
}

/// Text shortened for failure messages.
enum RandomText {
    /// `text` itself when short, else its first and last characters and its length in bytes, with
    /// invisible characters escaped.
    static func short(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        func escaped(_ part: ArraySlice<Unicode.Scalar>) -> String {
            part.map { scalar in
                scalar.value < 0x20 || (0x7F...0xA0).contains(scalar.value) || scalar.value == 0xFEFF
                    || (0x2000...0x3000).contains(scalar.value)
                    ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            }.joined()
        }
        guard scalars.count > 40 else { return escaped(scalars[...]) }
        return escaped(scalars.prefix(12)) + "…(\(text.utf8.count) bytes)…" + escaped(scalars.suffix(6))
    }

    /// `text` cut to `limit` characters with the length shown.
    static func clipped(_ text: String, limit: Int = 400) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…(\(text.count) characters)"
    }
}
