import Testing

@testable import OfflineSync

private func parse(_ text: String) throws -> FilterExpression { try ODataParser.filter(text) }

private func column(_ name: String) -> FilterExpression { .column(name) }

private func literal(_ value: Value) -> FilterExpression { .literal(value) }

/// The syntax error a filter text raises.
private func syntaxError(_ text: String) -> OfflineSyncError? {
    do {
        _ = try ODataParser.filter(text)
        return nil
    } catch let error as OfflineSyncError {
        return error
    } catch {
        return nil
    }
}

@Suite struct ODataParserOperatorTests {
    @Test(arguments: ComparisonOperator.allCases)
    func parsesEveryComparisonOperator(_ op: ComparisonOperator) throws {
        #expect(try parse("priority \(op.rawValue) 3") == .comparison(column("priority"), op, literal(.int(3))))
    }

    @Test func parsesAndOrNot() throws {
        #expect(try parse("a and b") == .and(column("a"), column("b")))
        #expect(try parse("a or b") == .or(column("a"), column("b")))
        #expect(try parse("not a") == .not(column("a")))
        #expect(try parse("not not a") == .not(.not(column("a"))))
    }

    @Test func andBindsTighterThanOr() throws {
        #expect(try parse("a or b and c") == .or(column("a"), .and(column("b"), column("c"))))
        #expect(try parse("a and b or c") == .or(.and(column("a"), column("b")), column("c")))
    }

    @Test func notBindsLooserThanComparison() throws {
        #expect(try parse("not a eq b") == .not(.comparison(column("a"), .eq, column("b"))))
        #expect(try parse("not a and b") == .and(.not(column("a")), column("b")))
    }

    @Test func comparisonBindsTighterThanAnd() throws {
        #expect(
            try parse("a eq 1 and b ne 2")
                == .and(
                    .comparison(column("a"), .eq, literal(1)),
                    .comparison(column("b"), .ne, literal(2))))
    }

    @Test func binaryOperatorsAssociateToTheLeft() throws {
        #expect(try parse("a or b or c") == .or(.or(column("a"), column("b")), column("c")))
        #expect(try parse("a and b and c") == .and(.and(column("a"), column("b")), column("c")))
        #expect(try parse("a eq b eq c") == .comparison(.comparison(column("a"), .eq, column("b")), .eq, column("c")))
    }

    @Test func parenthesesOverridePrecedence() throws {
        #expect(try parse("(a or b) and c") == .and(.or(column("a"), column("b")), column("c")))
        #expect(try parse("not (a or b)") == .not(.or(column("a"), column("b"))))
        #expect(try parse("((((a))))") == column("a"))
    }

    @Test func parsesInLists() throws {
        #expect(try parse("text in ('a', 'b')") == .isIn(column("text"), ["a", "b"]))
        #expect(try parse("priority in (1,-2, 3.5, null)") == .isIn(column("priority"), [1, -2, 3.5, nil]))
        #expect(try parse("text in ()") == .isIn(column("text"), []))
    }

    @Test func inBindsTighterThanComparison() throws {
        #expect(try parse("flag eq a in (1)") == .comparison(column("flag"), .eq, .isIn(column("a"), [1])))
    }

    @Test func keywordsAreCaseInsensitive() throws {
        #expect(
            try parse("NOT a EQ 1 AND b Ne NULL Or c In (TRUE, False)")
                == .or(
                    .and(
                        .not(.comparison(column("a"), .eq, literal(1))), .comparison(column("b"), .ne, literal(.null))),
                    .isIn(column("c"), [true, false])))
    }

    @Test func columnNamesAreCaseSensitive() throws {
        #expect(try parse("Text eq 'x'") == .comparison(column("Text"), .eq, literal("x")))
    }

    @Test func toleratesTabsAndNewlines() throws {
        #expect(try parse("\ta\neq\r\n1 ") == .comparison(column("a"), .eq, literal(1)))
    }
}

@Suite struct ODataParserFunctionTests {
    @Test(arguments: [Function.startsWith, .endsWith, .contains])
    func parsesTwoArgumentStringFunctions(_ function: Function) throws {
        #expect(try parse("\(function.rawValue)(text, 'ab')") == .function(function, [column("text"), literal("ab")]))
    }

