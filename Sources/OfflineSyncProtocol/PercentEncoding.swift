/// Percent-encoding as the Azure Mobile Apps JavaScript client applies it.
package enum PercentEncoding {
    /// A path segment (table name, id): every byte of the UTF-8 form is escaped except ASCII
    /// letters, digits and `-_.!~*()` (JavaScript's `encodeURIComponent`, with `'` also escaped as
    /// `%27`), so `/`, `?` and `#` in an id never change the path.
    package static func component(_ text: String) -> String {
        encode(text, keeping: "")
    }

    /// A query option value: as ``component(_:)`` but `:`, `@`, `/`, `?`, `,`, `$` and `;` stay
    /// literal (they are plain characters in a query), as the recorded traffic shows for dates
    /// (`datetimeoffset%272026-11-22T00:04:43.885Z%27`). `&`, `=`, `+`, `#`, `%`, `'` and spaces
    /// are escaped.
    package static func queryValue(_ text: String) -> String {
        encode(text, keeping: ":@/?,$;")
    }

    private static func encode(_ text: String, keeping extra: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        let kept = Array(extra.utf8)
        for byte in text.utf8 {
            if isUnreserved(byte) || kept.contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`); `nil` for a malformed
    /// escape or bytes that are not UTF-8.
    package static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        var output: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                    return nil
                }
                output.append(high << 4 | low)
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"),
            UInt8(ascii: "~"), UInt8(ascii: "*"), UInt8(ascii: "("), UInt8(ascii: ")"):
            return true
        default:
            return false
        }
    }
}
