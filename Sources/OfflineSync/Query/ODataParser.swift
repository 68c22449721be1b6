/// Reads OData `$filter`, `$orderby` and `$select` text into the query model; the inverse of
/// ``ODataPrinter`` (`ODataParser.filter(ODataPrinter.filter(e)) == e`).
///
/// The filter grammar, loosest binding first: `or`, `and`, `not`, the comparisons `eq ne gt ge lt
/// le` (left-associative), `in` lists (`priority in (1, 2)`), the additive operators `add sub`,
/// the multiplicative operators `mul div mod` (both left-associative), unary minus (`-x`; a `-`
/// directly before a digit is part of a negative number), then operands: parentheses, literals,
/// column names and function calls. `not` binds looser than the comparisons (`not a eq 1` is
/// `not (a eq 1)`), as the Azure clients write it. Keywords and function names are
/// case-insensitive, as the Azure Mobile Apps Node server accepts them; column names are
/// case-sensitive and follow ``Identifier``.
///
/// - Literals: `null`, `true`, `false`; integers (64-bit, an optional `L` suffix); doubles
///   (`1.5`, `-0.0`, `1e10`, `1.5E-3`, an optional `d`, `f` or `m` suffix, and v4's `NaN`, `INF`,
///   `-INF`); strings in single quotes with `''` for a quote (`'O''Brien'`); dates as
///   `datetimeoffset'2026-01-02T03:04:05.678Z'`, v3's `datetime'…'` (no zone means UTC) and v4's
///   bare `2026-01-02T03:04:05.678Z` or `2026-01-02`.
/// - Functions (see ``Function``): `startswith`, `endswith`, `contains`, `indexof`, `length`,
///   `substring` (2 or 3 arguments), `tolower`, `toupper`, `trim`, `concat`, `replace`, `year`,
///   `month`, `day`, `hour`, `minute`, `second`, `round`, `floor`, `ceiling`, and v3's
///   `substringof(needle, s)`, which reads as `contains(s, needle)`.
///
/// Words that are keywords (`and`, `or`, `not`, `eq` …, `in`, `null`, `true`, `false`, in any
/// letter case; `NaN` and `INF` exactly) cannot be used as column names in a filter. The
/// arithmetic operators (`add` …) are operators only after an operand, so a column may be named
/// `add`.
///
/// Types (a string added to a number, a date passed to `round`) are checked later, against the
/// table, by ``Query/validate(against:)``.
///
/// Errors are ``OfflineSyncError/Code-swift.struct/syntax`` with a message naming the problem,
/// the 1-based column of the bad token and the text, e.g. `unexpected ')' at column 9 of $filter
/// 'text eq )'`; ``OfflineSyncError/position`` holds the column. No input crashes the parser:
/// nesting deeper than ``maximumDepth`` is an error, not a stack overflow.
public enum ODataParser {
    /// The deepest expression accepted: levels of parentheses, `not`, unary minus, function calls
    /// and chained binary operators together. Long `or` chains of equalities read better as `in` lists.
    public static let maximumDepth = 200

    /// Parses a `$filter` text into an expression.
    public static func filter(_ text: String) throws -> FilterExpression {
        var parser = try FilterParser(ODataText(text, parameter: "$filter"))
        return try parser.parseFilter()
    }

    /// Parses an `$orderby` text (`priority desc, text`) into ordering keys; blank text gives none.
    /// Keys are column names followed by an optional `asc` or `desc` (any letter case).
    public static func orderBy(_ text: String) throws -> [SortKey] {
        let source = ODataText(text, parameter: "$orderby")
        return try names(in: source) { name, lexer, token in
            var descending = false
            if let direction = source.keyword(of: token), direction == "asc" || direction == "desc" {
                descending = direction == "desc"
                token = try lexer.next()
            }
            return SortKey(name, descending: descending)
        }
    }

    /// Parses a `$select` text (`text, complete`) into column names; `*` or blank text gives `nil`
    /// (every column).
    public static func select(_ text: String) throws -> [String]? {
        let trimmed = text.trimmingSpaces
        if trimmed.isEmpty || trimmed == "*" { return nil }
        return try names(in: ODataText(text, parameter: "$select")) { name, _, _ in name }
    }