    @Test(arguments: [Function.toLower, .toUpper, .length, .year, .month, .day])
    func parsesOneArgumentFunctions(_ function: Function) throws {
        #expect(
            try parse("\(function.rawValue)(value) eq 1")
                == .comparison(.function(function, [column("value")]), .eq, literal(1)))
    }

    @Test func substringofReadsAsContainsWithSwappedArguments() throws {
        #expect(try parse("substringof('needle', text)") == .function(.contains, [column("text"), literal("needle")]))
    }

    @Test func functionNamesAreCaseInsensitive() throws {
        #expect(
            try parse("StartsWith(text, 'a') and SubStringOf('b', text) and ToLower(text) eq 'c'")
                == .and(
                    .and(
                        .function(.startsWith, [column("text"), literal("a")]),
                        .function(.contains, [column("text"), literal("b")])),
                    .comparison(.function(.toLower, [column("text")]), .eq, literal("c"))))
    }

    @Test func functionsNest() throws {
        #expect(
            try parse("length(tolower(toupper(text))) gt 2")
                == .comparison(
                    .function(.length, [.function(.toLower, [.function(.toUpper, [column("text")])])]), .gt, literal(2))
        )
    }

    @Test func allowsSpaceBeforeTheArgumentList() throws {
        #expect(try parse("year (due) eq 2026") == .comparison(.function(.year, [column("due")]), .eq, literal(2026)))
    }

    @Test func functionNamesWithoutParenthesesAreColumns() throws {
        #expect(try parse("year eq 2026") == .comparison(column("year"), .eq, literal(2026)))
    }

    @Test func rejectsAWrongNumberOfArguments() {
        let error = syntaxError("text eq 'a' and startswith(text)")
        #expect(error?.position == 17)
        #expect(error?.message.contains("startswith takes 2 arguments, not 1") == true)
        #expect(syntaxError("length()")?.message.contains("length takes 1 argument, not 0") == true)
    }

    @Test func rejectsUnknownFunctions() {
        let error = syntaxError("soundex(text) eq 'a'")
        #expect(error?.position == 1)
        #expect(error?.message.contains("unknown function 'soundex'") == true)
    }
}

@Suite struct ODataParserLiteralTests {
    @Test func parsesNullAndBooleans() throws {
        #expect(try parse("a eq null") == .comparison(column("a"), .eq, literal(.null)))
        #expect(try parse("true") == literal(true))
        #expect(try parse("false") == literal(false))
    }

    @Test func parsesIntegersIncludingTheExtremes() throws {
        #expect(try parse("0") == literal(0))
        #expect(try parse("-42") == literal(-42))
        #expect(try parse("9223372036854775807") == literal(.int(.max)))
        #expect(try parse("-9223372036854775808") == literal(.int(.min)))
        #expect(try parse("12L") == literal(12))
    }

    @Test func rejectsIntegersBeyond64Bits() {
        let error = syntaxError("a eq 9223372036854775808")
        #expect(error?.position == 6)
        #expect(error?.message.contains("does not fit in 64 bits") == true)
        #expect(syntaxError("-9223372036854775809") != nil)
    }

    @Test func parsesDoubles() throws {
        #expect(try parse("1.5") == literal(.double(1.5)))
        #expect(try parse("-0.0") == literal(.double(-0.0)))
        #expect(try parse("1e10") == literal(.double(1e10)))
        #expect(try parse("1.5E-3") == literal(.double(1.5e-3)))
        #expect(try parse("1e+16") == literal(.double(1e16)))
        #expect(try parse("5e-324") == literal(.double(.leastNonzeroMagnitude)))
        #expect(try parse("0.1") == literal(.double(0.1)))
    }

    @Test func parsesODataNumberSuffixesAsDoubles() throws {
        #expect(try parse("1.5d") == literal(.double(1.5)))
        #expect(try parse("2D") == literal(.double(2)))
        #expect(try parse("1.25m") == literal(.double(1.25)))
        #expect(try parse("3M") == literal(.double(3)))
        #expect(try parse("0.5f") == literal(.double(0.5)))
    }

