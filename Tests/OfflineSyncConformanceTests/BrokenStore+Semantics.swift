import Foundation
import OfflineSync

/// The reference query semantics with one rule bent the way a ``BrokenStore/Fault`` of rule 4
/// says: a plausible backend's translation of a filter, an ordering or a function, written as a
/// copy of ``QueryEvaluator``'s rules with the fault's change in one place. Used for the faults
/// that no rewrite of the query into a correct one expresses.
struct BentEvaluator {
    /// The faults this evaluator bends; a store with one of them answers every read with it.
    static let faults: Set<BrokenStore.Fault> = [
        .ordersStringsByUTF16, .treatsUnderscoreAsWildcard, .treatsBackslashAsEscape,
        .repeatsRowsForRepeatedIdsInLists, .comparesJSONIgnoringWhitespace, .comparesLargeIntegersThroughDouble,
        .neIsNotNullSafe, .inListsNeverMatchNull, .notOfNullIsFalse, .floorsModuloOfNegatives,
        .prefixMatchesStopBeforeAstralCharacters, .breaksTiesByIdDescendingWhenDescending,
        .equatesNullWithEmptyString, .lengthCountsUTF16Units, .trimsOnlyASCIIWhitespace,
        .truncatesPre1970DatesInCalendarFunctions, .comparesDatesToTheSecond, .ordersNumbersAsText,
        .ordersByTheFirstSortKeyOnly, .breaksTiesByIdInTheLastKeysDirection,
        .truncatesDoubleLiteralsComparedWithIntegers, .comparesStringsByCanonicalEquivalence,
        .matchesSubstringsCaseInsensitively, .foldsCaseOfNonASCIILetters, .roundsHalvesToEven,
        .dividesIntegersAsDoubles, .concatSkipsNulls, .indexOfCountsUTF8Bytes, .comparesStringsIgnoringTrailingSpaces,
        .endsWithOfAnEmptySuffixIsFalse, .ordersIntegersThroughDouble, .roundsHalvesUp, .indexOfIsOneBased,
        .computesCalendarFunctionsInLocalTime, .ordersStringsCaseInsensitively, .emptyInListsMatchEverything,
        .ordersNegativeZeroBeforeZero, .castsInListDoublesToIntegers, .wrapsIntegerOverflow,
        .computesCalendarFunctionsWithAJulianCutover, .comparesStringsUpToNUL, .substringCountsNegativeStartsFromTheEnd,
        .treatsNullBooleansAsFalse,
    ]

    let fault: BrokenStore.Fault?
    let query: Query
    private let reference: QueryEvaluator
    /// Stale index entries: for a row's id, other values of its indexed columns that an index
    /// still lists it under (the row then matches a filter on them, as an index scan without a
    /// recheck answers it), or, for an id no longer stored, the row as it was (answered as it
    /// was by a filter on an indexed column that it matched).
    private let staleEntries: [[UInt8]: [Item]]
    private let indexedColumns: Set<String>

    init(
        fault: BrokenStore.Fault?, query: Query, schema: TableSchema, staleEntries: [[UInt8]: [Item]] = [:]
    ) throws {
        reference = try QueryEvaluator(query: query, schema: schema)
        self.fault = fault
        self.query = query
        self.staleEntries = staleEntries
        indexedColumns = Set(schema.indexes.flatMap(\.columns)).subtracting(["id"])
    }

    // MARK: Running

    func run(over rows: [Item]) -> QueryResult {
        var matching: [Item] = []
        for row in rows where matches(row) {
            for _ in 0..<multiplicity(of: row) { matching.append(row) }
        }
        // Rows no longer stored whose index entries are left: an index-only answer finds them.
        let present = Set(rows.map { Array($0.id.utf8) })
        for (id, entries) in staleEntries where !present.contains(id) {
            if let ghost = entries.last(where: matchesThroughAnIndex) { matching.append(ghost) }
        }
        let total = query.includeTotalCount ? matching.count : nil
        matching.sort(by: precedes)
        let start = min(query.skip, matching.count)
        let end = query.top.map { start + min(matching.count - start, $0) } ?? matching.count
        return QueryResult(items: matching[start..<end].map(reference.select), totalCount: total)
    }

