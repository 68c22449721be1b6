import Testing

@testable import OfflineSync
@testable import OfflineSyncConformance

/// Random expressions over the whole syntax the printer can produce.
struct ExpressionGenerator {
    var random: SeededRandom

    static let columns = ["id", "text", "Text", "complete", "priority", "_score", "updatedAt", "year", "x1", "a_b_c"]
    static let characters: [String] = [
        "a", "Z", "0", " ", "'", "''", "'\u{301}", "é", "e\u{301}", "👋🏽", "中", "\u{0}",
        "\n", "(", ")", ",", "eq", "\\", "%", "\u{FFFF}", "\u{10FFFF}",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    mutating func value() -> Value {
        switch int(0...9) {
        case 0: return .null
        case 1: return .bool(int(0...1) == 1)
        case 2: return .int([Int64.min, .max, 0, -1].randomElement(using: &random)!)
        case 3: return .int(Int64.random(in: .min ... .max, using: &random))
        case 4:
            return .double(
                [
                    0.1, -0.0, 0.0, Double.leastNonzeroMagnitude, -1.7976931348623157e308, 1e16, 1e-5, 123456789.125,
                    .nan, .infinity, -.infinity,
                ]
                .randomElement(using: &random)!)
        case 5:
            var double = Double(bitPattern: random.next())
            while !double.isFinite { double = Double(bitPattern: random.next()) }
            return .double(double)
        case 6, 7:
            return .string((0..<int(0...6)).map { _ in Self.characters.randomElement(using: &random)! }.joined())
        default:
            let range = Timestamp.minimum.millisecondsSince1970...Timestamp.maximum.millisecondsSince1970
            return .date(Timestamp(millisecondsSince1970: Int64.random(in: range, using: &random)))
        }
    }

    mutating func expression(depth: Int) -> FilterExpression {
        if depth <= 1 || int(0...4) == 0 {
            return int(0...1) == 0 ? .literal(value()) : .column(Self.columns.randomElement(using: &random)!)
        }
        switch int(0...8) {
        case 0: return .not(expression(depth: depth - 1))
        case 1: return .and(expression(depth: depth - 1), expression(depth: depth - 1))
        case 2: return .or(expression(depth: depth - 1), expression(depth: depth - 1))
        case 3, 4:
            return .comparison(
                expression(depth: depth - 1), ComparisonOperator.allCases.randomElement(using: &random)!,
                expression(depth: depth - 1))
        case 5: return .isIn(expression(depth: depth - 1), (0..<int(0...4)).map { _ in value() })
        case 6:
            return .arithmetic(
                expression(depth: depth - 1), ArithmeticOperator.allCases.randomElement(using: &random)!,
                expression(depth: depth - 1))
        case 7: return .negate(expression(depth: depth - 1))
        default:
            let function = Function.allCases.randomElement(using: &random)!
            let arity = int(function.arity.lowerBound...function.arity.upperBound)
            return .function(function, (0..<arity).map { _ in expression(depth: depth - 1) })
        }
    }
}

@Suite struct ODataRoundTripTests {
    @Test(arguments: [ODataPrinter.Dialect.v4, .v3])
    func parsingPrintedExpressionsGivesThemBack(_ dialect: ODataPrinter.Dialect) throws {
        var generator = ExpressionGenerator(random: SeededRandom(seed: 20_261_122))
        for _ in 0..<600 {
            let expression = generator.expression(depth: 6)
            let text = ODataPrinter.filter(expression, dialect: dialect)
            let parsed = try ODataParser.filter(text)
            #expect(parsed == (dialect == .v3 ? Self.negationsAsSubtractions(expression) : expression), "\(text)")
        }
    }

    /// `expression` with every unary minus written as `0 sub x`, as the v3 dialect prints it.
    static func negationsAsSubtractions(_ expression: FilterExpression) -> FilterExpression {
        let rewrite = negationsAsSubtractions
        switch expression {
        case .literal, .column: return expression
        case .not(let operand): return .not(rewrite(operand))
        case .and(let lhs, let rhs): return .and(rewrite(lhs), rewrite(rhs))
        case .or(let lhs, let rhs): return .or(rewrite(lhs), rewrite(rhs))
        case .comparison(let lhs, let op, let rhs): return .comparison(rewrite(lhs), op, rewrite(rhs))
        case .isIn(let operand, let values): return .isIn(rewrite(operand), values)
        case .function(let function, let arguments): return .function(function, arguments.map(rewrite))
        case .arithmetic(let lhs, let op, let rhs): return .arithmetic(rewrite(lhs), op, rewrite(rhs))
        case .negate(let operand): return .arithmetic(.literal(0), .sub, rewrite(operand))
        }
    }