    /// Builds a query from the text of the table protocol's query options, as they arrive in a
    /// request URL (already percent-decoded). Absent or blank options take their defaults.
    /// - Parameters:
    ///   - table: the table name.
    ///   - filter: `$filter`.
    ///   - orderBy: `$orderby`.
    ///   - skip: `$skip`, a non-negative integer.
    ///   - top: `$top`, a non-negative integer.
    ///   - select: `$select`.
    ///   - inlineCount: `$inlinecount`, `allpages` (count every match) or `none`.
    public static func query(
        table: String, filter: String? = nil, orderBy: String? = nil, skip: String? = nil,
        top: String? = nil, select: String? = nil, inlineCount: String? = nil
    ) throws -> Query {
        var query = Query(table: table)
        if let filter, filter.contains(where: { !$0.isWhitespace }) { query.filter = try self.filter(filter) }
        if let orderBy { query.orderBy = try self.orderBy(orderBy) }
        if let skip { query.skip = try count(skip, parameter: "$skip") }
        if let top { query.top = try count(top, parameter: "$top") }
        if let select { query.selection = try self.select(select) }
        switch inlineCount?.lowercased() {
        case nil, "none": break
        case "allpages": query.includeTotalCount = true
        case let other?:
            throw OfflineSyncError(.syntax, "$inlinecount '\(other)' is not understood; use 'allpages' or 'none'")
        }
        return query
    }

    private static func count(_ text: String, parameter: String) throws -> Int {
        guard let value = Int(text.trimmingSpaces), value >= 0 else {
            throw OfflineSyncError(.syntax, "\(parameter) '\(text)' is not a non-negative integer")
        }
        return value
    }

    /// Reads a comma-separated list of column names, each possibly followed by more tokens that
    /// `entry` consumes (it receives the name, the lexer and the token after the name).
    private static func names<T>(
        in source: ODataText,
        _ entry: (String, inout ODataLexer, inout ODataToken) throws -> T
    ) throws -> [T] {
        var lexer = ODataLexer(source)
        var token = try lexer.next()
        var result: [T] = []
        if token.kind == .end { return [] }
        while true {
            guard token.kind == .word else { throw source.unexpected(token, hint: "expected a column name") }
            let name = source.spelling(of: token)
            try validateColumn(name, token: token, in: source)
            token = try lexer.next()
            result.append(try entry(name, &lexer, &token))
            switch token.kind {
            case .end: return result
            case .comma: token = try lexer.next()
            default: throw source.unexpected(token, hint: "expected ',' or the end of \(source.parameter)")
            }
        }
    }

    static func validateColumn(_ name: String, token: ODataToken, in source: ODataText) throws {
        do {
            try Identifier.validate(name, kind: "column")
        } catch let error as OfflineSyncError {
            throw source.error("bad column name '\(name)'", at: token.start, hint: error.message)
        }
    }
}

/// A recursive-descent parser of one `$filter` text.
private struct FilterParser {
    /// An expression and the depth of its tree.
    struct Node {
        var expression: FilterExpression
        var depth: Int
    }

    let source: ODataText
    var lexer: ODataLexer
    var token: ODataToken
    /// Levels of recursion currently open (parentheses, `not`, function calls).
    var nesting = 0

    init(_ source: ODataText) throws {
        self.source = source
        self.lexer = ODataLexer(source)
        self.token = try lexer.next()
    }

    mutating func advance() throws {
        token = try lexer.next()
    }

    mutating func parseFilter() throws -> FilterExpression {
        if token.kind == .end {
            throw source.error("empty filter", at: token.start, hint: "write a condition such as complete eq false")
        }
        let node = try parseOr()
        guard token.kind == .end else {
            throw source.unexpected(token, hint: "expected 'and', 'or', a comparison or the end of the filter")
        }
        return node.expression
    }

