extension QueryEvaluator {
    /// Applies a built-in function (the arguments are already evaluated and have the types
    /// ``Query/validate(against:)`` checked). A null argument gives null, for every function.
    ///
    /// - `startswith`, `endswith`, `contains` match UTF-8 bytes exactly; an empty needle always
    ///   matches.
    /// - `indexof(s, needle)` is the 0-based position of the first byte-exact occurrence of
    ///   `needle`, counted in Unicode scalars (not UTF-16 code units: `indexof('😀a', 'a')` is 1,
    ///   where JavaScript and .NET count 2), `-1` when there is none, `0` for an empty needle.
    /// - `length` counts Unicode scalars; `substring(s, start[, length])` takes Unicode scalars
    ///   from `start` (0-based). A negative `start` counts as 0 and a `start` past the end gives
    ///   `''`; a negative `length` counts as 0 and a `length` past the end stops at the end (the
    ///   Azure servers and .NET throw instead; a filter cannot fail row by row).
    /// - `tolower` / `toupper` change ASCII letters only.
    /// - `trim` removes leading and trailing ``whiteSpace``.
    /// - `concat(a, b)` appends; `replace(s, find, with)` replaces every non-overlapping
    ///   occurrence of `find` (bytes, left to right); an empty `find` leaves `s` as it is.
    /// - `year` … `second` are UTC calendar fields (`second` drops the milliseconds).
    /// - `round` (halves away from zero), `floor`, `ceiling`: see ``ValueSemantics/rounded(_:_:)``.
    public static func apply(_ function: Function, _ arguments: [Value]) -> Value {
        if arguments.contains(where: \.isNull) { return .null }
        func text(_ index: Int) -> String {
            switch arguments[index] {
            case .string(let value), .json(let value): return value
            default: return ""
            }
        }
        switch function {
        case .startsWith:
            return .bool(UTF8Bytes.hasPrefix(text(0), text(1)))
        case .endsWith:
            return .bool(UTF8Bytes.hasSuffix(text(0), text(1)))
        case .contains:
            return .bool(firstByteOffset(of: text(1), in: text(0)) != nil)
        case .indexOf:
            return UTF8Bytes.withBytes(of: text(0)) { haystack in
                guard let offset = UTF8Bytes.withBytes(of: text(1), { UTF8Bytes.firstOffset(of: $0, in: haystack) })
                else { return .int(-1) }
                var scalars = 0
                for byte in UnsafeBufferPointer(rebasing: haystack[..<offset]) where byte & 0xC0 != 0x80 { scalars += 1 }
                return .int(Int64(scalars))
            }
        case .toLower:
            return .string(mapASCII(text(0), from: 65...90, offset: 32))
        case .toUpper:
            return .string(mapASCII(text(0), from: 97...122, offset: -32))
        case .length:
            return .int(Int64(text(0).unicodeScalars.count))
        case .substring:
            let scalars = Array(text(0).unicodeScalars)
            let start = clampedCount(arguments[1], limit: scalars.count)
            let end =
                arguments.count > 2 ? start + clampedCount(arguments[2], limit: scalars.count - start) : scalars.count
            var result = String.UnicodeScalarView()
            result.append(contentsOf: scalars[start..<end])
            return .string(String(result))
        case .trim:
            let scalars = text(0).unicodeScalars
            guard let first = scalars.firstIndex(where: { !whiteSpace.contains($0) }),
                let last = scalars.lastIndex(where: { !whiteSpace.contains($0) })
            else { return .string("") }
            return .string(String(scalars[first...last]))
        case .concat:
            return .string(text(0) + text(1))
        case .replace:
            return .string(replacing(text(1), with: text(2), in: text(0)))
        case .year, .month, .day, .hour, .minute, .second:
            guard case .date(let date) = arguments[0] else { return .null }
            let parts = date.components
            switch function {
            case .year: return .int(Int64(parts.year))
            case .month: return .int(Int64(parts.month))
            case .day: return .int(Int64(parts.day))
            case .hour: return .int(Int64(parts.hour))
            case .minute: return .int(Int64(parts.minute))
            default: return .int(Int64(parts.second))
            }
        case .round:
            return ValueSemantics.rounded(arguments[0], .toNearestOrAwayFromZero)
        case .floor:
            return ValueSemantics.rounded(arguments[0], .down)
        case .ceiling:
            return ValueSemantics.rounded(arguments[0], .up)
        }
    }

    /// The characters `trim` removes: Unicode white space, the union of what JavaScript's
    /// `String.prototype.trim` and .NET's `String.Trim` remove (tab, line feed, vertical tab, form
    /// feed, carriage return, space, U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
    /// U+202F, U+205F, U+3000 and U+FEFF).
    public static let whiteSpace: Set<Unicode.Scalar> = Set(
        ([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + Array(0x2000...0x200A)
            + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]).map { Unicode.Scalar(UInt32($0))! })

    /// A position or length argument of `substring` as a count within `0...limit`. Integer
    /// expressions are doubles only after an overflow (beyond ±2^63), which clamps to an end.
    private static func clampedCount(_ value: Value, limit: Int) -> Int {
        switch value {
        case .int(let number): return Int(min(max(number, 0), Int64(limit)))
        case .double(let number): return number > 0 ? limit : 0
        default: return 0
        }
    }

    /// The byte offset of the first occurrence of `needle` in `haystack` (0 for an empty needle).
    private static func firstByteOffset(of needle: String, in haystack: String) -> Int? {
        UTF8Bytes.withBytes(of: haystack) { haystack in
            UTF8Bytes.withBytes(of: needle) { UTF8Bytes.firstOffset(of: $0, in: haystack) }
        }
    }

    /// `text` with every non-overlapping occurrence of `find` (left to right) replaced.
    private static func replacing(_ find: String, with replacement: String, in text: String) -> String {
        UTF8Bytes.withBytes(of: text) { text in
            UTF8Bytes.withBytes(of: find) { find in
                guard !find.isEmpty, find.count <= text.count else { return String(decoding: text, as: UTF8.self) }
                var result: [UInt8] = []
                result.reserveCapacity(text.count)
                var position = 0
                while let found = UTF8Bytes.firstOffset(
                    of: find, in: UnsafeBufferPointer(rebasing: text[position...]))
                {
                    result.append(contentsOf: UnsafeBufferPointer(rebasing: text[position..<position + found]))
                    result.append(contentsOf: replacement.utf8)
                    position += found + find.count
                }
                result.append(contentsOf: UnsafeBufferPointer(rebasing: text[position...]))
                return String(decoding: result, as: UTF8.self)
            }
        }
    }

    private static func mapASCII(_ text: String, from range: ClosedRange<UInt8>, offset: Int) -> String {
        String(decoding: text.utf8.map { range.contains($0) ? UInt8(Int($0) + offset) : $0 }, as: UTF8.self)
    }
}
