/// Sizes written for people: `1GiB`, `512MiB`, `10MB`, `4096`.
public enum ByteSize {
    private static let units: [(suffix: String, factor: Int)] = [
        ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
        ("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000), ("B", 1),
    ]

    /// Parses a positive size: digits, optionally followed by `B`, `KiB`, `MiB`, `GiB`, `TiB`
    /// (powers of 1024) or `KB`, `MB`, `GB`, `TB` (powers of 1000), case-insensitively.
    /// Throws ``OfflineSyncError/Code-swift.struct/configuration`` for anything else, zero, or a
    /// size that does not fit in `Int`.
    public static func parse(_ text: String) throws -> Int {
        let trimmed = String(text.trimmingASCIIWhitespace)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        let suffix = trimmed.dropFirst(digits.count).trimmingASCIIWhitespace
        let hint = "use a number of bytes or a number with KiB, MiB, GiB or TiB, e.g. 1GiB"
        guard !digits.isEmpty, let number = Int(digits) else {
            throw OfflineSyncError(.configuration, "is '\(trimmed.prefix(40))', which is not a size; \(hint)")
        }
        let factor: Int
        if suffix.isEmpty {
            factor = 1
        } else if let unit = units.first(where: { $0.suffix.lowercased() == suffix.lowercased() }) {
            factor = unit.factor
        } else {
            throw OfflineSyncError(
                .configuration, "is '\(trimmed.prefix(40))': unknown unit '\(suffix.prefix(10))'; \(hint)")
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: factor)
        guard !overflow else {
            throw OfflineSyncError(.configuration, "is '\(trimmed.prefix(40))', which is too large")
        }
        guard bytes > 0 else {
            throw OfflineSyncError(.configuration, "is zero; \(hint)")
        }
        return bytes
    }

    /// `1073741824` → `1 GiB`; sizes that are not a whole number of a unit print in bytes.
    public static func format(_ bytes: Int) -> String {
        for (suffix, factor) in units where suffix.hasSuffix("iB") && bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor) \(suffix)"
        }
        return "\(bytes) B"
    }
}
