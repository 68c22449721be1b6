/// A store named by a URL-like string: `scheme:path?name=value&name=value`.
///
/// The choice of backend lives in configuration, not code: `memory:` is an ``InMemoryStore``,
/// and each backend module declares its own scheme, path rule and options (a ``StoreScheme``)
/// and registers it with a ``StoreRegistry`` — e.g. `rocks:./data/store.rocks?compression=lz4`
/// for a backend that registered `rocks`. The built-in ones (module `OfflineSyncStores`) list
/// theirs in their documentation.
///
/// Parsing checks the text against the ``StoreScheme`` that a ``StoreRegistry`` knows for the
/// scheme: an unknown scheme lists the known ones, an unknown option names itself and lists the
/// valid ones, and an option that would carry key material (`key=`, `passphrase=` …) is refused,
/// because store URLs end up in logs and shell history. A configuration therefore never holds a
/// secret, and its ``description`` is safe to log.
///
/// `scheme://path` is accepted as a spelling of `scheme:path`. `%XX` escapes are decoded in the
/// path and in option values (write `%3F` for a `?` in a path).
public struct StoreConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// One `name=value` option, in the order written.
    public struct Option: Sendable, Hashable {
        /// The option's name, e.g. `map-size`.
        public var name: String
        /// Its value as written (escapes decoded).
        public var value: String

        /// Creates an option.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The scheme, in lower case, e.g. `memory`.
    public let scheme: String
    /// The path (a file or directory), or `nil` for schemes without one (`memory:`).
    public let path: String?
    /// The options, in the order written; names are unique.
    public let options: [Option]

    /// Creates a configuration without checking it against a registry.
    /// Use ``init(parsing:registry:)`` or ``StoreRegistry/configuration(parsing:)`` for user input.
    public init(scheme: String, path: String? = nil, options: [Option] = []) {
        self.scheme = scheme.lowercased()
        self.path = path
        self.options = options
    }

    /// Parses and checks `text` against the schemes `registry` knows (see ``StoreRegistry/configuration(parsing:)``).
    public init(parsing text: String, registry: StoreRegistry = .shared) throws {
        self = try registry.configuration(parsing: text)
    }

    /// The value of an option, or `nil` when it was not given.
    public func option(_ name: String) -> String? {
        options.first { $0.name == name }?.value
    }

    /// The same store settings at another path (for temporary copies: conformance cases, migrations).
    public func relocated(to path: String) -> StoreConfiguration {
        StoreConfiguration(scheme: scheme, path: path, options: options)
    }

    /// The path, or an error naming the scheme when it has none.
    public func requirePath() throws -> String {
        guard let path, !path.isEmpty else {
            throw OfflineSyncError(.configuration, "the \(scheme): store needs a path, e.g. \(scheme):./data/store")
        }
        return path
    }

    /// The canonical text, `scheme:path?name=value…`. It never contains key material (such options
    /// are refused when parsing), so it is safe to log.
    public var description: String {
        var text = scheme + ":" + StoreConfiguration.escape(path ?? "", reserved: ["%", "?"])
        if !options.isEmpty {
            text +=
                "?"
                + options.map {
                    $0.name + "=" + StoreConfiguration.escape($0.value, reserved: ["%", "&", "="])
                }.joined(separator: "&")
        }
        return text
    }
}

extension StoreConfiguration {
    /// Option names that would put key material into the URL; always refused.
    public static let inlineKeyOptions: Set<String> = ["key", "passphrase", "password", "pass", "secret", "raw-key"]

