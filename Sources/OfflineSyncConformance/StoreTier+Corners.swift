import OfflineSync

extension StoreTierGroups {
    /// Every sentence of `ValueSemantics` and of the filter-language article that a store can get
    /// wrong, each checked by filters (written as the OData text a client sends where the text
    /// can say it) over rows at that sentence's corners, compared with the reference evaluator,
    /// and the rows looked up byte for byte. The codes are the coverage matrix's.
    static let cornerCases: [ConformanceCase] = [
        ConformanceCase(Corners.caseName) { context in
            let store = try context.openStore(StoreSchema([Corners.table]))
            let rows = Corners.rows()
            try store.upsert(rows, into: Corners.table.name)
            for row in rows {
                context.expectLookup(store, Corners.table.name, row.id, row, "upsert of the corner rows")
            }
            for (code, filters) in Corners.filters() {
                for filter in filters {
                    let query: Query
                    switch filter {
                    case .text(let text):
                        guard
                            let parsed = context.attempt(
                                "\(code): ODataParser.filter(\(text))", { try ODataParser.filter(text) })
                        else { continue }
                        query = Query(table: Corners.table.name, filter: parsed, selection: ["i"])
                    case .expression(let expression):
                        query = Query(table: Corners.table.name, filter: expression, selection: ["i"])
                    case .ordering(let text):
                        guard
                            let keys = context.attempt(
                                "\(code): ODataParser.orderBy(\(text))", { try ODataParser.orderBy(text) })
                        else { continue }
                        query = Query(table: Corners.table.name, orderBy: keys, selection: ["i"])
                    }
                    let stored = rows.compactMap { try? Corners.table.normalize($0, origin: .local) }
                    if let difference = Reference.difference(
                        query, rows: stored, schema: Corners.table, answer: { try store.read(query) })
                    {
                        context.fail(
                            "\(code): read(\(Corners.table.name)) \(RandomText.clipped(query.description, limit: 200)): \(difference)"
                        )
                    }
                }
            }
        }
    ]
}

/// The rows and filters of the corners case, grouped by the sentence each checks.
enum Corners {
    static let caseName =
        "every documented corner of ValueSemantics and the filter language agrees with the reference evaluator"

    static let table = TableSchema(
        "corners",
        columns: [
            Column("i", .integer), Column("d", .double), Column("s", .string), Column("t", .date), Column("j", .json),
            Column("b", .bool), Column("z", .integer),
        ],
        indexes: [
            TableIndex("corners_i", on: ["i"]), TableIndex("corners_d", on: ["d"]), TableIndex("corners_s", on: ["s"]),
            TableIndex("corners_t", on: ["t"]),
        ], synced: false)

    /// A filter as OData text, as a built expression (for values text cannot carry), or an ordering.
    enum Filter {
        case text(String)
        case expression(FilterExpression)
        case ordering(String)
    }

    static func rows() -> [Item] {
        let integers: [Int64] = [
            .min, .min + 1, -7, -1, 0, 1, 2, 7, .max, 9_007_199_254_740_993, -9_007_199_254_740_993,
        ]
        let doubles: [Double] = [
            -0.0, 0.0, 0.5, -0.4, 2.5, -2.5, 5.5, -5.5, 1.5, .leastNonzeroMagnitude, 1e300, -1e300,
            9_223_372_036_854_775_808.0, 9_007_199_254_740_992.0,
        ]
        var strings: [String] = [
            "007", "7", "1e3", "1000", "1.0", "1", "-0", "0", " 1", "1 ", "+5", "0x10", "NaN", "\u{663}",
            "\u{DF}", "\u{C9}", "\u{E9}", "e\u{301}", "\u{130}", "\u{131}", "\u{212A}", "\u{1C5}", "aBc", "ABC", "abc",
            "😀", "😀a", "a😀b", "", "a\u{0}", "a", "Z", "\u{10FFFF}", "[1,2]", "%", "_", "a%c", "abcdef",
        ]
        strings += QueryEvaluator.whiteSpace.sorted { $0.value < $1.value }.map { String($0) + "x" + String($0) }
        let dates: [Int64] = [
            -1, 0, 1, -86_400_000, -86_400_001, -62_135_596_800_000, 253_402_300_799_999, 951_782_400_000,
            1_767_225_600_123,
        ]
        let json = ["[1,2]", "[1, 2]", "{\"a\":1}", "[\"\\/\"]", "[]"]
        let count = max(strings.count, integers.count + doubles.count)
        return (0..<count).map { position in
            var item = Item(id: "c\(position)")
            if position % 9 != 8 { item["i"] = .int(integers[position % integers.count]) }
            if position % 7 != 6 { item["d"] = .double(doubles[position % doubles.count]) }
            if position < strings.count { item["s"] = .string(strings[position]) }
            if position % 5 != 4 { item["t"] = .date(Timestamp(millisecondsSince1970: dates[position % dates.count])) }
            if position % 3 == 0 { item["j"] = .json(json[position % json.count]) }
            if position % 4 != 3 { item["b"] = .bool(position % 2 == 0) }
            item["z"] = .int(Int64([0, 0, 1, -1, 2][position % 5]))
            return item
        }
    }

