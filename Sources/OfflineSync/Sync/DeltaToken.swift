/// The position an incremental pull has reached: every server record ordered before
/// (`updatedAt`, `id`) = (``updatedAt``, ``itemId``) has been stored locally.
///
/// It is kept in ``SystemTables/config`` under `deltaToken|{table}|{queryId}` and written in the
/// same transaction as the page it follows, so it is never ahead of the stored data.
public struct DeltaToken: Sendable, Hashable, CustomStringConvertible {
    /// The `updatedAt` of the last record stored.
    public var updatedAt: Timestamp
    /// The id of the last record stored, the tie-breaker between records with one `updatedAt`.
    public var itemId: String?

    /// Creates a token.
    public init(updatedAt: Timestamp, itemId: String?) {
        self.updatedAt = updatedAt
        self.itemId = itemId
    }

    /// The token before any pull: the epoch, no item.
    public static let initial = DeltaToken(updatedAt: .epoch, itemId: nil)

    public var description: String { updatedAt.iso8601 + (itemId.map { " after '\($0)'" } ?? "") }

    /// The config key of a token.
    static func key(table: String, queryId: String) -> String { "deltaToken|\(table)|\(queryId)" }

    /// The prefix of every token key of a table.
    static func keyPrefix(table: String) -> String { "deltaToken|\(table)|" }

    /// Checks a query id: 1 to 255 bytes, without `|`.
    static func validate(queryId: String) throws {
        let length = queryId.utf8.count
        guard length > 0 else {
            throw OfflineSyncError(
                .invalidQuery, "a pull query id is empty; give a name such as 'allTodoItems', or nil for a full pull")
        }
        guard length <= 255 else {
            throw OfflineSyncError(
                .invalidQuery, "pull query id '\(queryId.prefix(32))…' is \(length) bytes long; the limit is 255")
        }
        guard !queryId.contains("|") else {
            throw OfflineSyncError(
                .invalidQuery,
                "pull query id '\(queryId)' contains '|', which separates the parts of a delta token key; use another character"
            )
        }
    }

    init?(row: Item) {
        guard let text = row[SystemTables.ConfigColumn.value].stringValue, let date = Timestamp(iso8601: text) else {
            return nil
        }
        self.init(updatedAt: date, itemId: row[SystemTables.ConfigColumn.itemId].stringValue)
    }

    func row(key: String) -> Item {
        var values: [String: Value] = [SystemTables.ConfigColumn.value: .string(updatedAt.iso8601)]
        if let itemId { values[SystemTables.ConfigColumn.itemId] = .string(itemId) }
        return Item(id: key, values: values)
    }

    /// The filter of the records after this token: `updatedAt ge T and (updatedAt gt T or id gt L)`.
    var filter: FilterExpression {
        let updatedAt = FilterExpression.column(SystemProperty.updatedAt.rawValue)
        let atOrAfter = FilterExpression.comparison(updatedAt, .ge, .literal(.date(self.updatedAt)))
        guard let itemId else { return atOrAfter }
        return .and(
            atOrAfter,
            .or(
                .comparison(updatedAt, .gt, .literal(.date(self.updatedAt))),
                .comparison(.column("id"), .gt, .literal(.string(itemId)))))
    }
}
