#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// The key of an encrypted store: a passphrase (SQLCipher derives the key with PBKDF2, which costs
/// tens of milliseconds per open) or a raw 256-bit key (no derivation).
///
/// The key bytes are copied into memory that the key owns and **zeroes** when the last copy of the
/// key is released; they are handed to SQLCipher only while a connection is keyed. A key never
/// appears in a description, an error or a log: `print(key)` shows only its kind. The values you
/// create it from (a `String`, an array) are yours to clear.
public struct SQLCipherKey: Sendable, CustomStringConvertible {
    /// Whether the key is a passphrase or a raw key.
    public enum Kind: String, Sendable {
        /// A passphrase, stretched by SQLCipher's PBKDF2.
        case passphrase
        /// A raw 256-bit key, used as is.
        case raw
    }

    /// Whether the key is a passphrase or a raw key.
    public let kind: Kind
    let material: KeyMaterial

    private init(kind: Kind, material: KeyMaterial) {
        self.kind = kind
        self.material = material
    }

    /// A passphrase given as text (its UTF-8 bytes are the key).
    public static func passphrase(_ text: String) -> SQLCipherKey {
        var bytes = Array(text.utf8)
        defer { KeyMaterial.zero(&bytes) }
        return SQLCipherKey(kind: .passphrase, material: KeyMaterial(bytes))
    }

    /// A passphrase given as bytes.
    public static func passphrase(bytes: [UInt8]) -> SQLCipherKey {
        SQLCipherKey(kind: .passphrase, material: KeyMaterial(bytes))
    }

    /// A raw 256-bit key: exactly 32 bytes (checked when the key is used). It is passed to
    /// SQLCipher in its raw-key form `x'…'`, which skips key derivation.
    public static func raw(_ bytes: [UInt8]) -> SQLCipherKey {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = Array("x'".utf8)
        text.reserveCapacity(bytes.count * 2 + 3)
        for byte in bytes {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        text.append(UInt8(ascii: "'"))
        let key = SQLCipherKey(kind: .raw, material: KeyMaterial(text, rawByteCount: bytes.count))
        KeyMaterial.zero(&text)
        return key
    }

    public var description: String { "SQLCipherKey(\(kind.rawValue), redacted)" }

    /// Throws unless the key can be used: a raw key of 32 bytes, a non-empty passphrase.
    func validate() throws {
        switch kind {
        case .raw where material.rawByteCount != 32:
            throw SQLCipherError(
                .invalidKey,
                "a raw SQLCipher key must be 32 bytes (256 bits), but this one has \(material.rawByteCount) bytes")
        case .passphrase where material.count == 0:
            throw SQLCipherError(
                .invalidKey, "the SQLCipher passphrase is empty; an empty key would leave the file unencrypted")
        default:
            break
        }
    }

    /// Calls `body` with the key bytes as SQLCipher expects them (`x'…'` text for a raw key).
    func withBytes<Result>(_ body: (UnsafeRawPointer, Int32) throws -> Result) rethrows -> Result {
        try body(UnsafeRawPointer(material.bytes), Int32(material.count))
    }
}

/// Key bytes in memory of their own, zeroed before it is freed.
///
/// `@unchecked Sendable` is safe: the buffer is written only in `init` and `deinit`, and only read
/// in between.
final class KeyMaterial: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let count: Int
    let rawByteCount: Int

    init(_ source: [UInt8], rawByteCount: Int = 0) {
        count = source.count
        self.rawByteCount = rawByteCount
        bytes = .allocate(byteCount: max(source.count, 1), alignment: 16)
        source.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: bytes, count: count).copyMemory(from: $0) }
    }

    /// Overwrites a temporary copy of key bytes with zeros (not removed by the optimiser).
    static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { zeroMemory(base, buffer.count) }
        }
    }

    /// Zeros `count` bytes at `base` with the C library's call that the optimiser keeps:
    /// `explicit_bzero` in glibc, `memset_s` on Apple platforms.
    private static func zeroMemory(_ base: UnsafeMutableRawPointer, _ count: Int) {
        #if canImport(Darwin)
            _ = memset_s(base, count, 0, count)
        #else
            explicit_bzero(base, count)
        #endif
    }

    deinit {
        Self.zeroMemory(bytes, max(count, 1))
        bytes.deallocate()
    }
}
