/// The identifier grammar for table and column names.
///
/// A name is 1 to 128 characters of ASCII letters, digits and `_`, not starting with a digit.
/// Names are matched **case-insensitively** for uniqueness (SQLite compares identifiers that way),
/// names starting with `sqlite_` are reserved by SQLite, and table names starting with `__` are
/// reserved for OfflineSync's system tables. Because every name passes this grammar, a backend may
/// quote it into SQL or use it as a key prefix without further escaping.
public enum Identifier {
    /// The longest accepted name.
    public static let maximumLength = 128

    /// Throws ``OfflineSyncError/Code-swift.struct/invalidName`` unless `name` is a valid identifier.
    /// - Parameter kind: what the name is ("table", "column", "index"), used in the message.
    public static func validate(_ name: String, kind: String) throws {
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
        if name.lowercased().hasPrefix("sqlite_") {
            throw OfflineSyncError(
                .invalidName, "\(kind) name '\(name)' starts with 'sqlite_', which SQLite reserves; choose another name"
            )
        }
    }

    /// Validates a user table name: the grammar plus the `__` prefix reserved for system tables.
    public static func validateUserTable(_ name: String) throws {
        try validate(name, kind: "table")
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
