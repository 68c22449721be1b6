import OfflineSync

/// A seeded random table and seeded random queries over it, for comparing a store with the
/// reference evaluator.
///
/// The data is built to hit the corners of the query semantics: about one value in six is null,
/// values repeat (so orderings tie and fall back to `id`), strings mix letter case, precomposed and
/// decomposed accents, SQL wildcard characters and the empty string, numbers include `-0.0`,
/// `Int64` extremes and integral doubles, and dates straddle 1970. Queries use every comparison
/// operator (between columns, literals, or both), `and`/`or`/`not`, null tests, `in` lists (empty
/// ones too) and every function, with orderings of up to three keys, paging, total counts and
/// selections.
struct QueryCorpus {
    /// The corpus table.
    static let table = TableSchema(
        "corpus",
        columns: [
            Column("b", .bool), Column("i", .integer), Column("d", .double), Column("s", .string),
            Column("u", .string), Column("t", .date), Column("j", .json), Column("n", .integer),
        ], synced: false)

    private static let integers: [Int64] = [
        -1000, -42, -3, -2, -1, 0, 1, 2, 3, 7, 42, 1000, .max, .min, 9_007_199_254_740_993,
    ]
    private static let doubles: [Double] = [
        -0.0, 0.0, 0.1, 0.2, 0.3, 0.30000000000000004, -1.5, 1.5, 2.0, 3.0, -3.0,
        42.0, 1e300, -1e300, Double.leastNonzeroMagnitude, 1e-7, 1000.5, 9.223372036854776e18,
    ]
    private static let strings: [String] = [
        "", "a", "A", "ab", "Ab", "aB", "AB", "abc", "ABC", "b", "B", "z", "Z",
        "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "\u{E9}", "e\u{301}", "stra\u{DF}e",
        "日本", "😀", "a b", "O'Brien", "%", "_", "a%c", "a_c", "zebra", "Zebra", "apple", "Apple",
    ]
    private static let alphabet: [String] = [
        "a", "A", "b", "B", "z", "\u{E9}", "e\u{301}", "_", "%", " ", "\u{DF}", "日", "'",
    ]
    private static let jsonTexts: [String] = ["[]", "{}", "[1,2]", "{\"a\":1}", "[\"A\"]", "[\"a\"]", "{\"b\":[null]}"]
    private static let dayMilliseconds: Int64 = 86_400_000
    private static let specialDates: [Int64] = [
        0, -1, 1, 999, -999, -1000, 86_399_999, -86_400_000, -86_400_001,
        951_782_400_000, -58_060_800_000, -62_135_596_800_000, 253_402_300_799_999,
    ]

    private var random: SeededRandom

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

    /// A well-typed query with a random filter, ordering, paging, count and selection.
    mutating func query() -> Query {
        var query = Query(table: QueryCorpus.table.name)
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

    /// A boolean expression of at most `depth` levels of `and`, `or` and `not`.
    mutating func predicate(depth: Int) -> Expression {
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
    private mutating func condition() -> Expression {
        switch random.int(in: 0...12) {
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
            let needle: Expression =
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
            return random.pick([Expression.column("b"), .not(.column("b")), .literal(.bool(random.chance(50)))])
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
        default:
            let operand: Expression =
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
        _ lhs: Expression, _ rhs: Expression,
        operators: [ComparisonOperator] = ComparisonOperator.allCases
    ) -> Expression {
        .comparison(lhs, random.pick(operators), rhs)
    }

    /// A string operand: a string column, possibly through `tolower` or `toupper`.
    private mutating func stringExpression() -> Expression {
        let column = Expression.column(random.pick(QueryCorpus.stringOperands))
        switch random.int(in: 0...5) {
        case 0: return .function(.toLower, [column])
        case 1: return .function(.toUpper, [column])
        default: return column
        }
    }

    private mutating func needleLiteral() -> Expression {
        if random.chance(5) { return .literal(.null) }
        return .literal(
            .string(random.chance(50) ? random.pick(QueryCorpus.alphabet) : random.pick(QueryCorpus.strings)))
    }

    private mutating func literal(for type: ColumnType, column: String) -> Expression {
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
