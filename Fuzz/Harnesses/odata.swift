// libFuzzer harness: the OData `$filter`, `$orderby` and `$select` parsers, and the evaluation of
// every filter that parses against a few items of a table with a column of each type.
// Built by `scripts/fuzz odata SECONDS` together with the sources of the OfflineSync module.

let fuzzTable = TableSchema(
    "fuzz",
    columns: [
        Column("text", .string), Column("flag", .bool), Column("count", .integer), Column("score", .double),
        Column("due", .date), Column("data", .json),
    ])

let fuzzItems = [
    Item(id: "a", values: ["text": .string("milk"), "flag": .bool(true), "count": .int(3), "score": .double(-0.5)]),
    Item(
        id: "b",
        values: [
            "text": .string("Zoë \u{0}"), "count": .int(Int64.min), "score": .double(.nan),
            "due": .date(Timestamp(millisecondsSince1970: 0)), "data": .json("[1,2]"),
        ]),
    Item(id: "c", values: ["count": .int(Int64.max), "score": .double(.infinity)]),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOData(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let filter = try? ODataParser.filter(text) {
        _ = ODataPrinter.filter(filter)
        if let evaluator = try? QueryEvaluator(query: Query(table: "fuzz", filter: filter), schema: fuzzTable) {
            _ = evaluator.run(over: fuzzItems)
        }
    }
    if let keys = try? ODataParser.orderBy(text),
        let evaluator = try? QueryEvaluator(query: Query(table: "fuzz", orderBy: keys), schema: fuzzTable)
    {
        _ = evaluator.run(over: fuzzItems)
    }
    _ = try? ODataParser.select(text)
    return 0
}
