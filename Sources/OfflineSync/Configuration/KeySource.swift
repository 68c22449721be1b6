/// Where an encrypted store's key is read from: never the configuration string itself.
public enum KeySource: Sendable, Hashable, CustomStringConvertible {
    /// An environment variable holding the key (`key-env=VAR`).
    case environment(String)
    /// A file holding the key (`key-file=PATH`); surrounding whitespace and the final newline are
    /// ignored.
    case file(String)

    /// Reads the key. 64 hex digits are a raw 256-bit key; anything else non-empty is a
    /// passphrase. Throws ``OfflineSyncError/Code-swift.struct/configuration`` naming the variable
    /// or file (never its content) when it is unset, unreadable or empty.
    public func load() throws -> StoreKey {
        var text: [UInt8]
        switch self {
        case .environment(let variable):
            guard let value = getenv(variable) else {
                throw OfflineSyncError(
                    .configuration,
                    "the environment variable \(variable) holding the store key is not set; export it (64 hex digits for a raw key, or a passphrase)"
                )
            }
            text = Array(String(cString: value).utf8)
        case .file(let path):
            text = try KeySource.readFile(path)
        }
        let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }
        // A byte order mark (editors on Windows write one) is not part of the key.
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        let trimmed = Array(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
        guard !trimmed.isEmpty else {
            throw OfflineSyncError(
                .configuration,
                "the store key in \(self) is empty; put 64 hex digits (a raw 256-bit key) or a passphrase there")
        }
        // A digit too few or too many would silently turn a raw key into a passphrase (a new
        // store would then be keyed by that passphrase).
        if trimmed.count != 64, (60...68).contains(trimmed.count),
            trimmed.allSatisfy({ StoreConfiguration.hexValue($0) != nil })
        {
            throw OfflineSyncError(
                .configuration,
                "the store key in \(self) is \(trimmed.count) hex digits; a raw 256-bit key is exactly 64 (a digit is missing or extra). A passphrase made only of hex digits must not be 60 to 68 digits long"
            )
        }
        return StoreKey(material: trimmed)
    }

    /// `environment variable STORE_KEY` or `key file ./store.key`.
    public var description: String {
        switch self {
        case .environment(let variable): return "environment variable \(variable)"
        case .file(let path): return "key file \(path)"
        }
    }

    /// `true` when `name` is a portable environment variable name: ASCII letters, digits and `_`,
    /// not starting with a digit.
    public static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(first >= 48 && first <= 57) else { return false }
        return name.utf8.allSatisfy {
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95
        }
    }

    private static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw OfflineSyncError(.configuration, "cannot read the store key file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                let reason = String(cString: strerror(errno))
                throw OfflineSyncError(.configuration, "cannot read the store key file \(path): \(reason)")
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            guard bytes.count <= 65_536 else {
                throw OfflineSyncError(
                    .configuration,
                    "the store key file \(path) is larger than 64 KiB; it should hold 64 hex digits or a passphrase")
            }
        }
        return bytes
    }
}

/// Key material for an encrypted store. Its description, debug description and mirror are
/// redacted, so printing, logging or dumping it never reveals the key.
public struct StoreKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What kind of key it is.
    public enum Kind: Sendable, Hashable {
        /// 32 bytes used as the cipher key directly (no key derivation).
        case raw
        /// A passphrase from which the backend derives the key (PBKDF2, slow by design).
        case passphrase
    }

    /// A raw key's 32 bytes, or a passphrase's UTF-8 bytes.
    public let bytes: [UInt8]
    /// Whether ``bytes`` is a raw key or a passphrase.
    public let kind: Kind

    /// A key from text: 64 hex digits are a raw key, anything else a passphrase.
    public init(material: [UInt8]) {
        if material.count == 64, let raw = StoreKey.decodeHex(material) {
            bytes = raw
            kind = .raw
        } else {
            bytes = material
            kind = .passphrase
        }
    }

    /// A raw 256-bit key; `nil` unless `bytes` has 32 elements.
    public init?(raw bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
        kind = .raw
    }

    /// A passphrase.
    public init(passphrase: String) {
        bytes = Array(passphrase.utf8)
        kind = .passphrase
    }

    /// The raw key as 64 lower-case hex digits (for a raw-key literal such as `x'…'`); `nil` for a
    /// passphrase. Handle the result as carefully as the key.
    public var rawHex: String? {
        guard kind == .raw else { return nil }
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    public var description: String { kind == .raw ? "<raw 256-bit key, redacted>" : "<passphrase, redacted>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["kind": kind]) }

    private static func decodeHex(_ text: [UInt8]) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(text.count / 2)
        var index = 0
        while index < text.count {
            guard let high = StoreConfiguration.hexValue(text[index]),
                let low = StoreConfiguration.hexValue(text[index + 1])
            else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif
