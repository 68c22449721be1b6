/// The paths of the table protocol: a table is `/tables/{table}`, an item `/tables/{table}/{id}`,
/// each segment percent-encoded as a component (see ``PercentEncoding/component(_:)``), so `/`,
/// `?` and `#` in an id never change the path.
package enum TablePath {
    /// The first segment of every table path.
    package static let prefix = "tables"

    /// `/tables/{table}`.
    package static func table(_ table: String) -> String {
        "/" + prefix + "/" + PercentEncoding.component(table)
    }

    /// `/tables/{table}/{id}`.
    package static func item(_ table: String, _ id: String) -> String {
        self.table(table) + "/" + PercentEncoding.component(id)
    }
}