    @Test func parsesNonFiniteDoubles() throws {
        #expect(try parse("INF") == literal(.double(.infinity)))
        #expect(try parse("-INF") == literal(.double(-.infinity)))
        #expect(try parse("NaN") == literal(.double(.nan)))
    }

    @Test func rejectsMalformedNumbers() {
        #expect(syntaxError("a eq 1.")?.position == 6)
        #expect(syntaxError("a eq 1e")?.position == 6)
        #expect(syntaxError("a eq 12ab")?.message.contains("malformed number '12ab'") == true)
        #expect(syntaxError("a eq 1.5L") != nil)
        #expect(syntaxError("a eq 1e999")?.message.contains("out of the range of a double") == true)
        #expect(syntaxError("a eq -")?.position == 7)
    }

    @Test func parsesStringsWithDoubledQuotes() throws {
        #expect(try parse("name eq 'O''Brien'") == .comparison(column("name"), .eq, literal("O'Brien")))
        #expect(try parse("''") == literal(""))
        #expect(try parse("''''") == literal("'"))
        #expect(try parse("'a''''b'") == literal("a''b"))
    }

    @Test func stringsKeepUnicodeAndOperatorsVerbatim() throws {
        #expect(try parse("'héllo 👋🏽 and or ( ) , eq'") == literal("héllo 👋🏽 and or ( ) , eq"))
    }

    @Test func rejectsUnterminatedStrings() {
        let error = syntaxError("name eq 'O''Brien")
        #expect(error?.position == 9)
        #expect(error?.message.contains("unterminated string") == true)
    }

    @Test func parsesDatetimeoffsetLiterals() throws {
        let date = Timestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, millisecond: 678)!
        #expect(
            try parse("updatedAt ge datetimeoffset'2026-01-02T03:04:05.678Z'")
                == .comparison(column("updatedAt"), .ge, literal(.date(date))))
        #expect(try parse("DateTimeOffset'2026-01-02T05:04:05.678+02:00'") == literal(.date(date)))
    }

    @Test func parsesV3DatetimeWithoutZoneAsUTC() throws {
        let date = Timestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5)!
        #expect(try parse("datetime'2026-01-02T03:04:05'") == literal(.date(date)))
        #expect(try parse("datetime'2026-01-02T03:04:05Z'") == literal(.date(date)))
    }

    @Test func parsesBareISO8601DatesAsV4Literals() throws {
        let date = Timestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, millisecond: 678)!
        #expect(
            try parse("updatedAt lt 2026-01-02T03:04:05.678Z")
                == .comparison(column("updatedAt"), .lt, literal(.date(date))))
        #expect(try parse("(2026-01-02T04:04:05.678+01:00)") == literal(.date(date)))
        #expect(try parse("2026-01-02") == literal(.date(Timestamp(year: 2026, month: 1, day: 2)!)))
    }

    @Test func parsesDatesBefore1970() throws {
        #expect(
            try parse("datetimeoffset'1969-12-31T23:59:59.999Z'")
                == literal(.date(Timestamp(millisecondsSince1970: -1))))
    }

    @Test func rejectsInvalidDates() {
        let error = syntaxError("a eq datetimeoffset'2026-02-30T00:00:00Z'")
        #expect(error?.position == 6)
        #expect(error?.message.contains("invalid date '2026-02-30T00:00:00Z'") == true)
        #expect(syntaxError("datetimeoffset'2026-01-02T03:04:05'")?.message.contains("add a time zone") == true)
        #expect(syntaxError("a eq 2026-01-02T03:04:05")?.position == 6)
        #expect(syntaxError("a eq 2026-01-02Tx")?.position == 6)
    }
}

@Suite struct ODataParserErrorTests {
    @Test func pointsAtAnUnexpectedToken() {
        let error = syntaxError("text eq )")
        #expect(error?.code == .syntax)
        #expect(error?.position == 9)
        #expect(error?.message.hasPrefix("unexpected ')' at column 9 of $filter 'text eq )'") == true)
    }

    @Test func pointsAtTheEndOfTruncatedText() {
        let error = syntaxError("text eq")
        #expect(error?.position == 8)
        #expect(error?.message.contains("unexpected end of text") == true)
    }

    @Test func countsColumnsInCharactersNotBytes() {
        #expect(syntaxError("text eq 'é👋' )")?.position == 14)
    }

