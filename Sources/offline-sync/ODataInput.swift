import OfflineSync

/// OData `$filter` / `$orderby` text from the command line, parsed by `ODataParser`.
/// A syntax error keeps the parser's message and adds the text with a caret under the position.
enum ODataInput {
    static func filter(_ text: String) throws -> FilterExpression {
        try pointing(at: text) { try ODataParser.filter(text) }
    }

    static func orderBy(_ text: String) throws -> [SortKey] {
        try pointing(at: text) { try ODataParser.orderBy(text) }
    }

    private static func pointing<T>(at text: String, _ parse: () throws -> T) throws -> T {
        do {
            return try parse()
        } catch let error as OfflineSyncError {
            guard let position = error.position, position >= 1 else { throw error }
            let caret = String(repeating: " ", count: min(position, text.count + 1) - 1) + "^"
            throw OfflineSyncError(error.code, "\(error.message)\n    \(text)\n    \(caret)", position: position)
        }
    }
}