    /// A node built at the current token, rejected when it makes the tree too deep. `chain` is
    /// the operator (`and`, `or`) when the node extends a chain of them, so the error can say
    /// that the chain's length, not parentheses, made it deep.
    func node(_ expression: FilterExpression, depth: Int, at offset: Int, chain: String? = nil) throws -> Node {
        guard depth <= ODataParser.maximumDepth else { throw tooDeep(at: offset, chain: chain) }
        return Node(expression: expression, depth: depth)
    }

    func tooDeep(at offset: Int, chain: String? = nil) -> OfflineSyncError {
        let limit = ODataParser.maximumDepth
        guard let chain else {
            return source.error(
                "expression nested deeper than \(limit) levels", at: offset,
                hint: "split the filter, or use 'in (…)' instead of long 'or' chains")
        }
        return source.error(
            "expression nested deeper than \(limit) levels: a chain of '\(chain)' terms nests one level per term, and this one has more than the limit allows",
            at: offset,
            hint: chain == "or"
                ? "use 'column in (value, …)' instead of a long chain of 'or' comparisons, or split the filter"
                : "split the filter into several queries")
    }

    mutating func enter() throws {
        nesting += 1
        guard nesting <= ODataParser.maximumDepth else { throw tooDeep(at: token.start) }
    }

    func isKeyword(_ keyword: String) -> Bool {
        source.keyword(of: token) == keyword
    }

    mutating func parseOr() throws -> Node {
        var left = try parseAnd()
        while isKeyword("or") {
            let at = token.start
            try advance()
            let right = try parseAnd()
            left = try node(
                .or(left.expression, right.expression), depth: max(left.depth, right.depth) + 1, at: at, chain: "or")
        }
        return left
    }

    mutating func parseAnd() throws -> Node {
        var left = try parseNot()
        while isKeyword("and") {
            let at = token.start
            try advance()
            let right = try parseNot()
            left = try node(
                .and(left.expression, right.expression), depth: max(left.depth, right.depth) + 1, at: at, chain: "and")
        }
        return left
    }

    mutating func parseNot() throws -> Node {
        guard isKeyword("not") else { return try parseComparison() }
        let at = token.start
        try enter()
        try advance()
        let operand = try parseNot()
        nesting -= 1
        return try node(.not(operand.expression), depth: operand.depth + 1, at: at)
    }

    mutating func parseComparison() throws -> Node {
        var left = try parseIn()
        while let keyword = source.keyword(of: token), let op = ComparisonOperator(rawValue: keyword) {
            let at = token.start
            try advance()
            let right = try parseIn()
            left = try node(
                .comparison(left.expression, op, right.expression), depth: max(left.depth, right.depth) + 1, at: at)
        }
        return left
    }

    mutating func parseIn() throws -> Node {
        var operand = try parseAdditive()
        while isKeyword("in") {
            let at = token.start
            try advance()
            guard token.kind == .leftParen else {
                throw source.unexpected(token, hint: "expected '(' to open the 'in' list")
            }
            try advance()
            var values: [Value] = []
            if token.kind != .rightParen {
                while true {
                    values.append(try literalValue(context: "expected a literal in the 'in' list"))
                    if token.kind == .rightParen { break }
                    guard token.kind == .comma else {
                        throw source.unexpected(token, hint: "expected ',' or ')' in the 'in' list")
                    }
                    try advance()
                }
            }
            try advance()
            operand = try node(.isIn(operand.expression, values), depth: operand.depth + 1, at: at)
        }
        return operand
    }

    mutating func parseAdditive() throws -> Node {
        try parseArithmetic(multiplicative: false)
    }

    /// A left-associative chain of the additive (or, with `multiplicative`, the multiplicative)
    /// operators.
    mutating func parseArithmetic(multiplicative: Bool) throws -> Node {
        var left = multiplicative ? try parseUnary() : try parseArithmetic(multiplicative: true)
        while let keyword = source.keyword(of: token), let op = ArithmeticOperator(rawValue: keyword),
            op.isMultiplicative == multiplicative
        {
            let at = token.start
            try advance()
            let right = multiplicative ? try parseUnary() : try parseArithmetic(multiplicative: true)
            left = try node(
                .arithmetic(left.expression, op, right.expression), depth: max(left.depth, right.depth) + 1, at: at)
        }
        return left
    }

