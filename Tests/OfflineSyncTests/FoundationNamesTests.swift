import Foundation
import OfflineSync
import Testing

/// The public names of the query model read unqualified next to `import Foundation` on Linux:
/// Foundation declares `Expression` (hence ``FilterExpression``), and a collection's own `Index`
/// shadows a top-level one (hence ``TableIndex``). `Query` does not collide. This file compiles
/// only while that holds.
@Suite struct FoundationNamesTests {
    @Test func queryModelNamesNeedNoModulePrefixBesideFoundation() throws {
        let filter: FilterExpression = try ODataParser.filter("complete eq false")
        let index = TableIndex("byComplete", on: ["complete"])
        let schema = TableSchema("todoitem", columns: [Column("complete", .bool)], indexes: [index])
        let query = Query(table: schema.name, filter: filter)
        #expect(throws: Never.self) { try query.validate(against: schema) }
        #expect(try ODataParser.filter(ODataPrinter.filter(filter)) == filter)
        #expect(URL(string: "https://example.com/tables/\(schema.name)") != nil)
    }
}
