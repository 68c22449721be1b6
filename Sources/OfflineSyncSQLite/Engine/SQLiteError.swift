public import OfflineSync
/// A failure reported by the SQLite library (or by SQLCipher, which shares the engine).
///
/// It carries SQLite's primary and extended result codes, SQLite's own message, a sentence saying
/// what the store was doing and how to fix the usual causes, and the SQL of the failing statement.
/// The SQL never contains values (every value is bound); the bound values themselves are listed in
/// ``arguments`` only when the store was created with `publicStatementArguments` (they may hold
/// personal data, so they are redacted by default, as GRDB does).
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A primary SQLite result code (the low byte of an extended code).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric value, e.g. 5 for `SQLITE_BUSY`.
        public var rawValue: Int32

        /// Creates a code from its numeric value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `SQLITE_ERROR`: an SQL error or a missing database.
        public static let error = Code(rawValue: 1)
        /// `SQLITE_PERM`: access permission denied.
        public static let permission = Code(rawValue: 3)
        /// `SQLITE_BUSY`: another connection holds the lock for longer than the busy timeout.
        public static let busy = Code(rawValue: 5)
        /// `SQLITE_LOCKED`: a table is locked by this connection.
        public static let locked = Code(rawValue: 6)
        /// `SQLITE_READONLY`: the database cannot be written.
        public static let readOnly = Code(rawValue: 8)
        /// `SQLITE_IOERR`: the operating system reported an I/O error.
        public static let ioError = Code(rawValue: 10)
        /// `SQLITE_CORRUPT`: the file is damaged.
        public static let corrupt = Code(rawValue: 11)
        /// `SQLITE_FULL`: the disk, or the configured maximum page count, is full.
        public static let full = Code(rawValue: 13)
        /// `SQLITE_CANTOPEN`: the file cannot be opened or created.
        public static let cannotOpen = Code(rawValue: 14)
        /// `SQLITE_MISUSE`: the library was used incorrectly.
        public static let misuse = Code(rawValue: 21)
        /// `SQLITE_NOTADB`: the file is not a database (or is encrypted with another key).
        public static let notADatabase = Code(rawValue: 26)

        public var description: String {
            switch self {
            case .error: return "SQLITE_ERROR"
            case .permission: return "SQLITE_PERM"
            case .busy: return "SQLITE_BUSY"
            case .locked: return "SQLITE_LOCKED"
            case .readOnly: return "SQLITE_READONLY"
            case .ioError: return "SQLITE_IOERR"
            case .corrupt: return "SQLITE_CORRUPT"
            case .full: return "SQLITE_FULL"
            case .cannotOpen: return "SQLITE_CANTOPEN"
            case .misuse: return "SQLITE_MISUSE"
            case .notADatabase: return "SQLITE_NOTADB"
            default: return "SQLite code \(rawValue)"
            }
        }
    }

    /// The primary result code.
    public var code: Code
    /// The extended result code (e.g. 1290 `SQLITE_IOERR_DIR_FSYNC`), as SQLite reported it.
    public var extendedCode: Int32
    /// SQLite's own message (`sqlite3_errmsg`).
    public var sqliteMessage: String
    /// What the store was doing and, for common causes, how to fix it.
    public var context: String
    /// The failing statement's SQL, without values, when a statement failed.
    public var sql: String?
    /// The bound values, only when the store publishes statement arguments; otherwise `nil`.
    public var arguments: [String]?

    /// Creates an error.
    public init(
        code: Code, extendedCode: Int32, sqliteMessage: String, context: String,
        sql: String? = nil, arguments: [String]? = nil
    ) {
        self.code = code
        self.extendedCode = extendedCode
        self.sqliteMessage = sqliteMessage
        self.context = context
        self.sql = sql
        self.arguments = arguments
    }

    public var description: String {
        var text = "\(context): \(code) (extended code \(extendedCode)): \(sqliteMessage)"
        if let hint = code.hint { text += "; \(hint)" }
        if let sql {
            // A statement can be very long (the `CREATE TABLE` of a wide table): its start says
            // which one it is.
            text += sql.count > 300 ? " — SQL: \(sql.prefix(300))… (\(sql.count) characters)" : " — SQL: \(sql)"
            if let arguments {
                text += " — arguments: [\(arguments.joined(separator: ", "))]"
            } else {
                text += " — arguments redacted"
            }
        }
        return text
    }
}

extension SQLiteError.Code {
    /// How to fix the usual cause of this code, for the error description.
    var hint: String? {
        switch self {
        case .notADatabase:
            return
                "the file is not an SQLite database, or it is encrypted (open encrypted stores with SQLCipherStore and the right key), or it is damaged (restore it from a backup, or delete it and pull the data again)"
        case .busy:
            return
                "another connection or process holds the database lock for longer than the busy timeout; retry, raise the busy timeout, or close the other connection"
        case .readOnly:
            return
                "the file or its directory is not writable; check permissions and that the file system is not mounted read-only"
        case .cannotOpen:
            return "the file cannot be opened or created; check that the directory exists and is writable"
        case .full:
            return
                "the disk is full or the database reached its maximum page count; free space or raise the limit (the failed transaction was rolled back)"
        case .corrupt:
            return "the database file is damaged; restore it from a backup, or delete it and pull the data again"
        default:
            return nil
        }
    }
}

extension SQLiteError {
    /// `true` when SQLite refused to prepare a statement because it is too deeply nested or too
    /// large for its parser or code generator (SQLite 3.15's parser stack holds 100 entries, which
    /// 15 to 30 levels of nested SQL exhaust). The engine then evaluates the query in Swift.
    var isStatementTooComplex: Bool {
        code == .error
            && ["parser stack overflow", "Expression tree is too large", "too many SQL variables"].contains {
                sqliteMessage.contains($0)
            }
    }
}

extension SQLiteError: StoreFullError {
    /// `true` for `SQLITE_FULL`: the disk, or the configured maximum page count, is full.
    public var isStoreFull: Bool { code == .full }
}

extension SQLiteError: StoreUnavailableError {
    /// `true` for `SQLITE_BUSY`: another process held the store's lock for longer than the busy
    /// timeout.
    public var isStoreUnavailable: Bool { code == .busy }
}