    @Test func rejectsUnbalancedParentheses() {
        let open = syntaxError("(a eq 1")
        #expect(open?.position == 8)
        #expect(open?.message.contains("expected ')' to close the '(' at column 1") == true)
        #expect(syntaxError("a eq 1)")?.position == 7)
    }

    @Test func rejectsTrailingTokens() {
        #expect(syntaxError("a eq 1 b")?.position == 8)
    }

    @Test func rejectsKeywordsAsOperands() {
        #expect(syntaxError("and eq 1")?.position == 1)
        #expect(syntaxError("a eq or")?.position == 6)
    }

    @Test func rejectsNotAsAComparisonOperandUnlessParenthesised() throws {
        let error = syntaxError("a lt not (b)")
        #expect(error?.position == 6)
        #expect(error?.message.contains("put 'not …' in parentheses") == true)
        #expect(try parse("a lt (not b)") == .comparison(column("a"), .lt, .not(column("b"))))
    }

    @Test func rejectsEmptyText() {
        #expect(syntaxError("")?.message.contains("empty filter") == true)
        #expect(syntaxError("   ")?.position == 4)
    }

    @Test func rejectsUnknownCharacters() {
        let error = syntaxError("a eq \"x\"")
        #expect(error?.position == 6)
        #expect(error?.message.contains("unexpected character '\"'") == true)
        #expect(syntaxError("a/b eq 1")?.position == 2)
        #expect(syntaxError("a eq ☃")?.message.contains("'☃'") == true)
    }

    @Test func rejectsMalformedInLists() {
        #expect(syntaxError("a in 1")?.position == 6)
        #expect(syntaxError("a in (1 2)")?.position == 9)
        #expect(syntaxError("a in (b)")?.position == 7)
        #expect(syntaxError("a in (1,")?.position == 9)
    }

    @Test func rejectsMalformedCalls() {
        #expect(syntaxError("startswith(a 'b')")?.position == 14)
        #expect(syntaxError("tolower(a")?.position == 10)
    }

    @Test func rejectsColumnNamesOutsideTheIdentifierGrammar() {
        let long = String(repeating: "a", count: Identifier.maximumLength + 1)
        #expect(syntaxError("\(long) eq 1")?.message.contains("bad column name") == true)
    }

    @Test func rejectsNestingDeeperThanTheLimitWithoutCrashing() {
        let depth = 100_000
        let parentheses = String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth)
        #expect(syntaxError(parentheses)?.position == ODataParser.maximumDepth + 1)
        #expect(syntaxError(String(repeating: "not ", count: depth) + "a")?.message.contains("nested deeper") == true)
        #expect(
            syntaxError(String(repeating: "tolower(", count: depth) + "a")?.message.contains("nested deeper") == true)
        let chain = (0..<depth).map { "a eq \($0)" }.joined(separator: " or ")
        #expect(syntaxError(chain)?.message.contains("nested deeper") == true)
        // A flat chain is no nesting the user wrote: the message says the chain made it deep.
        #expect(syntaxError(chain)?.message.contains("chain of 'or' terms") == true)
        let ands = (0..<300).map { "a eq \($0)" }.joined(separator: " and ")
        #expect(syntaxError(ands)?.message.contains("chain of 'and' terms") == true)
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let depth = ODataParser.maximumDepth
        let parentheses = String(repeating: "(", count: depth) + "a" + String(repeating: ")", count: depth)
        #expect(try parse(parentheses) == column("a"))
    }
}

