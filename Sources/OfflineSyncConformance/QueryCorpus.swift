import OfflineSync

/// A seeded random table and seeded random queries over it, for comparing a store with the
/// reference evaluator.
///
/// The data is built to hit the corners of the query semantics: about one value in six is null,
/// values repeat (so orderings tie and fall back to `id`), strings mix letter case, precomposed and
/// decomposed accents, SQL wildcard characters and the empty string, numbers include `-0.0`,
/// `Int64` extremes, halves (`2.5`, `-2.5`) and integral doubles, strings include characters
/// outside the BMP, U+0000 and Unicode white space, and dates straddle 1970. Queries use every
/// comparison operator (between columns, literals, or both), `and`/`or`/`not`, null tests, `in`
/// lists (empty ones too), every function (nested, with out-of-range `substring` positions) and
/// arithmetic (division by zero and `Int64` overflow included), with orderings of up to three keys,
/// paging, total counts and selections. ``clientFilters`` adds the exact filter texts the Azure
/// clients send.
struct QueryCorpus {
    /// The corpus table.
    static let table = TableSchema(
        "corpus",
        columns: [
            Column("b", .bool), Column("i", .integer), Column("d", .double), Column("s", .string),
            Column("u", .string), Column("t", .date), Column("j", .json), Column("n", .integer),
        ], synced: false)

    /// The corpus table with indexes on most columns (single and composite), so that a backend
    /// that answers through its indexes (seeks on equalities, `in` lists, ranges and `startswith`
    /// prefixes, index walks that stop early in index order) is compared with the reference too.
    static let indexedTable = TableSchema(
        "corpus_indexed", columns: table.columns,
        indexes: [
            TableIndex("corpus_i", on: ["i"]), TableIndex("corpus_d", on: ["d"]), TableIndex("corpus_s", on: ["s"]),
            TableIndex("corpus_t", on: ["t"]), TableIndex("corpus_b_i", on: ["b", "i"]),
            TableIndex("corpus_u_s", on: ["u", "s"]),
            TableIndex("corpus_j", on: ["j"]), TableIndex("corpus_n_id", on: ["n", "id"]),
        ], synced: false)

    private static let integers: [Int64] = [
        -1000, -42, -3, -2, -1, 0, 1, 2, 3, 7, 42, 1000, .max, .min, 9_007_199_254_740_993, .max - 1, .min + 1,
    ]
    private static let doubles: [Double] = [
        -0.0, 0.0, 0.1, 0.2, 0.3, 0.30000000000000004, -1.5, 1.5, 2.0, 3.0, -3.0,
        42.0, 1e300, -1e300, Double.leastNonzeroMagnitude, 1e-7, 1000.5, 9.223372036854776e18, 2.5, -2.5, -0.5,
        0.49999999999999994, 4_503_599_627_370_497.0, -4_503_599_627_370_497.0,
    ]
    private static let strings: [String] = [
        "", "a", "A", "ab", "Ab", "aB", "AB", "abc", "ABC", "b", "B", "z", "Z",
        "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "\u{E9}", "e\u{301}", "stra\u{DF}e",
        "日本", "😀", "a b", "O'Brien", "%", "_", "a%c", "a_c", "zebra", "Zebra", "apple", "Apple",
        "Alice", "Al", "al", "sALly", " a ", "\t\nab\u{3000}", "\u{A0}", "😀a😀", "a\u{0}b", "\u{0}", "\u{10FFFF}z",
    ]
    private static let alphabet: [String] = [
        "a", "A", "b", "B", "z", "\u{E9}", "e\u{301}", "_", "%", " ", "\u{DF}", "日", "'", "😀", "Al", "\t",
    ]
    private static let jsonTexts: [String] = ["[]", "{}", "[1,2]", "{\"a\":1}", "[\"A\"]", "[\"a\"]", "{\"b\":[null]}"]
    private static let dayMilliseconds: Int64 = 86_400_000
    private static let specialDates: [Int64] = [
        0, -1, 1, 999, -999, -1000, 86_399_999, -86_400_000, -86_400_001,
        951_782_400_000, -58_060_800_000, -62_135_596_800_000, 253_402_300_799_999,
    ]

    private var random: SeededRandom
    /// `concat` calls the current query may still make (a filter allows a few, see
    /// ``OfflineSync/Query/validate(against:)``).
    private var concatBudget = 0

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    // MARK: Data

