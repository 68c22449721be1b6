import Foundation
import OfflineSync
import OfflineSyncTestSupport
import Testing

/// The `$filter` forms the Azure clients send, through the reference server: accepted, and
/// answered with the rows the reference evaluator selects.
@Suite("TableServer filters")
struct ServerFilterTests {
    static let orders = TableSchema(
        "orders",
        columns: [
            Column("text", .string), Column("quantity", .integer), Column("price", .double), Column("due", .date),
        ])

    static let items: [Item] = [
        Item(
            id: "a",
            values: ["text": "Alice", "quantity": 3, "price": 2.5, "due": .date(Timestamp(millisecondsSince1970: 0))]),
        Item(id: "b", values: ["text": " al ", "quantity": -7, "price": -2.5]),
        Item(id: "c", values: ["text": "😀Al", "quantity": 0, "price": 0.49999999999999994]),
        Item(id: "d", values: ["quantity": .int(.max), "due": .date(Timestamp(millisecondsSince1970: 45_296_789))]),
    ]

    static let filters = [
        "(indexof(text,'Al') eq 0)", "substringof('Al',text)", "(substring(text,1,2) eq 'Al')",
        "(trim(text) eq 'al')", "(concat(text,'!') eq 'Alice!')", "(replace(text,'l','L') eq 'ALice')",
        "(round(price) eq 3.0)", "(round(price) eq -3.0)", "(floor(price) eq 0.0)", "(ceiling(price) eq -2.0)",
        "((quantity mod 2) eq -1)", "((quantity div 0) eq null)", "((quantity add 1) gt 9223372036854775807L)",
        "(-quantity eq 7)", "((quantity mul 2) sub 1 eq 5)", "(hour(due) eq 12)", "(minute(due) eq 34)",
        "(second(due) eq 56)", "(length(text) eq 3)", "not(substringof('a',tolower(text)))",
    ]

    @Test("every client filter form is answered with the reference evaluator's rows")
    func clientFilterForms() async throws {
        try await withTableServer(tables: [Self.orders]) { port in
            for item in Self.items {
                let body = try JSONCodec.encode(item)
                let answer = try await send(
                    "POST", "/tables/orders", port: port, headers: ServerBehaviourTests.json, body: body)
                #expect(answer.status == 201, "insert \(item.id)")
            }
            for filter in Self.filters {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let answer = try await send(
                    "GET", "/tables/orders?$filter=\(encoded)&$orderby=id", port: port,
                    headers: ServerBehaviourTests.api)
                #expect(answer.status == 200, "\(filter): \(String(decoding: answer.body, as: UTF8.self))")
                let ids = ((answer.json as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
                let expected = try QueryEvaluator(
                    query: Query(table: "orders", filter: try ODataParser.filter(filter), orderBy: [SortKey("id")]),
                    schema: Self.orders
                ).run(over: Self.items).items.map(\.id)
                #expect(!expected.isEmpty, "\(filter) selects no row of the fixture")
                #expect(ids == expected, "\(filter)")
            }
        }
    }

    @Test("a replace whose replacement is not a short literal is a 400 saying so")
    func replaceWithAColumnReplacement() async throws {
        try await withTableServer(tables: [Self.orders]) { port in
            let filter = "replace(text,'a',text) eq 'b'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let answer = try await send(
                "GET", "/tables/orders?$filter=\(filter)", port: port, headers: ServerBehaviourTests.api)
            #expect(answer.status == 400)
            let error = ((answer.json as? [String: Any])?["error"] as? String) ?? ""
            #expect(error.contains("third argument of replace must be a string literal"), "\(error)")
        }
    }
}
