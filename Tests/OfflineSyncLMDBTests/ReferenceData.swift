import OfflineSync

@testable import OfflineSyncConformance

/// Rows for comparing LMDB with the reference store: every type, nulls, ties, the extremes, and
/// strings longer than an index key can hold.
enum ReferenceData {
    static let longTitle = String(repeating: "x", count: 300)
    static let titles: [Value] = [
        "a", "b", "B", "abc", "", "ab\u{0}c", "ab", "é", "e\u{301}", "zz",
        .string(longTitle + "1"), .string(longTitle + "2"), .string(longTitle), nil,
    ]
    static let ranks: [Value] = [0, 1, 2, 3, 3, -5, .int(.max), .int(.min), nil]
    static let scores: [Value] = [0.0, -0.0, 1.0, -1.5, 2.25, 1e300, -1e-300, 3, nil]
    static let dues: [Value] = [
        .date(Timestamp(millisecondsSince1970: 0)), .date(Timestamp(millisecondsSince1970: -86_400_000)),
        .date(Timestamp(year: 2020, month: 2, day: 29)!),
        .date(Timestamp(year: 2026, month: 1, day: 2, millisecond: 5)!), nil,
    ]
    static let flags: [Value] = [true, false, nil]
    static let tags: [Value] = [.json("[1,2]"), .json("{\"a\":1}"), nil]

    static func items(count: Int, seed: UInt64 = 42) -> [Item] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { number in
            var values: [String: Value] = [:]
            values["title"] = titles.randomElement(using: &random)
            values["rank"] = ranks.randomElement(using: &random)
            values["score"] = scores.randomElement(using: &random)
            values["due"] = dues.randomElement(using: &random)
            values["done"] = flags.randomElement(using: &random)
            values["tags"] = tags.randomElement(using: &random)
            values["version"] = .string("v\(number % 7)")
            let id = number % 50 == 0 ? "é-\(number)" : "n\(number)"
            return Item(id: id, values: values)
        }
    }

    static func cmp(_ column: String, _ op: ComparisonOperator, _ value: Value) -> FilterExpression {
        .comparison(.column(column), op, .literal(value))
    }

    /// Filters that exercise every access path: ids, index equality and ranges, scans.
    static let filters: [FilterExpression?] = [
        nil,
        cmp("rank", .eq, 3), cmp("rank", .eq, nil), cmp("rank", .ne, 3), cmp("rank", .gt, 2),
        .and(cmp("rank", .ge, 0), cmp("rank", .lt, 3)), cmp("rank", .lt, 2.5), cmp("rank", .eq, 3.0),
        cmp("rank", .eq, 2.5),
        .isIn(.column("rank"), [1, 3, nil]), .comparison(.literal(2), .lt, .column("rank")),
        cmp("rank", .ge, .int(.max)), cmp("rank", .le, .int(.min)), cmp("rank", .gt, 1e30),
        cmp("score", .eq, 0), cmp("score", .eq, -0.0), cmp("score", .gt, -1.5), cmp("score", .le, 2),
        cmp("score", .eq, 3),
        cmp("title", .eq, "b"), cmp("title", .gt, "m"), cmp("title", .ge, "ab"), cmp("title", .lt, "ab\u{0}d"),
        cmp("title", .eq, .string(longTitle + "2")), cmp("title", .ge, .string(longTitle + "1")),
        cmp("title", .gt, .string(longTitle)), .isIn(.column("title"), ["a", "zz", .string(longTitle)]),
        .function(.startsWith, [.column("title"), .literal("a")]),
        cmp("due", .lt, .date(Timestamp(millisecondsSince1970: 0))),
        .and(cmp("due", .ge, .date(Timestamp(year: 2020, month: 1, day: 1)!)), cmp("rank", .eq, 3)),
        cmp("done", .eq, true), cmp("done", .eq, false), .not(.column("done")),
        .and(cmp("done", .eq, true), cmp("title", .eq, "ab")),
        .and(.and(cmp("done", .eq, nil), cmp("title", .eq, nil)), cmp("rank", .eq, 3)),
        .and(cmp("done", .eq, false), cmp("title", .eq, .string(longTitle + "1"))),
        .and(cmp("done", .eq, true), .isIn(.column("title"), ["a", "b"])),
        cmp("id", .eq, "n5"), .isIn(.column("id"), ["n1", "n7", "n1", "missing", "é-50"]),
        .and(cmp("id", .ge, "n3"), cmp("id", .lt, "n5")), cmp("id", .gt, "n9"), cmp("id", .le, "n10"),
        cmp("id", .ge, ""), cmp("id", .gt, ""), cmp("id", .lt, ""), cmp("title", .ge, ""), cmp("title", .le, ""),
        .or(cmp("rank", .eq, 1), cmp("title", .eq, "b")),
        cmp("tags", .eq, .json("[1,2]")),
        .comparison(.function(.length, [.column("title")]), .gt, .literal(3)),
        .comparison(.function(.year, [.column("due")]), .eq, .literal(2020)),
    ]

    static let orderings: [[SortKey]] = [
        [], [SortKey("rank")], [SortKey("rank", descending: true)], [SortKey("title")],
        [SortKey("title", descending: true), SortKey("rank")], [SortKey("score")], [SortKey("due", descending: true)],
        [SortKey("id", descending: true)], [SortKey("done")],
    ]

    static let pages: [(skip: Int, top: Int?, count: Bool)] = [
        (0, nil, true), (0, 5, false), (3, 4, true), (2, 0, true),
    ]
}