    /// `count` rows with unique, mixed-case and unicode ids.
    mutating func rows(count: Int) -> [Item] {
        let prefixes = ["r", "R", "\u{E9}", "e\u{301}", "z", "Z", "_", "a b", "A"]
        return (0..<count).map { index in
            var item = Item(id: random.pick(prefixes) + String(index))
            for column in QueryCorpus.table.columns {
                let nullPercent = column.name == "n" ? 70 : 15
                if !random.chance(nullPercent) { item[column.name] = value(of: column.type, column: column.name) }
            }
            return item
        }
    }

    /// A value of `type` drawn from pools that repeat, so comparisons and orderings tie.
    mutating func value(of type: ColumnType, column: String = "") -> Value {
        switch type {
        case .bool: return .bool(random.chance(50))
        case .integer: return .int(column == "n" ? Int64(random.int(in: -5...5)) : random.pick(QueryCorpus.integers))
        case .double:
            return .double(
                random.chance(70) ? random.pick(QueryCorpus.doubles) : Double(random.int(in: -100...100)) / 4)
        case .string: return .string(random.chance(60) ? random.pick(QueryCorpus.strings) : word())
        case .date: return .date(date())
        case .json: return .json(random.pick(QueryCorpus.jsonTexts))
        }
    }

    private mutating func word() -> String {
        (0..<random.int(in: 0...5)).map { _ in random.pick(QueryCorpus.alphabet) }.joined()
    }

    private mutating func date() -> Timestamp {
        if random.chance(30) { return Timestamp(millisecondsSince1970: random.pick(QueryCorpus.specialDates)) }
        let days = Int64(random.int(in: -1100...1100))
        let milliseconds = random.chance(50) ? 0 : Int64(random.int(in: 0...86_399_999))
        return Timestamp(millisecondsSince1970: days * QueryCorpus.dayMilliseconds + milliseconds)
    }

    // MARK: Queries

    /// `$filter` texts in the exact forms the Azure Mobile Apps clients send (the JavaScript
    /// client's translations of `indexOf`, `substring` …, the .NET client's LINQ translation with
    /// its `not(…)`, `L` suffixes and unspaced arguments), written against ``table``.
    static let clientFilters: [String] = [
        "(indexof(s,'Al') eq 0)", "(indexof(s,'a') gt 0)", "(indexof(tolower(s),'al') ne -1)",
        "substringof('a',s)", "substringof('Al',s) or substringof('😀',u)", "not(substringof('a',s))",
        "contains(s,'a')", "startswith(s,'A')", "endswith(s,'e')", "startswith(tolower(s),'al')",
        "(substring(s,1) eq 'l')", "(substring(s,1,2) eq 'li')", "(substring(s,0,1) eq 'A')",
        "(substring(s,-1,2) eq 'a')", "(substring(s,10) eq '')", "(length(substring(s,1)) eq 2)",
        "(trim(s) eq 'a')", "(length(trim(s)) gt 0)", "(concat(s,'x') eq 'ax')", "(concat(concat(s,', '),u) eq 'a, b')",
        "(replace(s,'a','b') eq 'bb')", "(replace(s,'l','') eq 'Aice')", "(tolower(s) eq 'alice')",
        "(toupper(s) eq 'AL')", "(length(s) eq 2)", "(length(s) gt 3)",
        "(year(t) eq 1970)", "(month(t) eq 1)", "(day(t) eq 1)", "(hour(t) eq 0)", "(minute(t) gt 30)",
        "(second(t) le 5)", "(year(t) lt 1970) and (month(t) eq 12)",
        "(round(d) eq 2.0)", "(round(d) eq -3.0)", "(floor(d) eq 1.0)", "(ceiling(d) eq -1.0)", "(round(i) eq 42L)",
        "((i add 1) eq 3)", "((i sub 1) eq 41L)", "((i mul 2) eq 84)", "((i div 2) eq 1)", "((i mod 2) eq 1)",
        "((i mod 2) eq -1)", "((d mod 2.0) eq 1.5)", "((d div 2) gt 0.5)", "((i div 0) eq null)",
        "((d div 0.0) ne null)",
        "((i add d) gt 0)", "(((i add 1) mul 2) gt (n sub -3))", "(-i eq -42)", "(-(d) lt 0.0)",
        "((i add 1) gt 9223372036854775807L)", "((i mul i) gt 1e18)", "((n mul 2) add 1 le 3)",
        "(n add 1 mul 2 eq 5)", "((n sub 1) in (0, 2))", "(i mod n eq 0)", "(i div n lt 0)",
    ]

    /// ``clientFilters`` as queries on ``table``, ordered by `id`.
    static func clientQueries() throws -> [Query] {
        try clientFilters.map { Query(table: table.name, filter: try ODataParser.filter($0)) }
    }