@Suite struct ODataOrderBySelectTests {
    @Test func parsesOrderByKeys() throws {
        #expect(
            try ODataParser.orderBy("priority desc, text,updatedAt ASC")
                == [SortKey("priority", descending: true), SortKey("text"), SortKey("updatedAt")])
    }

    @Test func blankOrderByHasNoKeys() throws {
        #expect(try ODataParser.orderBy(" ") == [])
    }

    @Test func rejectsMalformedOrderBy() {
        #expect(throws: OfflineSyncError.self) { try ODataParser.orderBy("text,") }
        do {
            _ = try ODataParser.orderBy("text descending")
            Issue.record("accepted 'text descending'")
        } catch let error as OfflineSyncError {
            #expect(error.position == 6)
            #expect(error.message.contains("of $orderby 'text descending'"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func parsesSelect() throws {
        #expect(try ODataParser.select("text, complete") == ["text", "complete"])
        #expect(try ODataParser.select("*") == nil)
        #expect(try ODataParser.select("") == nil)
        #expect(throws: OfflineSyncError.self) { try ODataParser.select("text,,complete") }
    }

    @Test func buildsAQueryFromRequestOptions() throws {
        let query = try ODataParser.query(
            table: "todoitem", filter: "(complete eq false)", orderBy: "text", skip: "5",
            top: "10", select: "text", inlineCount: "allpages")
        #expect(
            query
                == Query(
                    table: "todoitem", filter: .comparison(column("complete"), .eq, literal(false)),
                    orderBy: [SortKey("text")], skip: 5, top: 10, includeTotalCount: true, selection: ["text"]))
        #expect(try ODataParser.query(table: "t", filter: " ") == Query(table: "t"))
    }

    @Test func rejectsBadPagingOptions() {
        #expect(throws: OfflineSyncError.self) { try ODataParser.query(table: "t", skip: "-1") }
        #expect(throws: OfflineSyncError.self) { try ODataParser.query(table: "t", top: "ten") }
        #expect(throws: OfflineSyncError.self) { try ODataParser.query(table: "t", inlineCount: "some") }
    }

    @Test func readsTheFiltersOfRecordedWireRequests() throws {
        let date = Timestamp(iso8601: "2026-11-22T00:04:43.885Z")!
        #expect(
            try parse("(updatedAt ge datetimeoffset'2026-11-22T00:04:43.885Z')")
                == .comparison(column("updatedAt"), .ge, literal(.date(date))))
        #expect(try parse("(text eq 'second')") == .comparison(column("text"), .eq, literal("second")))
    }
}

@Suite struct ODataParserArithmeticTests {
    @Test(arguments: ArithmeticOperator.allCases)
    func parsesEveryArithmeticOperator(_ op: ArithmeticOperator) throws {
        #expect(
            try parse("a \(op.rawValue) 2 eq 1")
                == .comparison(.arithmetic(column("a"), op, literal(2)), .eq, literal(1)))
    }

    @Test func multiplicativeOperatorsBindTighterThanAdditiveOnes() throws {
        #expect(
            try parse("a add b mul c sub d mod e")
                == .arithmetic(
                    .arithmetic(column("a"), .add, .arithmetic(column("b"), .mul, column("c"))), .sub,
                    .arithmetic(column("d"), .mod, column("e"))))
    }

    @Test func arithmeticAssociatesToTheLeft() throws {
        #expect(
            try parse("a sub b sub c") == .arithmetic(.arithmetic(column("a"), .sub, column("b")), .sub, column("c")))
        #expect(
            try parse("a div b mul c") == .arithmetic(.arithmetic(column("a"), .div, column("b")), .mul, column("c")))
    }

    @Test func arithmeticBindsTighterThanComparisonsAndInLists() throws {
        #expect(
            try parse("a add 1 gt b mul 2")
                == .comparison(
                    .arithmetic(column("a"), .add, literal(1)), .gt, .arithmetic(column("b"), .mul, literal(2))))
        #expect(try parse("a mod 2 in (1)") == .isIn(.arithmetic(column("a"), .mod, literal(2)), [1]))
    }

    @Test func arithmeticOperatorsAreCaseInsensitive() throws {
        #expect(try parse("a ADD 1 Mul 2") == .arithmetic(column("a"), .add, .arithmetic(literal(1), .mul, literal(2))))
    }

    @Test func unaryMinusNegatesColumnsAndParentheses() throws {
        #expect(try parse("-a eq 1") == .comparison(.negate(column("a")), .eq, literal(1)))
        #expect(try parse("-(a add 1)") == .negate(.arithmetic(column("a"), .add, literal(1))))
        #expect(try parse("- -a") == .negate(.negate(column("a"))))
        #expect(try parse("-round(a)") == .negate(.function(.round, [column("a")])))
    }

    @Test func unaryMinusBindsTighterThanMultiplication() throws {
        #expect(try parse("-a mul b") == .arithmetic(.negate(column("a")), .mul, column("b")))
    }

    @Test func aMinusBeforeADigitIsANegativeNumber() throws {
        #expect(try parse("a sub -1") == .arithmetic(column("a"), .sub, literal(-1)))
        #expect(try parse("- 1") == .negate(literal(1)))
        #expect(try parse("-INF") == literal(.double(-.infinity)))
        #expect(try parse("-INFO") == .negate(column("INFO")))
    }

    @Test func arithmeticOperatorNamesCanBeColumns() throws {
        #expect(try parse("add add mod") == .arithmetic(column("add"), .add, column("mod")))
    }

    @Test func rejectsAMissingOperand() {
        #expect(syntaxError("a add")?.message.contains("unexpected end of text") == true)
        #expect(syntaxError("a mul )")?.position == 7)
        #expect(syntaxError("-")?.message.contains("expected an operand") == true)
        #expect(syntaxError("a in (-b)")?.message.contains("unexpected '-'") == true)
    }

    @Test func rejectsDeepArithmeticWithoutCrashing() {
        let depth = 100_000
        #expect(syntaxError(String(repeating: "-", count: depth) + "a")?.message.contains("nested deeper") == true)
        #expect(syntaxError(String(repeating: "- ", count: depth) + "a")?.message.contains("nested deeper") == true)
        let chain = "a" + String(repeating: " add a", count: depth) + " eq 1"
        #expect(syntaxError(chain)?.message.contains("nested deeper") == true)
        let nested = String(repeating: "round(-(", count: depth) + "a"
        #expect(syntaxError(nested)?.message.contains("nested deeper") == true)
    }
}

