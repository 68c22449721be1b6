import OfflineSync

/// Tables and helpers shared by the store-tier groups.
enum Fixtures {
    /// A synced table with one column of every type.
    static let notes = TableSchema(
        "notes",
        columns: [
            Column("title", .string), Column("priority", .integer), Column("score", .double),
            Column("done", .bool), Column("due", .date), Column("tags", .json),
        ],
        indexes: [
            TableIndex("notes_priority", on: ["priority"]), TableIndex("notes_title_score", on: ["title", "score"]),
        ])

    /// A plain (unsynced) table of one column per type, used for value round trips.
    static let values = TableSchema(
        "values",
        columns: [
            Column("b", .bool), Column("i", .integer), Column("d", .double),
            Column("s", .string), Column("t", .date), Column("j", .json),
        ], synced: false)

    /// Small unsynced tables for multi-table transactions.
    static let left = TableSchema("lefts", columns: [Column("n", .integer), Column("s", .string)], synced: false)
    static let right = TableSchema("rights", columns: [Column("n", .integer), Column("s", .string)], synced: false)

    /// The schema holding every fixture table.
    static let schema = StoreSchema([notes, values, left, right])

    /// A note with the given values.
    static func note(
        _ id: String, title: String? = nil, priority: Int64? = nil, score: Double? = nil,
        done: Bool? = nil
    ) -> Item {
        var item = Item(id: id)
        if let title { item["title"] = .string(title) }
        if let priority { item["priority"] = .int(priority) }
        if let score { item["score"] = .double(score) }
        if let done { item["done"] = .bool(done) }
        return item
    }
}

extension CaseContext {
    /// Every row of `table`, ordered by id; records a failure and answers `[]` when the read throws.
    func allRows(_ store: any LocalStore, _ table: String) -> [Item] {
        attempt("read(\(table)) of every row") { try store.read(Query(table: table)).items } ?? []
    }

    /// Checks that `table` holds exactly `expected` (in id order), naming the first difference.
    func expectRows(
        _ store: any LocalStore, _ table: String, _ expected: [Item], _ operation: @autoclosure () -> String
    ) {
        let sorted = expected.sorted { ValueSemantics.compareBytes($0.id, $1.id) < 0 }
        if let difference = RowDifference.first(expected: sorted, actual: allRows(store, table)) {
            fail("\(operation()): table '\(table)' \(difference)")
        }
    }

    /// Checks that `lookup(table, id)` answers `expected` (or `nil`).
    func expectLookup(
        _ store: any LocalStore, _ table: String, _ id: String, _ expected: Item?,
        _ operation: @autoclosure () -> String
    ) {
        let shown = RowDifference.escaped(id)
        guard let found = attempt("lookup(\(table), id '\(shown)')", { try store.lookup(table: table, id: id) }) else {
            return
        }
        switch (expected, found) {
        case (nil, nil): return
        case (nil, let found?): fail("\(operation()): lookup(\(table), id '\(shown)') expected no row, got \(found)")
        case (let expected?, nil):
            fail("\(operation()): lookup(\(table), id '\(shown)') expected \(expected), got no row")
        case (let expected?, let found?):
            if let difference = RowDifference.first(expected: [expected], actual: [found]) {
                fail("\(operation()): lookup(\(table), id '\(shown)') \(difference)")
            }
        }
    }
}

/// The first difference between two row lists, described for a failure message.
enum RowDifference {
    /// `nil` when the lists are equal row for row (ids byte-wise, values exactly, absent = null).
    static func first(expected: [Item], actual: [Item]) -> String? {
        for (position, (want, got)) in zip(expected, actual).enumerated() {
            guard want.id.utf8.elementsEqual(got.id.utf8) else {
                return "row \(position): expected id '\(escaped(want.id))', got id '\(escaped(got.id))'"
            }
            let columns = Set(want.values.keys).union(got.values.keys).sorted()
            for column in columns where want[column] != got[column] {
                return
                    "id '\(escaped(want.id))' column '\(column)': expected \(show(want[column])), got \(show(got[column]))"
            }
        }
        if expected.count != actual.count {
            let extra =
                actual.count > expected.count
                ? "unexpected rows from id '\(escaped(actual[expected.count].id))'"
                : "missing rows from id '\(escaped(expected[actual.count].id))'"
            return "expected \(expected.count) rows, got \(actual.count) (\(extra))"
        }
        return nil
    }

    /// A value as a failure message shows it: type, sign of zero and invisible characters made visible.
    static func show(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .double(let number):
            return "double \(number)"
                + (number == 0 ? (number.sign == .minus ? " (negative zero)" : " (positive zero)") : "")
        case .string(let text):
            let bytes = text.utf8.count
            return bytes > 80
                ? "string of \(bytes) UTF-8 bytes starting '\(escaped(String(text.prefix(20))))'"
                : "string '\(escaped(text))'"
        case .int(let number): return "int \(number)"
        case .bool(let flag): return "bool \(flag)"
        case .date(let date): return "date \(date.iso8601) (\(date.millisecondsSince1970) ms)"
        case .json(let text): return "json \(escaped(text))"
        }
    }

    /// Non-ASCII and control characters as `\u{…}`, so precomposed and decomposed text differ visibly.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7F {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return result
    }
}

/// Comparison of a store's answer with ``OfflineSync/QueryEvaluator`` over the same rows.
enum Reference {
    /// `nil` when `answer` equals what the reference evaluator computes for `query` over `rows`;
    /// otherwise the first difference (or the error the read threw), for a failure message.
    static func difference(
        _ query: Query, rows: [Item], schema: TableSchema,
        answer: () throws -> QueryResult
    ) -> String? {
        let expected: QueryResult
        do {
            expected = try QueryEvaluator(query: query, schema: schema).run(over: rows)
        } catch {
            return "the reference evaluator rejects the query: \(CaseContext.describe(error))"
        }
        let actual: QueryResult
        do {
            actual = try answer()
        } catch {
            return "threw \(CaseContext.describe(error))"
        }
        if let difference = RowDifference.first(expected: expected.items, actual: actual.items) {
            return difference
        }
        if expected.totalCount != actual.totalCount {
            return
                "total count: expected \(expected.totalCount.map(String.init) ?? "nil"), got \(actual.totalCount.map(String.init) ?? "nil")"
        }
        return nil
    }
}

extension CaseContext {
    /// Checks that the store answers `query` exactly as the reference evaluator does over `rows`
    /// (the rows the table holds, as written).
    func expectReference(_ store: any LocalStore, _ query: Query, rows: [Item], schema: TableSchema) {
        let stored = rows.compactMap { try? schema.normalize($0, origin: .local) }
        if let difference = Reference.difference(query, rows: stored, schema: schema, answer: { try store.read(query) })
        {
            fail("read(\(query.table)) \(query): \(difference)")
        }
    }
}