    /// The filters of each sentence, by code (`VS` ValueSemantics' comparison and ordering, `AR`
    /// its arithmetic, `FL` the filter-language article).
    static func filters() -> [(String, [Filter])] {
        return [
            (
                "VS1 null equals only null",
                [.text("i eq null"), .text("i ne null"), .text("s eq null"), .text("null eq null"), .text("d eq i")]
            ),
            (
                "VS2 integers and doubles compare numerically, -0.0 equals 0",
                [
                    .text("d eq 0"), .text("d eq -0.0"), .text("i eq 0.0"), .text("i eq 2.0"), .text("d in (0, 2)"),
                    .text("i lt 0.5"),
                    .text("d eq i"), .text("d ge i"),
                ]
            ),
            (
                "VS3 strings compare by UTF-8 bytes, not by canonical equivalence or letter case",
                [
                    .text("s eq 'é'"), .text("s eq 'e\u{301}'"), .text("s gt 'Z'"), .text("s lt 'a'"),
                    .text("s ge 'É'"),
                    .text("s eq 'abc'"), .text("s gt 'a'"), .ordering("s"), .ordering("s desc"),
                ]
            ),
            (
                "VS4 a string equals a JSON value with the same text",
                [.text("j eq '[1,2]'"), .text("j eq s"), .text("j gt '[1,'"), .ordering("j")]
            ),
            (
                "VS5 ordering: null first, false before true, numbers, strings by bytes, dates",
                [
                    .ordering("b"), .ordering("b desc, i"), .ordering("i"), .ordering("d desc"), .ordering("t"),
                    .ordering("t desc, s"),
                ]
            ),
            (
                "VS6 an integer compares exactly with a double, large integers unrounded",
                [
                    .text("i gt 9007199254740992.0"), .text("i eq 9007199254740992.0"),
                    .text("i lt -9007199254740992.0"),
                    .text("i eq 9223372036854775807.0"), .text("i lt 9223372036854775808.0"),
                    .text("i ge -9223372036854775808.0"),
                    .text("i gt -7.5"), .text("i le 1e300"), .text("d gt i"),
                ]
            ),
            (
                "VS7 byte order: U+0000 counts, U+10FFFF after the BMP, a prefix before its extensions",
                [
                    .text("s gt 'a'"), .text("s lt '\u{10FFFF}'"),
                    .expression(.comparison(.column("s"), .gt, .literal("a\u{0}"))),
                    .expression(.comparison(.column("s"), .eq, .literal("a\u{0}"))),
                ]
            ),
            (
                "VS8 numeric-looking strings are strings: compared and kept byte for byte",
                [
                    .text("s eq '007'"), .text("s eq '7'"), .text("s eq '1e3'"), .text("s eq '1000'"),
                    .text("s gt '10'"),
                    .text("s lt '9'"), .text("s eq '-0'"), .text("s eq '0'"), .text("s in ('1', '1.0', ' 1')"),
                    .text("length(s) eq 3"),
                ]
            ),
            (
                "AR1 a null operand gives null",
                [
                    .text("(i add null) eq null"), .text("(i add null) ne null"), .text("(i mul d) eq null"),
                    .text("-(i) eq null"),
                ]
            ),
            (
                "AR2 integer div truncates toward zero, mod keeps the dividend's sign",
                [
                    .text("(i div 2) eq -3"), .text("(i mod 2) eq -1"), .text("(i mod -2) eq 1"),
                    .text("(i div -2) eq 3"), .text("(i div 2) lt -3.2"),
                    .text("(i div z) eq -7"), .text("(i mod z) eq 0"),
                ]
            ),
            (
                "AR3 an integer result outside Int64 goes on as the double of the same operation",
                [
                    .text("(i add 1) gt 9223372036854775807"), .text("(i sub 1) lt -9223372036854775808"),
                    .text("(i mul 2) gt 1e18"),
                    .text("(i div -1) eq 9223372036854775808.0"), .text("(i div -1) gt 0"),
                    .text("(i mul -1) eq 9223372036854775808.0"),
                    .text("(-9223372036854775808 div -1) eq 9223372036854775808.0"), .text("(i div z) gt 9e18"),
                ]
            ),
            (
                "AR4 the most negative integer mod -1 is 0",
                [.text("(i mod -1) eq 0"), .text("(-9223372036854775808 mod -1) eq 0"), .text("(i mod z) eq 0")]
            ),
            (
                "AR5 with a double operand IEEE 754 arithmetic; mod is the truncated remainder; infinities stay",
                [
                    .text("(d mod 2) eq 1.5"), .text("(d mod 2) eq -1.5"), .text("(d mod -2) eq 1.5"),
                    .text("(d mul 1e300) gt 1e308"),
                    .text("(d mul 1e300) lt -1e308"), .text("(i add 0.5) eq 7.5"), .text("(d div 3) gt 0.16"),
                    .text("(i mul 1.0) eq 9223372036854775807"),
                ]
            ),
            (
                "AR6 division or remainder by 0, 0.0 or -0.0 is null",
                [
                    .text("(i div 0) eq null"), .text("(i mod 0) eq null"), .text("(d div 0.0) eq null"),
                    .text("(d div -0.0) eq null"),
                    .text("(d div -0.0) lt 0"), .text("(i div -0.0) gt 0"), .text("(i mod -0.0) eq null"),
                    .text("(i div z) eq null"),
                    .text("(i div z) gt 1"), .text("(d mod z) eq null"),
                ]
            ),
            (
                "AR7 a result that is not a number is null",
                [
                    .text("((d mul 1e300) sub (d mul 1e300)) eq null"), .text("((d mul 1e300) mul 0) eq null"),
                    .text("((d mul 1e300) div (d mul 1e300)) ne null"),
                ]
            ),
            (
                "AR8 unary minus is 0 sub the value",
                [
                    .text("-i eq 9223372036854775808.0"), .text("-i gt 0"), .text("-d eq 0"), .text("-d lt 0"),
                    .text("-(i sub 1) gt 0"),
                    .expression(.comparison(.negate(.column("d")), .eq, .literal(.double(-0.0)))),
                ]
            ),
            (
                "AR9 round, floor and ceiling: integers as they are, halves away from zero",
                [
                    .text("round(d) eq 3"), .text("round(d) eq -3"), .text("round(d) eq 0"), .text("round(d) eq -6"),
                    .text("floor(d) eq -3"),
                    .text("ceiling(d) eq -2"), .text("ceiling(d) eq 0"), .text("round(i) eq i"),
                    .text("round(i) eq 9223372036854775807"),
                    .text("floor(i div 2) eq -4"), .text("ceiling(-0.4) eq 0"),
                ]
            ),
            (
                "FL1 operators bind as the article's table says",
                [
                    .text("not i eq 1"), .text("i add 1 mul 2 eq 5"), .text("i sub 1 sub 1 eq 5"), .text("-i eq 7"),
                    .text("- i eq -7"),
                    .text("i eq 1 or i eq 2 and d eq 0.5"), .text("i in (1, 2, null)"), .text("not (i in (1, 2))"),
                    .text("i mul 2 div 4 eq 1"),
                ]
            ),
            (
                "FL2 contains, substringof (v3 argument order), startswith, endswith match bytes",
                [
                    .text("contains(s, 'bc')"), .text("substringof('bc', s)"), .text("startswith(s, 'a')"),
                    .text("endswith(s, 'x')"),
                    .text("contains(s, '%')"), .text("startswith(s, '_')"), .text("contains(s, '')"),
                    .text("endswith(s, '')"),
                    .text("startswith(s, 'É')"), .text("contains(s, 'e\u{301}')"),
                ]
            ),
            (
                "FL3 indexof is 0-based, -1 when absent, 0 for the empty string; positions in Unicode scalars",
                [
                    .text("indexof(s, 'a') eq 1"), .text("indexof(s, 'b') eq 2"), .text("indexof(s, 'q') eq -1"),
                    .text("indexof(s, '') eq 0"),
                    .text("length(s) eq 1"), .text("length(s) eq 2"), .text("length(s) eq 0"),
                    .text("indexof(s, 'x') eq 1"),
                ]
            ),
            (
                "FL4 substring clamps start and length",
                [
                    .text("substring(s, 1) eq 'bc'"), .text("substring(s, -1) eq 'abc'"),
                    .text("substring(s, 10) eq ''"),
                    .text("substring(s, 1, -1) eq ''"), .text("substring(s, 1, 100) eq 'Bc'"),
                    .text("substring(s, 0, 1) eq '😀'"),
                    .text("substring(s, 1, 1) eq 'a'"), .text("substring(s, 9223372036854775807) eq ''"),
                ]
            ),
            (
                "FL5 tolower and toupper change ASCII letters only",
                [
                    .text("tolower(s) eq 'abc'"), .text("toupper(s) eq 'ABC'"), .text("tolower(s) eq 'é'"),
                    .text("toupper(s) eq 'É'"),
                    .text("toupper(s) eq 'SS'"), .text("toupper(s) eq 'ß'"), .text("tolower(s) eq 'i̇'"),
                    .text("tolower(s) eq 'k'"),
                    .text("toupper(s) eq 'I'"), .text("tolower(s) eq 'ǆ'"), .text("toupper(s) eq 'ǅ'"),
                ]
            ),
            (
                "FL6 trim removes Unicode white space, U+FEFF included",
                [
                    .text("trim(s) eq 'x'"), .text("trim(s) eq s"), .text("length(trim(s)) eq 1"),
                    .text("trim(s) eq ''"),
                    .expression(.comparison(.function(.trim, [.column("s")]), .eq, .literal("\u{FEFF}x\u{FEFF}"))),
                    .expression(
                        .comparison(
                            .function(.concat, [.function(.trim, [.column("s")]), .literal("\u{FEFF}")]), .eq,
                            .literal("x\u{FEFF}"))),
                ]
            ),
            (
                "FL7 concat and replace",
                [
                    .text("concat(s, 'x') eq 'abcx'"), .text("concat(concat(s, ', '), s) eq '7, 7'"),
                    .text("concat(s, null) eq null"),
                    .text("replace(s, 'b', 'XX') eq 'aXXc'"), .text("replace(s, '', 'x') eq s"),
                    .text("replace(s, 'x', '') eq ''"),
                    .text("replace(s, '0', 'o') eq 'oo7'"),
                ]
            ),
            (
                "FL8 year, month, day, hour, minute and second are UTC fields, before 1970 too",
                [
                    .text("year(t) eq 1969"), .text("month(t) eq 12"), .text("day(t) eq 31"), .text("hour(t) eq 23"),
                    .text("minute(t) eq 59"),
                    .text("second(t) eq 59"), .text("year(t) eq 1"), .text("year(t) eq 9999"), .text("day(t) eq 29"),
                    .text("second(t) eq 0"),
                ]
            ),
            (
                "FL9 nulls: functions and operators of null are null; eq and ne null-safe; ordering comparisons false; a null condition false",
                [
                    .text("length(s) eq null"), .text("s ne 'a'"), .text("i gt null"), .text("i le null"),
                    .text("not (i gt null)"),
                    .text("b"), .text("not b"), .text("b eq false"), .text("b ne true"),
                    .text("startswith(s, null) eq null"),
                    .text("not startswith(s, null)"),
                ]
            ),
            (
                "FL10 dates compare as instants at millisecond precision, against every date literal form",
                [
                    .text("t gt datetimeoffset'1970-01-01T00:00:00.000Z'"),
                    .text("t eq datetimeoffset'1969-12-31T23:59:59.999Z'"),
                    .text("t lt datetime'1970-01-01T00:00:00.001Z'"), .text("t ge 2000-02-29"),
                    .text("t eq 1970-01-01"),
                    .text("t le datetimeoffset'2025-12-31T23:59:59.999Z'"),
                ]
            ),
        ]
    }
}
