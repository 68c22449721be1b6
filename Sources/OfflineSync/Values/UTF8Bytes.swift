#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-exact comparisons of UTF-8 text with `memcmp`, for the places where the package compares
/// strings as bytes (value equality, `startswith`, `contains` …) rather than as Unicode canonical
/// equivalents, which is what `String.==` does.
///
/// Written against contiguous bytes instead of `utf8.elementsEqual`, which walks an iterator a byte
/// at a time: about a hundred times slower on long text, and many times more in a debug build,
/// where the generic iteration is not specialized.
enum UTF8Bytes {
    /// Whether `a` and `b` have the same UTF-8 bytes.
    static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return withBytes(of: a) { left in withBytes(of: b) { right in equal(left, right) } }
    }

    /// Whether the two buffers hold the same bytes.
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress, a.count > 0 else { return true }
        return memcmp(left, right, a.count) == 0
    }

    /// Whether `text` begins with `prefix`, byte for byte.
    static func hasPrefix(_ text: String, _ prefix: String) -> Bool {
        withBytes(of: text) { text in
            withBytes(of: prefix) { prefix in
                prefix.count <= text.count && equal(UnsafeBufferPointer(rebasing: text[..<prefix.count]), prefix)
            }
        }
    }

    /// Whether `text` ends with `suffix`, byte for byte.
    static func hasSuffix(_ text: String, _ suffix: String) -> Bool {
        withBytes(of: text) { text in
            withBytes(of: suffix) { suffix in
                suffix.count <= text.count
                    && equal(UnsafeBufferPointer(rebasing: text[(text.count - suffix.count)...]), suffix)
            }
        }
    }

    /// The byte offset of the first occurrence of `needle` in `haystack`; 0 for an empty needle.
    static func firstOffset(of needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>) -> Int? {
        if needle.isEmpty { return 0 }
        guard needle.count <= haystack.count, let base = haystack.baseAddress, let first = needle.first else {
            return nil
        }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
            guard let found = memchr(base + start, Int32(first), last - start + 1) else { return nil }
            let offset = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + offset, needle.baseAddress!, needle.count) == 0 { return offset }
            start = offset + 1
        }
        return nil
    }

    /// Calls `body` with the UTF-8 bytes of `text` in contiguous memory (copied only for a string
    /// that does not store them so, such as a bridged one).
    static func withBytes<T>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return try Array(text.utf8).withUnsafeBufferPointer(body)
    }
}