    /// A well-typed query with a random filter, ordering, paging, count and selection.
    mutating func query() -> Query {
        var query = Query(table: QueryCorpus.table.name)
        concatBudget = 6
        if random.chance(90) { query.filter = predicate(depth: random.int(in: 0...3)) }
        let keys = ["id"] + QueryCorpus.table.columns.map(\.name)
        for _ in 0..<random.int(in: 0...3) {
            query.orderBy.append(SortKey(random.pick(keys), descending: random.chance(50)))
        }
        if random.chance(30) { query.skip = random.int(in: 0...40) }
        if random.chance(30) { query.top = random.int(in: 0...30) }
        query.includeTotalCount = random.chance(30)
        if random.chance(15) { query.selection = keys.filter { _ in random.chance(40) } }
        return query
    }

    /// A query on ``indexedTable`` shaped like the ones an index answers: a conjunction of one
    /// to three seekable conditions (`eq`, `in`, a range or `startswith` on an indexed column or
    /// `id`, literals sometimes of the other numeric type or null) and sometimes a random
    /// predicate, ordered by an index's columns (either direction) or at random, often with `top`.
    mutating func plannerQuery() -> Query {
        var query = Query(table: QueryCorpus.indexedTable.name)
        concatBudget = 6
        var conjuncts: [FilterExpression] = (0..<random.int(in: 1...3)).map { _ in seekableCondition() }
        if random.chance(30) { conjuncts.append(predicate(depth: random.int(in: 0...2))) }
        if random.chance(95) { query.filter = conjuncts.dropFirst().reduce(conjuncts[0]) { .and($0, $1) } }
        switch random.int(in: 0...4) {
        case 0: break
        case 1, 2:
            let index = random.pick(QueryCorpus.indexedTable.indexes)
            let descending = random.chance(25)
            query.orderBy = index.columns.map { SortKey($0, descending: descending) }
            if random.chance(30) { query.orderBy.append(SortKey("id", descending: random.chance(20))) }
        default:
            let keys = ["id"] + QueryCorpus.table.columns.map(\.name)
            for _ in 0..<random.int(in: 1...2) {
                query.orderBy.append(SortKey(random.pick(keys), descending: random.chance(40)))
            }
        }
        if random.chance(70) { query.top = random.int(in: 0...25) }
        if random.chance(20) { query.skip = random.int(in: 0...30) }
        query.includeTotalCount = random.chance(20)
        if random.chance(10) { query.selection = ["id", random.pick(QueryCorpus.table.columns).name] }
        return query
    }

    /// One condition an index can seek on: on `id` or an indexed column, an equality, an `in`
    /// list, a bound (either side of the comparison), or a `startswith` prefix.
    private mutating func seekableCondition() -> FilterExpression {
        let columns = QueryCorpus.table.columns.filter { $0.name != "b" } + [Column("id", .string)]
        let column = random.pick(columns)
        let name = FilterExpression.column(column.name)
        switch random.int(in: 0...9) {
        case 0, 1:
            return .comparison(name, .eq, literal(for: column.type, column: column.name))
        case 2:
            return .isIn(
                name, (0..<random.int(in: 0...4)).map { _ in literalValue(for: column.type, column: column.name) })
        case 3, 4, 5:
            let op = random.pick([ComparisonOperator.gt, .ge, .lt, .le])
            return random.chance(80)
                ? .comparison(name, op, literal(for: column.type, column: column.name))
                : .comparison(literal(for: column.type, column: column.name), op, name)
        case 6:
            let low = literalValue(for: column.type, column: column.name)
            let high = literalValue(for: column.type, column: column.name)
            return .and(
                .comparison(name, random.pick([.gt, .ge]), .literal(low)),
                .comparison(name, random.pick([.lt, .le]), .literal(high)))
        default:
            let target = random.pick(["s", "u", "id", "s"])
            let prefix: String
            switch random.int(in: 0...4) {
            case 0: prefix = ""
            case 1: prefix = random.pick(QueryCorpus.strings)
            default:
                prefix =
                    random.pick(QueryCorpus.alphabet) + (random.chance(30) ? random.pick(QueryCorpus.alphabet) : "")
            }
            return .function(.startsWith, [.column(target), .literal(.string(prefix))])
        }
    }

    /// A boolean expression of at most `depth` levels of `and`, `or` and `not`.
    mutating func predicate(depth: Int) -> FilterExpression {
        guard depth > 0, random.chance(70) else { return condition() }
        switch random.int(in: 0...2) {
        case 0: return .and(predicate(depth: depth - 1), predicate(depth: depth - 1))
        case 1: return .or(predicate(depth: depth - 1), predicate(depth: depth - 1))
        default: return .not(predicate(depth: depth - 1))
        }
    }