    /// Splits `text` into scheme, path and options without consulting a registry.
    /// Throws for an empty text, a missing or malformed scheme, a bad `%` escape, an option
    /// without `=`, a repeated option, or an inline key.
    /// `examples` (the registered schemes' examples) are quoted when the scheme is missing.
    static func split(_ text: String, examples: [String] = ["memory:"]) throws -> (
        scheme: String, path: String, options: [Option]
    ) {
        let named = examples.prefix(4).joined(separator: ", ")
        let trimmed = text.trimmingASCIIWhitespace
        guard !trimmed.isEmpty else {
            throw OfflineSyncError(
                .configuration,
                "the store is empty; name one as SCHEME:PATH?OPTIONS, e.g. \(named)")
        }
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw OfflineSyncError(
                .configuration,
                "the store '\(Self.withoutOptions(trimmed).prefix(200))' has no scheme; write SCHEME:PATH, e.g. \(named)")
        }
        let scheme = trimmed[..<colon].lowercased()
        let schemeIsValid =
            !scheme.isEmpty
            && scheme.unicodeScalars.allSatisfy { scalar in
                (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") || scalar == "-" || scalar == "+"
                    || scalar == "."
            }
        guard schemeIsValid else {
            throw OfflineSyncError(
                .configuration,
                "the store scheme '\(scheme.prefix(40))' is malformed; a scheme is letters, digits, '-', '+' or '.', followed by ':'"
            )
        }
        var rest = trimmed[trimmed.index(after: colon)...]
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        let rawPath: Substring
        var rawQuery: Substring?
        if let question = rest.firstIndex(of: "?") {
            rawPath = rest[..<question]
            rawQuery = rest[rest.index(after: question)...]
        } else {
            rawPath = rest
        }
        let path = try unescape(rawPath, what: "the path")
        var options: [Option] = []
        for (number, pair) in (rawQuery ?? "").split(separator: "&", omittingEmptySubsequences: true).enumerated() {
            guard let equals = pair.firstIndex(of: "=") else {
                // Not repeated: text without a name may be a key pasted where `key-env=` belongs.
                throw OfflineSyncError(
                    .configuration,
                    "option \(number + 1) of the store (\(pair.count) characters, not shown in case it is key material) has no '='; write NAME=VALUE, e.g. key-env=VAR for a key"
                )
            }
            let name = try unescape(pair[..<equals], what: "an option name").lowercased()
            if inlineKeyOptions.contains(name) {
                throw OfflineSyncError(
                    .configuration,
                    "the store option '\(name)=' would put key material into the store URL, which ends up in logs and shell history; put the key into an environment variable and write key-env=VAR, or into a file readable only by you and write key-file=PATH (64 hex digits are a raw 256-bit key, anything else is a passphrase)"
                )
            }
            let value = try unescape(pair[pair.index(after: equals)...], what: "the value of option '\(name)'")
            guard !options.contains(where: { $0.name == name }) else {
                throw OfflineSyncError(.configuration, "the store option '\(name)' is given twice; give it once")
            }
            options.append(Option(name, value))
        }
        return (scheme, path, options)
    }

    /// `text` up to its options (`?…`), which an error message does not repeat: they may hold
    /// key material.
    static func withoutOptions(_ text: Substring) -> Substring {
        guard let question = text.firstIndex(of: "?") else { return text }
        return text[..<question] + "?…"
    }

    /// Decodes `%XX` escapes.
    static func unescape(_ text: Substring, what: String) throws -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard iterator.count >= 2, let high = hexValue(iterator.removeFirst()),
                let low = hexValue(iterator.removeFirst())
            else {
                throw OfflineSyncError(
                    .configuration,
                    "\(what) of the store has a '%' that is not followed by two hex digits; write %25 for a literal '%'"
                )
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func escape(_ text: String, reserved: Set<Character>) -> String {
        var result = ""
        for character in text {
            if reserved.contains(character), let ascii = character.asciiValue {
                let digits = Array("0123456789ABCDEF")
                result += "%" + String(digits[Int(ascii >> 4)]) + String(digits[Int(ascii & 0xF)])
            } else {
                result.append(character)
            }
        }
        return result
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension StringProtocol {
    var trimmingASCIIWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let slice = self[...]
        guard let first = slice.firstIndex(where: { !isSpace($0) }),
            let last = slice.lastIndex(where: { !isSpace($0) })
        else { return Substring() }
        return Substring(slice[first...last])
    }
}
