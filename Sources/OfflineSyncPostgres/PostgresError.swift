public import OfflineSync

/// A failure reported by PostgreSQL or by libpq: a refused connection, a failed statement, a lost
/// server.
///
/// It carries the SQLSTATE code when the server sent one, PostgreSQL's own message (with its
/// detail and hint), a sentence saying what the store was doing, and the SQL of the failing
/// statement. The SQL never contains values (every value is bound) and the error never contains a
/// password: libpq's messages do not quote it and the store never puts it anywhere else.
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. `53100` (disk full), or `nil` when libpq failed before
    /// the server answered (no connection, connection lost).
    public var sqlState: String?
    /// PostgreSQL's (or libpq's) message, with its detail and hint when present.
    public var message: String
    /// What the store was doing and, for the usual causes, how to fix it.
    public var context: String
    /// The SQL of the failing statement (values are bound, never part of it), if any.
    public var sql: String?

    /// Creates an error.
    public init(sqlState: String? = nil, message: String, context: String, sql: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.context = context
        self.sql = sql
    }

    /// `true` for failures of the connection itself (SQLSTATE class 08, or no SQLSTATE at all).
    public var isConnectionFailure: Bool {
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08")
    }

    public var description: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(context): \(message)"
        if let sql { text += " (SQL: \(sql.count > 300 ? String(sql.prefix(300)) + "…" : sql))" }
        return text
    }
}

extension PostgresError: StoreUnavailableError {
    /// `true` when the database server could not be reached or the connection was lost
    /// (``isConnectionFailure``), or the server is shutting down or starting up (SQLSTATE
    /// `57P01`–`57P03`).
    public var isStoreUnavailable: Bool {
        isConnectionFailure || ["57P01", "57P02", "57P03"].contains(sqlState ?? "")
    }
}