    private func matches(_ row: Item) -> Bool {
        guard let filter = query.filter else { return true }
        if isTrue(evaluate(filter, row)) { return true }
        guard let stale = staleEntries[Array(row.id.utf8)], !indexedColumns.isDisjoint(with: columns(of: filter))
        else { return false }
        return stale.contains { entry in
            var seen = row
            for column in indexedColumns { seen.values[column] = entry[column].isNull ? nil : entry[column] }
            return isTrue(evaluate(filter, seen))
        }
    }

    /// `true` when the filter reads an indexed column and `entry` (a stale index entry) matches it.
    private func matchesThroughAnIndex(_ entry: Item) -> Bool {
        guard let filter = query.filter, !indexedColumns.isDisjoint(with: columns(of: filter)) else { return false }
        return isTrue(evaluate(filter, entry))
    }

    /// How often a row comes back: once, or for a store that seeks once per listed id, as often
    /// as its id is listed in a top-level `id in (…)` conjunct.
    private func multiplicity(of row: Item) -> Int {
        guard fault == .repeatsRowsForRepeatedIdsInLists, let filter = query.filter else { return 1 }
        func listed(_ expression: FilterExpression) -> Int? {
            switch expression {
            case .isIn(.column("id"), let values):
                return values.count { $0.stringValue.map { $0.utf8.elementsEqual(row.id.utf8) } ?? false }
            case .and(let lhs, let rhs): return listed(lhs) ?? listed(rhs)
            default: return nil
            }
        }
        return max(listed(filter) ?? 1, 1)
    }

