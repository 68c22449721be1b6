import Foundation
import OfflineSync
import OfflineSyncSQLCipher
import OfflineSyncSQLite

/// A fresh directory under the system temporary directory, removed by ``remove()`` or, at the
/// latest, when the last reference goes (so a test that throws early leaves nothing behind).
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "offline-sync-sqlite-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}

/// The SQL backends under test, each making a fresh store at a path.
struct SQLBackend: Sendable, CustomStringConvertible {
    let name: String
    let make: @Sendable (String) throws -> any LocalStore

    var description: String { name }

    static let sqlite = SQLBackend(name: "sqlite") { SQLiteStore(path: $0) }
    static let sqlcipher = SQLBackend(name: "sqlcipher") {
        try SQLCipherStore(path: $0, key: .raw(Array(repeating: 0x42, count: 32)))
    }
    /// Both, without SQLCipher in a process built with a sanitizer (which cannot load it).
    static let all = SQLCipherLibrary.activeSanitizer == nil ? [sqlite, sqlcipher] : [sqlite]
}

/// A table with one column of every type, and rows that probe the edges of the value model.
enum Corpus {
    static let table = TableSchema(
        "t",
        columns: [
            Column("b", .bool), Column("i", .integer), Column("d", .double), Column("s", .string),
            Column("dt", .date), Column("j", .json),
        ], indexes: [TableIndex("by_s", on: ["s"])], synced: false)

    static let schema = StoreSchema([table])

    static func date(_ ms: Int64) -> Value { .date(Timestamp(millisecondsSince1970: ms)) }

    static let items: [Item] = [
        Item(id: "a", values: ["b": true, "i": 0, "d": -0.0, "s": "", "dt": date(-1), "j": .json("[]")]),
        Item(
            id: "B",
            values: ["b": false, "i": .int(Int64.max), "d": 0.0, "s": "abc", "dt": date(0), "j": .json("{\"a\":1}")]),
        Item(id: "c", values: ["i": .int(Int64.min), "d": 1.5, "s": "ABC", "dt": date(-86_400_000)]),
        Item(
            id: "d",
            values: [
                "b": true, "i": 9_007_199_254_740_993, "d": 9_007_199_254_740_992.0, "s": "Äbc é",
                "dt": date(-62_135_596_800_000),
            ]),
        Item(
            id: "e",
            values: ["i": -5, "d": -2.25, "s": "a\u{0}b", "dt": date(253_402_300_799_999), "j": .json("[1,2]")]),
        Item(id: "é", values: ["b": false, "i": 3, "d": 3.0, "s": "xyzabc", "dt": date(951_782_400_000)]),
        Item(id: "f", values: ["i": 3, "d": 1e300, "s": "😀 smile", "dt": date(-1_000)]),
        Item(id: "g", values: [:]),
        Item(
            id: "h",
            values: ["b": true, "i": 42, "d": -1e-300, "s": "abcabc", "dt": date(86_399_999), "j": .json("[\"abc\"]")]),
        Item(id: "j", values: ["s": "\u{0}é\u{0}\u{0}", "i": 7]),
        Item(id: "i", values: ["i": -1, "d": 0.1, "s": "MiXeD Case", "dt": date(-2_208_988_800_001)]),
    ]

    static let literals: [String: [Value]] = [
        "b": [true, false, nil],
        "i": [0, 3, -1, .int(Int64.max), 2.5, 9_007_199_254_740_992.0, nil],
        "d": [0, -0.0, 1.5, 3, 9_007_199_254_740_993, nil],
        "s": ["", "abc", "a", "ABC", "c", "a\u{0}", "é", nil],
        "dt": [date(0), date(-1), date(-86_400_000), nil],
        "j": [.json("[]"), "abc", "[\"abc\"]", nil],
        "id": ["a", "B", "é", "", nil],
    ]

    /// Filters covering every operator, function, null rule and boolean combination.
    static var filters: [FilterExpression] {
        var result: [FilterExpression] = []
        for (column, values) in literals.sorted(by: { $0.key < $1.key }) {
            for op in ComparisonOperator.allCases {
                for value in values {
                    let comparison = FilterExpression.comparison(.column(column), op, .literal(value))
                    result.append(comparison)
                    result.append(.not(comparison))
                    result.append(.comparison(.literal(value), op, .column(column)))
                }
            }
            result.append(.isIn(.column(column), values))
            result.append(.isIn(.column(column), values.filter { !$0.isNull }))
            result.append(.not(.isIn(.column(column), values)))
        }
        result.append(.column("b"))
        result.append(.not(.column("b")))
        result.append(.comparison(.not(.column("b")), .eq, .literal(true)))
        result.append(.comparison(.column("i"), .lt, .column("d")))
        result.append(.comparison(.column("i"), .eq, .column("d")))
        result.append(.comparison(.column("s"), .eq, .column("j")))
        for needle in ["", "abc", "a", "A", "bc", "\u{0}", "\u{0}b", "é", "😀", "c"] as [Value] {
            for function in [Function.startsWith, .endsWith, .contains] {
                let call = FilterExpression.function(function, [.column("s"), .literal(needle)])
                result.append(call)
                result.append(.not(call))
                result.append(.comparison(call, .eq, .literal(nil)))
                result.append(.comparison(call, .eq, .literal(false)))
            }
        }
        result.append(.not(.function(.startsWith, [.column("s"), .literal(nil)])))
        result.append(.function(.contains, [.column("s"), .column("s")]))
        result.append(.function(.endsWith, [.literal("xyzabc"), .column("s")]))
        for function in [Function.toLower, .toUpper] {
            for value in ["abc", "ABC", "äbc é", "Äbc é", "mixed case", "MIXED CASE"] as [Value] {
                result.append(.comparison(.function(function, [.column("s")]), .eq, .literal(value)))
            }
        }
        for length in 0...7 {
            result.append(.comparison(.function(.length, [.column("s")]), .eq, .literal(.int(Int64(length)))))
        }
        for function in [Function.year, .month, .day] {
            for value in [1, 12, 31, 1969, 1970, 2000, 9999, 29] as [Value] {
                result.append(.comparison(.function(function, [.column("dt")]), .eq, .literal(value)))
                result.append(.comparison(.function(function, [.column("dt")]), .gt, .literal(value)))
            }
            result.append(
                .comparison(.function(function, [.literal(date(-1))]), .eq, .function(function, [.column("dt")])))
        }
        result.append(.and(.column("b"), .comparison(.column("i"), .gt, .literal(0))))
        result.append(.or(.not(.column("b")), .comparison(.column("s"), .lt, .literal("b"))))
        result.append(.not(.and(.column("b"), .comparison(.column("d"), .ge, .literal(nil)))))
        result.append(.literal(true))
        result.append(.literal(false))
        result.append(.literal(nil))
        result.append(.not(.literal(nil)))
        result.append(.comparison(.literal(1), .lt, .literal(1.5)))
        return result
    }
}