    @Test func theV3DialectPrintsUnaryMinusAsTheJavaScriptClientDoes() throws {
        let expression = FilterExpression.comparison(.negate(.column("price")), .lt, .literal(0))
        #expect(ODataPrinter.filter(expression, dialect: .v3) == "((0 sub price) lt 0)")
        #expect(ODataPrinter.filter(expression) == "((-(price)) lt 0)")
        let item = Item(id: "a", values: ["price": 2.5])
        let v3 = try ODataParser.filter(ODataPrinter.filter(expression, dialect: .v3))
        #expect(QueryEvaluator.evaluate(v3, on: item) == QueryEvaluator.evaluate(expression, on: item))
    }

    @Test func printsNotInParenthesesSoItCanBeAnOperand() throws {
        let expression = FilterExpression.comparison(.not(.column("a")), .eq, .isIn(.not(.literal(true)), [nil]))
        #expect(ODataPrinter.filter(expression) == "((not a) eq ((not true) in (null)))")
        #expect(try ODataParser.filter(ODataPrinter.filter(expression)) == expression)
    }

    @Test func printedOrderByReadsBack() throws {
        let keys = [SortKey("priority", descending: true), SortKey("text"), SortKey("id", descending: true)]
        #expect(try ODataParser.orderBy(ODataPrinter.orderBy(keys)) == keys)
    }

    @Test func quotesFollowedByCombiningMarksAreDoubled() throws {
        let text = "'\u{301}x"
        #expect(ODataPrinter.literal(.string(text)) == "'''\u{301}x'")
        #expect(try ODataParser.filter(ODataPrinter.literal(.string(text))) == .literal(.string(text)))
    }

    @Test func jsonLiteralsReadBackAsEqualStrings() throws {
        let parsed = try ODataParser.filter(ODataPrinter.filter(.literal(.json("[1,'a']"))))
        #expect(parsed == .literal(.string("[1,'a']")))
        #expect(ValueSemantics.equal(.json("[1,'a']"), .string("[1,'a']")))
    }

    @Test func printedQueriesOfTheWireReadBackAsQueries() throws {
        let query = Query(
            table: "todoitem", filter: .comparison(.column("updatedAt"), .ge, .literal(.date(.epoch))),
            orderBy: [SortKey("updatedAt")], skip: 50, top: 50, includeTotalCount: true)
        let parsed = try ODataParser.query(
            table: query.table, filter: ODataPrinter.filter(query.filter!),
            orderBy: ODataPrinter.orderBy(query.orderBy), skip: "50", top: "50", inlineCount: "allpages")
        #expect(parsed == query)
    }
}

@Suite struct ODataFuzzTests {
    /// Parses text that may be anything; only a result or a syntax error is acceptable.
    private func parseAnything(_ text: String) {
        do {
            _ = try ODataParser.filter(text)
            _ = try? ODataParser.orderBy(text)
            _ = try? ODataParser.select(text)
        } catch let error as OfflineSyncError {
            #expect(error.code == .syntax, "\(text): \(error)")
            #expect(error.position != nil, "\(text): \(error)")
        } catch {
            Issue.record("\(text): unexpected \(error)")
        }
    }

    @Test func randomTokenSoupOnlyParsesOrFailsWithSyntaxErrors() {
        var random = SeededRandom(seed: 7)
        let pieces = [
            "(", ")", ",", " ", "'", "''", "a", "eq", "and", "or", "not", "in", "null", "true", "1", "-", "1.5", "e",
            "1e", ".", "startswith", "substringof", "year", "datetime", "datetimeoffset", "'2026-01-02T03:04:05Z'",
            "2026-01-02", "T", "Z", ":", "+", "INF", "NaN", "é", "👋", "\u{0}", "\t", "L", "d", "9223372036854775808",
            "/", "\"",
        ]
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            parseAnything(text)
        }
    }

    @Test func truncatedAndMutatedFiltersOnlyParseOrFailWithSyntaxErrors() {
        var generator = ExpressionGenerator(random: SeededRandom(seed: 99))
        var random = SeededRandom(seed: 100)
        for _ in 0..<150 {
            let text = ODataPrinter.filter(generator.expression(depth: 4))
            var scalars = Array(text.unicodeScalars)
            for length in stride(from: 0, to: scalars.count, by: max(1, scalars.count / 12)) {
                parseAnything(String(String.UnicodeScalarView(scalars[..<length])))
            }
            for _ in 0..<10 where !scalars.isEmpty {
                let index = Int.random(in: 0..<scalars.count, using: &random)
                scalars[index] = Unicode.Scalar(UInt8.random(in: 32...126, using: &random))
                parseAnything(String(String.UnicodeScalarView(scalars)))
            }
        }
    }
}
