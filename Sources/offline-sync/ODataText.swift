import OfflineSync

/// OData `$filter` / `$orderby` text from the command line, parsed into the query model.
enum ODataText {
    static func filter(_ text: String) throws -> Expression {
        throw unavailable
    }

    static func orderBy(_ text: String) throws -> [SortKey] {
        throw unavailable
    }

    private static let unavailable = OfflineSyncError(.unsupported, "OData parsing is not available in this build (the OData parser has not landed yet); run the query without --filter and --orderby")
}