    private func precedes(_ lhs: Item, _ rhs: Item) -> Bool {
        // A translation that emits only the first key of the ordering.
        let keys = fault == .ordersByTheFirstSortKeyOnly ? Array(query.orderBy.prefix(1)) : query.orderBy
        for key in keys {
            var left = lhs[key.column]
            var right = rhs[key.column]
            if fault == .comparesStringsIgnoringTrailingSpaces, key.column != "id" {
                left = Self.withoutTrailingSpaces(left)
                right = Self.withoutTrailingSpaces(right)
            }
            let order = compare(left, right, inFilter: false)
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        let order = compareText(lhs.id, rhs.id)
        if fault == .breaksTiesByIdDescendingWhenDescending, query.orderBy.first?.descending == true {
            return order > 0
        }
        // A translation that appends `id` with the direction of the last of several keys.
        if fault == .breaksTiesByIdInTheLastKeysDirection, query.orderBy.count > 1,
            query.orderBy.last?.descending == true
        {
            return order > 0
        }
        return order < 0
    }

    // MARK: Values

    private func isTrue(_ value: Value) -> Bool { QueryEvaluator.isTrue(value) }

    private func compareText(_ a: String, _ b: String) -> Int {
        guard fault == .ordersStringsByUTF16 else { return ValueSemantics.compareBytes(a, b) }
        return a.utf16.lexicographicallyPrecedes(b.utf16) ? -1 : (a.utf16.elementsEqual(b.utf16) ? 0 : 1)
    }

    /// The order of two values, bent for strings (UTF-16), dates (seconds, in filters) and
    /// integer–double pairs (through `Double`, in filters).
    private func compare(_ lhs: Value, _ rhs: Value, inFilter: Bool) -> Int {
        switch (lhs, rhs) {
        case (.double(let a), .double(let b))
        where !inFilter && fault == .ordersNegativeZeroBeforeZero && a == 0 && b == 0:
            // The bits of -0.0 sort before those of 0.0.
            return a.sign == b.sign ? 0 : (a.sign == .minus ? -1 : 1)
        case (.string(let a), .string(let b)) where fault == .comparesStringsUpToNUL:
            return compareText(Self.beforeNUL(a), Self.beforeNUL(b))
        case _ where !inFilter && fault == .ordersNumbersAsText && Self.isNumber(lhs) && Self.isNumber(rhs):
            // Numbers kept as text in the ordering (an index or sort key of their decimal text).
            let a = Self.text(of: lhs)
            let b = Self.text(of: rhs)
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : (a == b ? 0 : 1)
        case (.int(let a), .int(let b)) where !inFilter && fault == .ordersIntegersThroughDouble:
            // An index key that encodes every number as a double, to order integers and doubles alike.
            return Double(a) < Double(b) ? -1 : (Double(a) > Double(b) ? 1 : 0)
        case (.string(let a), .string(let b)) where !inFilter && fault == .ordersStringsCaseInsensitively:
            // ORDER BY … COLLATE NOCASE: ASCII letters folded, ties broken by id.
            return compareText(
                QueryEvaluator.apply(.toLower, [.string(a)]).stringValue ?? a,
                QueryEvaluator.apply(.toLower, [.string(b)]).stringValue ?? b)
        case (.int(let a), .double(let b))
        where inFilter && fault == .truncatesDoubleLiteralsComparedWithIntegers && b.rounded(.towardZero) != b
            && abs(b) < 9e18:
            return ValueSemantics.compare(.int(a), .int(Int64(b)))
        case (.double(let a), .int(let b))
        where inFilter && fault == .truncatesDoubleLiteralsComparedWithIntegers && a.rounded(.towardZero) != a
            && abs(a) < 9e18:
            return ValueSemantics.compare(.int(Int64(a)), .int(b))
        case (.string(let a), .string(let b)) where fault == .comparesStringsByCanonicalEquivalence:
            // Swift's String order: canonically equivalent strings tie.
            return a < b ? -1 : (b < a ? 1 : 0)
        case (.string(let a), .string(let b)), (.json(let a), .json(let b)), (.string(let a), .json(let b)),
            (.json(let a), .string(let b)):
            return compareText(a, b)
        case (.date(let a), .date(let b)) where inFilter && fault == .comparesDatesToTheSecond:
            let x = floorDivide(a.millisecondsSince1970, 1000)
            let y = floorDivide(b.millisecondsSince1970, 1000)
            return x < y ? -1 : (x > y ? 1 : 0)
        case (.int(let a), .double(let b)) where inFilter && fault == .comparesLargeIntegersThroughDouble:
            return Double(a) < b ? -1 : (Double(a) > b ? 1 : 0)
        case (.double(let a), .int(let b)) where inFilter && fault == .comparesLargeIntegersThroughDouble:
            return a < Double(b) ? -1 : (a > Double(b) ? 1 : 0)
        default:
            return ValueSemantics.compare(lhs, rhs)
        }
    }

    private func equal(_ lhs: Value, _ rhs: Value) -> Bool {
        var lhs = lhs
        var rhs = rhs
        if fault == .equatesNullWithEmptyString {
            if lhs.isNull, rhs.stringValue != nil { lhs = .string("") }
            if rhs.isNull, lhs.stringValue != nil { rhs = .string("") }
        }
        if fault == .comparesJSONIgnoringWhitespace {
            switch (lhs, rhs) {
            case (.json(let a), .json(let b)), (.json(let a), .string(let b)), (.string(let a), .json(let b)):
                return Self.withoutWhitespace(a) == Self.withoutWhitespace(b)
            default: break
            }
        }
        if fault == .treatsNullBooleansAsFalse {
            // COALESCE(b, false) in the translation of a comparison.
            if lhs.isNull, case .bool = rhs { lhs = .bool(false) }
            if rhs.isNull, case .bool = lhs { rhs = .bool(false) }
        }
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        if fault == .comparesStringsByCanonicalEquivalence, case .string(let a) = lhs, case .string(let b) = rhs {
            return a.utf8.elementsEqual(b.utf8)  // equality stays byte-wise: only lt, gt and ordering bend
        }
        return compare(lhs, rhs, inFilter: true) == 0
    }

    private func compare(_ lhs: Value, _ op: ComparisonOperator, _ rhs: Value) -> Bool {
        switch op {
        case .eq: return equal(lhs, rhs)
        case .ne:
            if fault == .neIsNotNullSafe, lhs.isNull || rhs.isNull { return false }
            return !equal(lhs, rhs)
        default:
            if lhs.isNull || rhs.isNull { return false }
            let order = compare(lhs, rhs, inFilter: true)
            switch op {
            case .gt: return order > 0
            case .ge: return order >= 0
            case .lt: return order < 0
            default: return order <= 0
            }
        }
    }

    // MARK: Expressions

    private func evaluate(_ expression: FilterExpression, _ item: Item) -> Value {
        switch expression {
        case .literal(let value): return value
        case .column(let name): return item[name]
        case .not(let operand):
            let value = evaluate(operand, item)
            if fault == .notOfNullIsFalse, value.isNull { return .bool(false) }
            return .bool(!isTrue(value))
        case .and(let lhs, let rhs): return .bool(isTrue(evaluate(lhs, item)) && isTrue(evaluate(rhs, item)))
        case .or(let lhs, let rhs): return .bool(isTrue(evaluate(lhs, item)) || isTrue(evaluate(rhs, item)))
        case .comparison(let lhs, let op, let rhs):
            var a = evaluate(lhs, item)
            var b = evaluate(rhs, item)
            if fault == .comparesStringsIgnoringTrailingSpaces, !Self.isId(lhs), !Self.isId(rhs) {
                // A PAD SPACE collation on the text columns (the id's key compares exactly).
                a = Self.withoutTrailingSpaces(a)
                b = Self.withoutTrailingSpaces(b)
            }
            return .bool(compare(a, op, b))
        case .isIn(let operand, var values):
            if fault == .emptyInListsMatchEverything, values.isEmpty { return .bool(true) }  // `x IN ()` left out
            var value = evaluate(operand, item)
            if fault == .comparesStringsIgnoringTrailingSpaces, !Self.isId(operand) {
                value = Self.withoutTrailingSpaces(value)
                values = values.map(Self.withoutTrailingSpaces)
            }
            if fault == .inListsNeverMatchNull, value.isNull { return .bool(false) }
            if fault == .castsInListDoublesToIntegers, case .int = value {
                // Each listed value bound as the integer column's type: the fraction is cut off.
                values = values.map { listed in
                    guard case .double(let number) = listed, abs(number) < 9e18 else { return listed }
                    return .int(Int64(number))
                }
            }
            return .bool(values.contains { equal(value, $0) })
        case .function(let function, let arguments): return apply(function, arguments.map { evaluate($0, item) })
        case .arithmetic(let lhs, let op, let rhs):
            let a = evaluate(lhs, item)
            let b = evaluate(rhs, item)
            if fault == .wrapsIntegerOverflow, case .int(let x) = a, case .int(let y) = b {
                switch op {
                case .add: return .int(x &+ y)
                case .sub: return .int(x &- y)
                case .mul: return .int(x &* y)
                default: break
                }
            }
            if fault == .dividesIntegersAsDoubles, op == .div, case .int(let x) = a, case .int(let y) = b, y != 0 {
                return .double(Double(x) / Double(y))  // a translation that divides as doubles
            }
            if fault == .floorsModuloOfNegatives, op == .mod {
                let truncated = ValueSemantics.arithmetic(a, .mod, b)
                switch (truncated, b) {
                case (.int(let r), .int(let divisor)) where r != 0 && (r < 0) != (divisor < 0): return .int(r + divisor)
                case (.double(let r), .int(let divisor)) where r != 0 && (r < 0) != (divisor < 0):
                    return .double(r + Double(divisor))
                case (.double(let r), .double(let divisor)) where r != 0 && (r < 0) != (divisor < 0):
                    return .double(r + divisor)
                default: return truncated
                }
            }
            return ValueSemantics.arithmetic(a, op, b)
        case .negate(let operand):
            if fault == .wrapsIntegerOverflow, case .int(let x) = evaluate(operand, item) { return .int(0 &- x) }
            return ValueSemantics.negate(evaluate(operand, item))
        }
    }

    private func apply(_ function: Function, _ arguments: [Value]) -> Value {
        if fault == .concatSkipsNulls, function == .concat {
            // SQL's CONCAT() (PostgreSQL, MySQL) reads null as '', where || gives null.
            return .string(arguments.map { $0.stringValue ?? "" }.joined())
        }
        if arguments.contains(where: \.isNull) { return .null }
        let reference = QueryEvaluator.apply(function, arguments)
        func text(_ index: Int) -> String {
            switch arguments[index] {
            case .string(let value), .json(let value): return value
            default: return ""
            }
        }
        switch (fault, function) {
        case (.treatsUnderscoreAsWildcard, .startsWith), (.treatsUnderscoreAsWildcard, .endsWith),
            (.treatsUnderscoreAsWildcard, .contains):
            let needle = Array(text(1).unicodeScalars)
            guard needle.contains("_") else { return reference }
            let haystack = Array(text(0).unicodeScalars)
            guard needle.count <= haystack.count else { return .bool(false) }
            func fits(at start: Int) -> Bool {
                needle.indices.allSatisfy { needle[$0] == "_" || needle[$0] == haystack[start + $0] }
            }
            switch function {
            case .startsWith: return .bool(fits(at: 0))
            case .endsWith: return .bool(fits(at: haystack.count - needle.count))
            default: return .bool((0...(haystack.count - needle.count)).contains(where: fits))
            }
        case (.treatsBackslashAsEscape, .startsWith), (.treatsBackslashAsEscape, .endsWith),
            (.treatsBackslashAsEscape, .contains):
            var needle = String.UnicodeScalarView()
            var escaped = false
            for scalar in text(1).unicodeScalars {
                if scalar == "\\" && !escaped {
                    escaped = true
                } else {
                    needle.append(scalar)
                    escaped = false
                }
            }
            return QueryEvaluator.apply(function, [arguments[0], .string(String(needle))])
        case (.prefixMatchesStopBeforeAstralCharacters, .startsWith):
            guard QueryEvaluator.isTrue(reference) else { return reference }
            let prefixLength = text(1).utf8.count
            let rest = String(decoding: text(0).utf8.dropFirst(prefixLength), as: UTF8.self)
            return .bool((rest.unicodeScalars.first?.value ?? 0) <= 0xFFFF)
        case (.matchesSubstringsCaseInsensitively, .startsWith), (.matchesSubstringsCaseInsensitively, .endsWith),
            (.matchesSubstringsCaseInsensitively, .contains):
            // SQLite's LIKE folds ASCII letter case.
            let folded = arguments.map { QueryEvaluator.apply(.toLower, [$0]) }
            return QueryEvaluator.apply(function, folded)
        case (.foldsCaseOfNonASCIILetters, .toLower): return .string(text(0).lowercased())
        case (.foldsCaseOfNonASCIILetters, .toUpper): return .string(text(0).uppercased())
        case (.roundsHalvesToEven, .round): return ValueSemantics.rounded(arguments[0], .toNearestOrEven)
        case (.roundsHalvesUp, .round):
            // floor(x + 0.5): halves go up, -2.5 to -2.
            guard case .double(let number) = arguments[0] else { return reference }
            return .double((number + 0.5).rounded(.down))
        case (.endsWithOfAnEmptySuffixIsFalse, .endsWith):
            // substr(s, -length(suffix)) = suffix: SQLite's substr(s, 0) is the whole string.
            return text(1).isEmpty ? .bool(text(0).isEmpty) : reference
        case (.indexOfIsOneBased, .indexOf):
            // instr() without the - 1: 1-based, and 0 when absent.
            guard case .int(let position) = reference else { return reference }
            return .int(position + 1)
        case (.computesCalendarFunctionsInLocalTime, .year), (.computesCalendarFunctionsInLocalTime, .month),
            (.computesCalendarFunctionsInLocalTime, .day), (.computesCalendarFunctionsInLocalTime, .hour),
            (.computesCalendarFunctionsInLocalTime, .minute), (.computesCalendarFunctionsInLocalTime, .second):
            // The process's time zone (UTC+01:00) instead of UTC.
            guard case .date(let date) = arguments[0] else { return reference }
            return QueryEvaluator.apply(
                function, [.date(Timestamp(millisecondsSince1970: date.millisecondsSince1970 + 3_600_000))])
        case (.substringCountsNegativeStartsFromTheEnd, .substring):
            guard case .int(let start) = arguments[1], start < 0 else { return reference }
            let count = Int64(text(0).unicodeScalars.count)
            var shifted = arguments
            shifted[1] = .int(max(0, count + max(start, -count)))
            return QueryEvaluator.apply(.substring, shifted)
        case (.computesCalendarFunctionsWithAJulianCutover, .year),
            (.computesCalendarFunctionsWithAJulianCutover, .month),
            (.computesCalendarFunctionsWithAJulianCutover, .day):
            guard case .date(let date) = arguments[0] else { return reference }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let instant = Date(timeIntervalSince1970: Double(date.millisecondsSince1970) / 1000)
            let parts = calendar.dateComponents([.era, .year, .month, .day], from: instant)
            switch function {
            case .year: return .int(Int64(parts.era == 0 ? 1 - (parts.year ?? 0) : (parts.year ?? 0)))
            case .month: return .int(Int64(parts.month ?? 0))
            default: return .int(Int64(parts.day ?? 0))
            }
        case (.indexOfCountsUTF8Bytes, .indexOf):
            let haystack = Array(text(0).utf8)
            let needle = Array(text(1).utf8)
            guard needle.count <= haystack.count else { return .int(-1) }
            let offset = (0...(haystack.count - needle.count)).first {
                haystack[$0..<($0 + needle.count)].elementsEqual(needle)
            }
            return .int(Int64(offset ?? -1))
        case (.lengthCountsUTF16Units, .length):
            return .int(Int64(text(0).utf16.count))
        case (.trimsOnlyASCIIWhitespace, .trim):
            let ascii: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}"]
            let scalars = text(0).unicodeScalars
            guard let first = scalars.firstIndex(where: { !ascii.contains($0) }),
                let last = scalars.lastIndex(where: { !ascii.contains($0) })
            else { return .string("") }
            return .string(String(scalars[first...last]))
        case (.truncatesPre1970DatesInCalendarFunctions, .year), (.truncatesPre1970DatesInCalendarFunctions, .month),
            (.truncatesPre1970DatesInCalendarFunctions, .day), (.truncatesPre1970DatesInCalendarFunctions, .hour),
            (.truncatesPre1970DatesInCalendarFunctions, .minute), (.truncatesPre1970DatesInCalendarFunctions, .second):
            guard case .date(let date) = arguments[0] else { return reference }
            let seconds = date.millisecondsSince1970 / 1000  // truncates toward zero
            return QueryEvaluator.apply(function, [.date(Timestamp(millisecondsSince1970: seconds * 1000))])
        default:
            return reference
        }
    }