@Suite struct ODataParserClientFunctionTests {
    @Test func parsesTheJavaScriptClientsIndexOf() throws {
        #expect(
            try parse("(indexof(text,'Al') eq 0)")
                == .comparison(.function(.indexOf, [column("text"), literal("Al")]), .eq, literal(0)))
    }

    @Test func parsesSubstringWithTwoAndThreeArguments() throws {
        #expect(
            try parse("substring(text, 1) eq 'b'")
                == .comparison(.function(.substring, [column("text"), literal(1)]), .eq, literal("b")))
        #expect(
            try parse("substring(text,1,2) eq 'bc'")
                == .comparison(.function(.substring, [column("text"), literal(1), literal(2)]), .eq, literal("bc")))
    }

    @Test func parsesTheDotNetClientsStringFunctions() throws {
        #expect(
            try parse("(trim(text) eq 'a')") == .comparison(.function(.trim, [column("text")]), .eq, literal("a")))
        #expect(
            try parse("(concat(text,'x') eq 'ax')")
                == .comparison(.function(.concat, [column("text"), literal("x")]), .eq, literal("ax")))
        #expect(
            try parse("(replace(text,'a','b') eq 'b')")
                == .comparison(.function(.replace, [column("text"), literal("a"), literal("b")]), .eq, literal("b")))
    }

    @Test(arguments: [Function.hour, .minute, .second])
    func parsesTimeOfDayFunctions(_ function: Function) throws {
        #expect(
            try parse("\(function.rawValue)(due) eq 5")
                == .comparison(.function(function, [column("due")]), .eq, literal(5)))
    }

    @Test(arguments: [Function.round, .floor, .ceiling])
    func parsesMathFunctions(_ function: Function) throws {
        #expect(
            try parse("(\(function.rawValue)(price) eq 3)")
                == .comparison(.function(function, [column("price")]), .eq, literal(3)))
    }

    @Test func rejectsSubstringWithTheWrongNumberOfArguments() {
        #expect(
            syntaxError("substring(text) eq 'a'")?.message.contains("substring takes 2 or 3 arguments, not 1") == true)
        #expect(syntaxError("substring(a, 1, 2, 3) eq 'a'")?.message.contains("not 4") == true)
        #expect(syntaxError("replace(a, 'b') eq 'a'")?.message.contains("replace takes 3 arguments, not 2") == true)
    }

    @Test func rejectsODataV4DateAndTimeFunctions() {
        #expect(syntaxError("date(due) eq 2026-01-01")?.message.contains("unknown function 'date'") == true)
        #expect(syntaxError("time(due) eq 1")?.message.contains("unknown function 'time'") == true)
    }
}
