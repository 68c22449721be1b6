import Testing

@testable import OfflineSync

private func apply(_ function: Function, _ arguments: Value...) -> Value {
    QueryEvaluator.apply(function, arguments)
}

private func arithmetic(_ lhs: Value, _ op: ArithmeticOperator, _ rhs: Value) -> Value {
    ValueSemantics.arithmetic(lhs, op, rhs)
}

@Suite struct QueryEvaluatorStringFunctionTests {
    @Test func indexOfIsZeroBasedAndMinusOneWhenAbsent() {
        #expect(apply(.indexOf, "Alice", "Al") == 0)
        #expect(apply(.indexOf, "Sally", "al") == 1)
        #expect(apply(.indexOf, "Bob", "Al") == -1)
        #expect(apply(.indexOf, "Bob", "") == 0)
        #expect(apply(.indexOf, "", "") == 0)
    }

    @Test func indexOfCountsUnicodeScalarsNotUTF16Units() {
        #expect(apply(.indexOf, "😀a", "a") == 1)
        #expect(apply(.indexOf, "e\u{301}x", "x") == 2)
        #expect(apply(.indexOf, "a\u{0}b", "b") == 2)
    }

    @Test func indexOfMatchesBytesExactly() {
        #expect(apply(.indexOf, "caf\u{E9}", "e\u{301}") == -1)
        #expect(apply(.indexOf, "ABC", "b") == -1)
    }

    @Test func substringTakesScalarsFromAZeroBasedStart() {
        #expect(apply(.substring, "abcdef", 2) == "cdef")
        #expect(apply(.substring, "abcdef", 1, 3) == "bcd")
        #expect(apply(.substring, "😀ab", 1, 1) == "a")
    }

    @Test func substringClampsOutOfRangePositionsAndLengths() {
        #expect(apply(.substring, "abc", -2) == "abc")
        #expect(apply(.substring, "abc", -2, 2) == "ab")
        #expect(apply(.substring, "abc", 5) == "")
        #expect(apply(.substring, "abc", 1, -1) == "")
        #expect(apply(.substring, "abc", 1, 100) == "bc")
        #expect(apply(.substring, "abc", .int(.max), .int(.max)) == "")
        #expect(apply(.substring, "abc", .int(.min), .int(.max)) == "abc")
    }

    @Test func trimRemovesUnicodeWhiteSpaceAtBothEnds() {
        #expect(apply(.trim, " \t\na b\r\n ") == "a b")
        #expect(apply(.trim, "\u{3000}\u{A0}x\u{2028}\u{FEFF}") == "x")
        #expect(apply(.trim, "  ") == "")
        #expect(apply(.trim, "\u{0}x\u{0}") == "\u{0}x\u{0}")
    }

    @Test func concatAppends() {
        #expect(apply(.concat, "ab", "😀") == "ab😀")
        #expect(apply(.concat, "", "") == "")
    }

    @Test func replaceReplacesEveryNonOverlappingOccurrenceLeftToRight() {
        #expect(apply(.replace, "aaa", "aa", "b") == "ba")
        #expect(apply(.replace, "a.b.c", ".", "") == "abc")
        #expect(apply(.replace, "abc", "", "x") == "abc")
        #expect(apply(.replace, "caf\u{E9}", "e", "x") == "caf\u{E9}")
    }

    @Test(arguments: Function.allCases)
    func everyFunctionOfANullArgumentIsNull(_ function: Function) {
        let arguments = [Value](repeating: .null, count: function.arity.lowerBound)
        #expect(QueryEvaluator.apply(function, arguments) == .null)
    }

    @Test func substringWithANullLengthIsNull() {
        #expect(apply(.substring, "abc", 1, .null) == .null)
    }
}

@Suite struct QueryEvaluatorDateAndMathFunctionTests {
    @Test func timeOfDayFunctionsReadUTC() {
        let date = Value.date(Timestamp(millisecondsSince1970: 86_400_000 + 13 * 3_600_000 + 4 * 60_000 + 5_678))
        #expect(apply(.hour, date) == 13)
        #expect(apply(.minute, date) == 4)
        #expect(apply(.second, date) == 5)
    }

    @Test func timeOfDayBefore1970CountsFromTheStartOfTheDay() {
        let date = Value.date(Timestamp(millisecondsSince1970: -1))
        #expect(apply(.hour, date) == 23)
        #expect(apply(.minute, date) == 59)
        #expect(apply(.second, date) == 59)
    }

    @Test func roundTakesHalvesAwayFromZero() {
        #expect(apply(.round, 2.5) == 3.0)
        #expect(apply(.round, -2.5) == -3.0)
        #expect(apply(.round, 0.49999999999999994) == 0.0)
        #expect(apply(.round, 4_503_599_627_370_497.0) == 4_503_599_627_370_497.0)
    }

    @Test func floorAndCeilingRoundDownAndUp() {
        #expect(apply(.floor, -1.5) == -2.0)
        #expect(apply(.ceiling, -1.5) == -1.0)
        #expect(apply(.floor, 1.5) == 1.0)
        #expect(apply(.ceiling, 1.000001) == 2.0)
    }

    @Test func roundingAnIntegerKeepsIt() {
        #expect(apply(.round, .int(.max)) == .int(.max))
        #expect(apply(.floor, -3) == -3)
    }
}

