/// The identifier grammar for table and column names.
///
/// A name is 1 to 128 characters of ASCII letters, digits and `_`, not starting with a digit.
/// Names are matched **case-insensitively** for uniqueness (as SQL databases compare identifiers),
/// table names starting with `__` are reserved for OfflineSync's system tables, and a backend may
/// reserve name prefixes of its own (``LocalStore/reservedNamePrefixes``). Because every name
/// passes this grammar, a backend may quote it into SQL or use it as a key prefix without further
/// escaping.
public enum Identifier {
    /// The longest accepted name.
    public static let maximumLength = 128

    /// Name prefixes a built-in backend reserves for itself (SQLite's `sqlite_`, in any letter
    /// case), whichever store is at hand: a store whose names avoid them can be migrated to every
    /// backend. The server's table service (module `OfflineSyncService`) refuses them in the tables and columns a write creates, on every
    /// store, with the message a store reserving them gives.
    public static let portablyReservedPrefixes = ["sqlite_"]

    /// Throws ``OfflineSyncError/Code-swift.struct/invalidName`` unless `name` is a valid identifier.
    /// - Parameters:
    ///   - name: the name to check.
    ///   - kind: what the name is ("table", "column", "index"), used in the message.
    ///   - reservedPrefixes: prefixes the store reserves (``LocalStore/reservedNamePrefixes``); a
    ///     name starting with one, in any letter case, is rejected.
    public static func validate(_ name: String, kind: String, reservedPrefixes: [String] = []) throws {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else {
            throw OfflineSyncError(
                .invalidName, "\(kind) name is empty; use letters, digits and '_', starting with a letter or '_'")
        }
        guard bytes.count <= maximumLength else {
            throw OfflineSyncError(
                .invalidName,
                "\(kind) name '\(name.prefix(40))…' is \(bytes.count) characters long; the limit is \(maximumLength)")
        }
        for (offset, scalar) in name.unicodeScalars.enumerated() {
            let value = scalar.value
            let isLetter = (value >= 65 && value <= 90) || (value >= 97 && value <= 122) || value == 95
            let isDigit = value >= 48 && value <= 57
            guard isLetter || (isDigit && offset > 0) else {
                let what = isDigit ? "starts with a digit" : "contains '\(scalar)' at position \(offset + 1)"
                throw OfflineSyncError(
                    .invalidName,
                    "\(kind) name '\(name)' \(what); use letters, digits and '_', starting with a letter or '_'")
            }
        }
        let folded = folded(name)
        for prefix in reservedPrefixes where folded.hasPrefix(Self.folded(prefix)) {
            throw OfflineSyncError(
                .invalidName,
                "\(kind) name '\(name)' starts with '\(prefix)', which a storage backend reserves for its own use; choose another name"
            )
        }
    }

    /// Validates a user table name: the grammar plus the `__` prefix reserved for system tables
    /// (and the store's own reserved prefixes, when given).
    public static func validateUserTable(_ name: String, reservedPrefixes: [String] = []) throws {
        try validate(name, kind: "table", reservedPrefixes: reservedPrefixes)
        if name.hasPrefix("__") {
            throw OfflineSyncError(
                .invalidName,
                "table name '\(name)' starts with '__', which OfflineSync reserves for its system tables; choose another name"
            )
        }
    }

    /// The key under which names are compared for uniqueness (ASCII lower case).
    public static func folded(_ name: String) -> String { name.lowercased() }
}