    private static let stringOperands = ["s", "u", "id"]
    private static let numericOperands = ["i", "d", "n"]

    /// One condition without `and`, `or`, `not` at the top.
    private mutating func condition() -> FilterExpression {
        switch random.int(in: 0...20) {
        case 0, 1:
            let column = random.pick(QueryCorpus.table.columns)
            return comparison(.column(column.name), literal(for: column.type, column: column.name))
        case 2:
            let column = random.pick(QueryCorpus.table.columns)
            return comparison(literal(for: column.type, column: column.name), .column(column.name))
        case 3:
            let pair = random.pick([
                ("i", "d"), ("i", "n"), ("d", "n"), ("s", "u"), ("u", "id"), ("j", "s"), ("b", "b"),
            ])
            return comparison(.column(pair.0), .column(pair.1))
        case 4:
            let function = random.pick([Function.startsWith, .endsWith, .contains])
            let needle: FilterExpression =
                random.chance(80) ? needleLiteral() : .column(random.pick(QueryCorpus.stringOperands))
            return .function(function, [stringExpression(), needle])
        case 5:
            return comparison(stringExpression(), .literal(random.chance(10) ? .null : value(of: .string)))
        case 6:
            return comparison(.function(.length, [stringExpression()]), .literal(.int(Int64(random.int(in: 0...6)))))
        case 7:
            let part = random.pick([Function.year, .month, .day])
            let number: Int64 =
                switch part {
                case .year: Int64(random.pick([1, 1967, 1968, 1969, 1970, 1971, 1972, 9999]))
                case .month: Int64(random.int(in: 1...12))
                default: Int64(random.int(in: 1...31))
                }
            return comparison(.function(part, [.column("t")]), .literal(.int(number)))
        case 8:
            return random.pick([FilterExpression.column("b"), .not(.column("b")), .literal(.bool(random.chance(50)))])
        case 9:
            let column = random.pick(QueryCorpus.table.columns)
            return comparison(.column(column.name), .literal(.null), operators: [.eq, .ne])
        case 10:
            let column = random.pick(QueryCorpus.table.columns + [Column("id", .string)])
            let values = (0..<random.int(in: random.chance(5) ? 0...0 : 1...4)).map { _ in
                literalValue(for: column.type, column: column.name)
            }
            return .isIn(.column(column.name), values)
        case 11:
            let type = random.pick(ColumnType.allCases)
            return comparison(
                .literal(literalValue(for: type, column: "")), .literal(literalValue(for: type, column: "")))
        case 13, 14:
            return comparison(
                stringValue(depth: 2, allowReplace: true),
                random.chance(70) ? .literal(value(of: .string)) : stringValue(depth: 1, allowReplace: false))
        case 15:
            return comparison(
                .function(.indexOf, [stringValue(depth: 1, allowReplace: false), needleLiteral()]),
                .literal(.int(Int64(random.int(in: -1...4)))))
        case 16, 17:
            let right: FilterExpression =
                random.chance(60) ? .literal(numericLiteral()) : number(depth: random.int(in: 0...2))
            return comparison(number(depth: random.int(in: 1...3)), right)
        case 18:
            return .comparison(
                .function(random.pick([Function.round, .floor, .ceiling]), [number(depth: random.int(in: 0...2))]),
                random.pick(ComparisonOperator.allCases), .literal(numericLiteral()))
        case 19:
            let part = random.pick([Function.hour, .minute, .second])
            return comparison(
                .function(part, [.column("t")]), .literal(.int(Int64(random.int(in: 0...59) / (part == .hour ? 2 : 1))))
            )
        case 20:
            return comparison(
                .function(.length, [stringValue(depth: 2, allowReplace: true)]),
                .literal(.int(Int64(random.int(in: 0...6)))))
        default:
            let operand: FilterExpression =
                random.chance(50)
                ? .function(random.pick([Function.year, .month, .day]), [.column("t")])
                : .function(.length, [stringExpression()])
            return .isIn(
                operand,
                (0..<random.int(in: 1...3)).map { _ in .int(Int64(random.int(in: 0...12))) }
                    + (random.chance(20) ? [.null] : []))
        }
    }

    private mutating func comparison(
        _ lhs: FilterExpression, _ rhs: FilterExpression,
        operators: [ComparisonOperator] = ComparisonOperator.allCases
    ) -> FilterExpression {
        .comparison(lhs, random.pick(operators), rhs)
    }

    /// A string operand: a string column, possibly through `tolower` or `toupper`.
    private mutating func stringExpression() -> FilterExpression {
        let column = FilterExpression.column(random.pick(QueryCorpus.stringOperands))
        switch random.int(in: 0...5) {
        case 0: return .function(.toLower, [column])
        case 1: return .function(.toUpper, [column])
        default: return column
        }
    }