@Suite struct ValueSemanticsArithmeticTests {
    @Test func integersGiveIntegers() {
        #expect(arithmetic(7, .add, 2) == 9)
        #expect(arithmetic(7, .sub, 9) == -2)
        #expect(arithmetic(7, .mul, -2) == -14)
    }

    @Test func integerDivisionTruncatesTowardZero() {
        #expect(arithmetic(7, .div, 2) == 3)
        #expect(arithmetic(-7, .div, 2) == -3)
    }

    @Test func remainderKeepsTheSignOfTheDividend() {
        #expect(arithmetic(-7, .mod, 2) == -1)
        #expect(arithmetic(7, .mod, -2) == 1)
        #expect(arithmetic(.int(.min), .mod, -1) == 0)
        #expect(arithmetic(5.5, .mod, 2) == 1.5)
        #expect(arithmetic(-5.5, .mod, 2) == -1.5)
    }

    @Test func divisionByZeroIsNull() {
        #expect(arithmetic(1, .div, 0) == .null)
        #expect(arithmetic(1, .mod, 0) == .null)
        #expect(arithmetic(1.5, .div, 0) == .null)
        #expect(arithmetic(1, .div, .double(-0.0)) == .null)
        #expect(arithmetic(1.5, .mod, 0.0) == .null)
    }

    @Test func integerOverflowBecomesADouble() {
        #expect(arithmetic(.int(.max), .add, 1) == .double(9_223_372_036_854_775_808.0))
        #expect(arithmetic(.int(.min), .sub, 1) == .double(-9_223_372_036_854_775_808.0))
        #expect(arithmetic(.int(.max), .mul, 2) == .double(18_446_744_073_709_551_616.0))
        #expect(arithmetic(.int(.min), .div, -1) == .double(9_223_372_036_854_775_808.0))
        #expect(ValueSemantics.negate(.int(.min)) == .double(9_223_372_036_854_775_808.0))
    }

    @Test func aDoubleOperandMakesDoubleArithmetic() {
        #expect(arithmetic(1, .add, 0.5) == 1.5)
        #expect(arithmetic(7, .div, 2.0) == 3.5)
        #expect(arithmetic(9_007_199_254_740_993, .add, 0.0) == 9_007_199_254_740_992.0)
    }

    @Test func notANumberIsNull() {
        #expect(arithmetic(.double(.infinity), .sub, .double(.infinity)) == .null)
        #expect(arithmetic(1e308, .mul, 10) == .double(.infinity))
    }

    @Test func nullOperandsGiveNull() {
        #expect(arithmetic(.null, .add, 1) == .null)
        #expect(arithmetic(1, .div, .null) == .null)
        #expect(ValueSemantics.negate(.null) == .null)
    }
}

@Suite struct QueryValidationOfFunctionsTests {
    let table = TableSchema(
        "t", columns: [Column("s", .string), Column("n", .integer), Column("d", .double), Column("at", .date)])

    private func error(_ filter: String) -> OfflineSyncError? {
        do {
            try Query(table: "t", filter: try ODataParser.filter(filter)).validate(against: table)
            return nil
        } catch let error as OfflineSyncError {
            return error
        } catch {
            return nil
        }
    }

    @Test func acceptsWellTypedFunctionsAndArithmetic() {
        #expect(error("indexof(s, 'a') add 1 eq length(trim(s)) mul 2") == nil)
        #expect(error("round(d) eq floor(n) sub -ceiling(d div 3)") == nil)
        #expect(error("substring(concat(s, 'x'), n, 2) eq replace(s, 'a', 'b')") == nil)
        #expect(error("hour(at) eq minute(at) mod second(at)") == nil)
    }

    @Test func rejectsArithmeticOnNonNumbers() {
        #expect(error("s add 1 eq 2")?.message.contains("'add' needs a number, but s is a string") == true)
        #expect(error("-s eq 'a'")?.message.contains("unary minus needs a number") == true)
        #expect(error("round(at) eq 1")?.message.contains("round needs a number") == true)
    }

    @Test func rejectsArgumentsOfTheWrongType() {
        #expect(error("substring(s, 1.5) eq 'a'")?.message.contains("needs an integer argument") == true)
        #expect(error("indexof(n, 'a') eq 1")?.message.contains("indexof needs a string argument") == true)
        #expect(error("hour(s) eq 1")?.message.contains("hour needs a date argument") == true)
    }

    @Test func rejectsADoubleComparedWithAString() {
        #expect(error("d mul 2 eq 'a'")?.code == .invalidQuery)
    }

    @Test func replaceNeedsAShortLiteralReplacementAndNoNesting() {
        #expect(error("replace(s, 'a', s) eq 'b'")?.message.contains("must be a string literal") == true)
        let long = String(repeating: "x", count: 101)
        #expect(error("replace(s, 'a', '\(long)') eq 'b'")?.message.contains("at most 100 characters") == true)
        #expect(error("replace(replace(s, 'a', 'b'), 'b', 'c') eq 'c'")?.message.contains("cannot be nested") == true)
    }

    @Test func limitsConcatCalls() {
        let eight = (0..<8).reduce("s") { text, _ in "concat(\(text), s)" }
        #expect(error("\(eight) eq 'a'") == nil)
        #expect(error("concat(\(eight), s) eq 'a'")?.message.contains("concat at most 8 times") == true)
    }
}