    /// Unary minus (`-x`, `- -x`), or an operand.
    mutating func parseUnary() throws -> Node {
        guard token.kind == .minus else { return try parsePrimary() }
        let at = token.start
        try enter()
        try advance()
        let operand = try parseUnary()
        nesting -= 1
        return try node(.negate(operand.expression), depth: operand.depth + 1, at: at)
    }

    /// A literal token (a number, string, date, `null`, `true` or `false`), consumed.
    mutating func literalValue(context: String) throws -> Value {
        let value: Value
        switch token.kind {
        case .literal(let literal): value = literal
        case .word where isKeyword("null"): value = .null
        case .word where isKeyword("true"): value = .bool(true)
        case .word where isKeyword("false"): value = .bool(false)
        default: throw source.unexpected(token, hint: context)
        }
        try advance()
        return value
    }

    mutating func parsePrimary() throws -> Node {
        let start = token.start
        switch token.kind {
        case .literal:
            return Node(expression: .literal(try literalValue(context: "")), depth: 1)
        case .leftParen:
            try enter()
            try advance()
            let inner = try parseOr()
            guard token.kind == .rightParen else {
                throw source.unexpected(
                    token, hint: "expected ')' to close the '(' at column \(source.column(of: start))")
            }
            try advance()
            nesting -= 1
            return inner
        case .word:
            let keyword = source.keyword(of: token) ?? ""
            if keyword == "null" || keyword == "true" || keyword == "false" {
                return Node(expression: .literal(try literalValue(context: "")), depth: 1)
            }
            if ["and", "or", "not", "in"].contains(keyword) || ComparisonOperator(rawValue: keyword) != nil {
                let hint =
                    keyword == "not"
                    ? "put 'not …' in parentheses" : "expected an operand (a column, a literal or a function call)"
                throw source.unexpected(token, hint: hint)
            }
            var lookahead = lexer
            if try lookahead.next().kind == .leftParen {
                return try parseCall(keyword)
            }
            try ODataParser.validateColumn(source.spelling(of: token), token: token, in: source)
            let name = source.spelling(of: token)
            try advance()
            return Node(expression: .column(name), depth: 1)
        case .rightParen, .comma, .minus, .end:
            throw source.unexpected(token, hint: "expected an operand (a column, a literal or a function call)")
        }
    }

    /// A function call; the current token is its name, followed by `(`.
    mutating func parseCall(_ name: String) throws -> Node {
        let nameToken = token
        let function: Function
        if name == "substringof" {
            function = .contains
        } else if let known = Function(rawValue: name) {
            function = known
        } else {
            let known = (Function.allCases.map(\.rawValue) + ["substringof"]).joined(separator: ", ")
            throw source.error(
                "unknown function '\(source.spelling(of: nameToken))'", at: nameToken.start, hint: "use one of \(known)"
            )
        }
        try enter()
        try advance()
        try advance()
        var arguments: [Node] = []
        if token.kind != .rightParen {
            while true {
                arguments.append(try parseOr())
                if token.kind == .rightParen { break }
                guard token.kind == .comma else {
                    throw source.unexpected(token, hint: "expected ',' or ')' after an argument of \(name)")
                }
                try advance()
            }
        }
        try advance()
        nesting -= 1
        let arity = function.arity
        guard arity.contains(arguments.count) else {
            let expected =
                arity.count == 1 ? "\(arity.lowerBound)" : "\(arity.lowerBound) or \(arity.upperBound)"
            throw source.error(
                "\(name) takes \(expected) argument\(arity.upperBound == 1 ? "" : "s"), not \(arguments.count)",
                at: nameToken.start)
        }
        var expressions = arguments.map(\.expression)
        if name == "substringof" { expressions.reverse() }
        return try node(
            .function(function, expressions), depth: (arguments.map(\.depth).max() ?? 0) + 1, at: nameToken.start)
    }
}

extension String {
    var trimmingSpaces: Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? endIndex
        return start < end ? self[start..<end] : ""
    }
}
