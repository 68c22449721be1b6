import OfflineSync
import OfflineSyncService

/// Who may use a table, and whether its rows belong to users (per-user data), when the server
/// checks tokens (``TableServer/Configuration/authentication``).
///
/// - ``Level/anonymous``: anyone, with or without a token (a token that is sent must still be
///   valid);
/// - ``Level/authenticated``: only requests with a valid token (the default whenever the server
///   checks tokens); others get 401;
/// - ``Level/disabled``: nobody: every request gets 405.
///
/// With an ``ownerColumn`` (per-user data), the table is ``Level/authenticated`` and each user
/// sees and changes only the rows stamped with the subject of their token: see `RowOwner`.
public struct TableAccess: Sendable, Hashable {
    /// Who may use a table.
    public enum Level: String, Sendable, Hashable, CaseIterable, Codable {
        /// Anyone.
        case anonymous
        /// Requests with a valid token.
        case authenticated
        /// Nobody.
        case disabled
    }

    /// Who may use the table.
    public var level: Level
    /// The column that records each row's owner when the table keeps per-user data; `nil` for
    /// a table whose rows every allowed user shares.
    public var ownerColumn: String?

    /// Creates an access rule; an `ownerColumn` needs ``Level/authenticated``.
    public init(_ level: Level, ownerColumn: String? = nil) {
        self.level = level
        self.ownerColumn = ownerColumn
    }

    /// Anyone may use the table.
    public static let anonymous = TableAccess(.anonymous)
    /// Only requests with a valid token.
    public static let authenticated = TableAccess(.authenticated)
    /// Every request is refused.
    public static let disabled = TableAccess(.disabled)

    /// Per-user data: authenticated, each row owned by the user whose token inserted it, its id
    /// kept in `column`.
    public static func perUser(column: String = "userId") -> TableAccess {
        TableAccess(.authenticated, ownerColumn: column)
    }

    /// Throws `OfflineSyncError` `.configuration` when a rule of `rules` (by table name) needs
    /// tokens and `checksTokens` is `false`, or keeps per-user data without being authenticated.
    public static func validate(_ rules: [String: TableAccess], checksTokens: Bool) throws {
        for (table, rule) in rules.sorted(by: { $0.key < $1.key }) {
            if let column = rule.ownerColumn {
                guard rule.level == .authenticated else {
                    throw OfflineSyncError(
                        .configuration,
                        "table '\(table)' keeps per-user data, so its access must be 'authenticated', not '\(rule.level.rawValue)'"
                    )
                }
                try Identifier.validate(column, kind: "column")
            }
            if !checksTokens, rule.level == .authenticated {
                throw OfflineSyncError(
                    .configuration,
                    "table '\(table)' needs authenticated users\(rule.ownerColumn == nil ? "" : " (per-user data)"), but the server checks no tokens; configure a secret or public key (serve --auth-secret-env, --auth-secret-file or --auth-public-key)"
                )
            }
        }
    }
}

/// The access rule of every table, as a server applies it.
struct AccessPolicy: Sendable {
    /// Rules by folded table name (table names compare case-insensitively, as the stores do).
    private let rules: [String: TableAccess]
    /// The rule of a table not named in `rules`.
    private let fallback: TableAccess
    /// `true` when tokens are checked.
    let checksTokens: Bool

    init(rules: [String: TableAccess], checksTokens: Bool) {
        var folded: [String: TableAccess] = [:]
        for (table, rule) in rules { folded[Identifier.folded(table)] = rule }
        self.rules = folded
        self.checksTokens = checksTokens
        self.fallback = checksTokens ? .authenticated : .anonymous
    }

    func access(_ table: String) -> TableAccess {
        rules[Identifier.folded(table)] ?? fallback
    }
}