    // MARK: Helpers

    private static func isId(_ expression: FilterExpression) -> Bool {
        if case .column("id") = expression { return true }
        return false
    }

    /// A string without its trailing U+0020 spaces; other values as they are.
    private static func withoutTrailingSpaces(_ value: Value) -> Value {
        guard case .string(let text) = value else { return value }
        var scalars = Array(text.unicodeScalars)
        while scalars.last == " " { scalars.removeLast() }
        return .string(String(String.UnicodeScalarView(scalars)))
    }

    /// `text` up to its first U+0000, as a C string reads it.
    private static func beforeNUL(_ text: String) -> String {
        String(decoding: text.utf8.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func isNumber(_ value: Value) -> Bool {
        switch value {
        case .int, .double: return true
        default: return false
        }
    }

    private static func text(of number: Value) -> String {
        switch number {
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        default: return ""
        }
    }

    private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private func columns(of expression: FilterExpression) -> Set<String> {
        switch expression {
        case .column(let name): return [name]
        case .literal: return []
        case .not(let operand), .isIn(let operand, _), .negate(let operand): return columns(of: operand)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            return columns(of: lhs).union(columns(of: rhs))
        case .function(_, let arguments): return arguments.reduce(into: []) { $0.formUnion(columns(of: $1)) }
        }
    }

    /// JSON text without the white space between tokens (what `canonicalisesJSON` stores, and
    /// what `comparesJSONIgnoringWhitespace` compares).
    static func withoutWhitespace(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var inString = false
        var escaped = false
        for scalar in text.unicodeScalars {
            if inString {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inString = false
                }
                result.append(scalar)
            } else if scalar == "\"" {
                inString = true
                result.append(scalar)
            } else if !(scalar == " " || scalar == "\n" || scalar == "\r" || scalar == "\t") {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