    /// A string-valued expression of up to `depth` levels of `trim`, `concat`, `substring` and
    /// (once, outermost, when allowed) `replace` around ``stringExpression()``.
    private mutating func stringValue(depth: Int, allowReplace: Bool) -> FilterExpression {
        guard depth > 0, random.chance(75) else { return stringExpression() }
        switch random.int(in: 0...4) {
        case 0:
            return .function(.trim, [stringValue(depth: depth - 1, allowReplace: false)])
        case 1 where concatBudget > 0:
            concatBudget -= 1
            let other: FilterExpression =
                random.chance(50) ? needleLiteral() : stringValue(depth: depth - 1, allowReplace: false)
            let inner = stringValue(depth: depth - 1, allowReplace: false)
            return .function(.concat, random.chance(50) ? [inner, other] : [other, inner])
        case 2, 3:
            var arguments = [stringValue(depth: depth - 1, allowReplace: false), index()]
            if random.chance(60) { arguments.append(index()) }
            return .function(.substring, arguments)
        default:
            guard allowReplace else { return stringExpression() }
            return .function(
                .replace,
                [
                    stringValue(depth: depth - 1, allowReplace: false), needleLiteral(),
                    .literal(.string(random.pick(["", "x", "😀😀", "Al"]))),
                ])
        }
    }

    /// A position or length for `substring`: mostly small, sometimes negative, huge or null.
    private mutating func index() -> FilterExpression {
        switch random.int(in: 0...9) {
        case 0: return .column(random.pick(["n", "i"]))
        case 1: return .function(.indexOf, [stringExpression(), needleLiteral()])
        case 2: return .literal(random.chance(80) ? .int(random.pick([.max, .min, -1])) : .null)
        default: return .literal(.int(Int64(random.int(in: -1...6))))
        }
    }

    /// A number-valued expression of up to `depth` levels of arithmetic, unary minus, `round`,
    /// `floor` and `ceiling` over the numeric columns, numeric literals, `length` and `indexof`.
    private mutating func number(depth: Int) -> FilterExpression {
        guard depth > 0, random.chance(80) else {
            switch random.int(in: 0...9) {
            case 0...4: return .column(random.pick(QueryCorpus.numericOperands))
            case 5, 6: return .literal(numericLiteral())
            case 7: return .function(.length, [stringExpression()])
            case 8: return .function(.indexOf, [stringExpression(), needleLiteral()])
            default: return .function(random.pick([Function.year, .hour, .second]), [.column("t")])
            }
        }
        switch random.int(in: 0...9) {
        case 0...5:
            return .arithmetic(
                number(depth: depth - 1), random.pick(ArithmeticOperator.allCases), number(depth: depth - 1))
        case 6: return .negate(number(depth: depth - 1))
        default: return .function(random.pick([Function.round, .floor, .ceiling]), [number(depth: depth - 1)])
        }
    }

    /// An integer or double literal from the data's pools, small values and zero favoured.
    private mutating func numericLiteral() -> Value {
        switch random.int(in: 0...9) {
        case 0...3: return .int(Int64(random.int(in: -3...3)))
        case 4, 5: return .int(random.pick(QueryCorpus.integers))
        case 6, 7: return .double(random.pick(QueryCorpus.doubles))
        case 8: return .double(Double(random.int(in: -12...12)) / 4)
        default: return random.chance(50) ? .null : .int(0)
        }
    }

    private mutating func needleLiteral() -> FilterExpression {
        if random.chance(5) { return .literal(.null) }
        return .literal(
            .string(random.chance(50) ? random.pick(QueryCorpus.alphabet) : random.pick(QueryCorpus.strings)))
    }

    private mutating func literal(for type: ColumnType, column: String) -> FilterExpression {
        .literal(literalValue(for: type, column: column))
    }

    /// A literal comparable with a column of `type`: mostly from the data's own pools, sometimes
    /// null, and for numbers sometimes of the other numeric type.
    private mutating func literalValue(for type: ColumnType, column: String) -> Value {
        if random.chance(8) { return .null }
        switch type {
        case .integer where random.chance(25):
            return .double(random.pick(QueryCorpus.doubles + [2.5, -0.5, 9.223372036854775807e18]))
        case .double where random.chance(25):
            return .int(random.pick(QueryCorpus.integers))
        case .json where random.chance(30):
            return .string(random.pick(QueryCorpus.jsonTexts))
        default:
            return value(of: type, column: column)
        }
    }
}
