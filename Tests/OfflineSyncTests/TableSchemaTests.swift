import Testing

@testable import OfflineSync

@Suite struct TableSchemaTests {
    let todo = TableSchema(
        "todoitem",
        columns: [
            Column("text", .string), Column("priority", .integer),
            Column("score", .double), Column("due", .date),
        ])

    @Test func normalizedRowsAcceptAndRejectWhatNormalizeDoes() throws {
        let items: [(Item, WriteOrigin)] = [
            (Item(id: "a", values: ["text": "x", "priority": .int(2)]), .local),
            (
                Item(id: "a", values: ["priority": .double(3), "score": .int(2), "due": "2026-01-02T03:04:05.678Z"]),
                .server
            ),
            (Item(id: "a", values: ["colour": "red", "text": "x", "score": .null]), .server),
            (Item(id: "a", values: ["colour": "red"]), .local),
            (Item(id: "a", values: ["priority": .string("3")]), .local),
            (Item(id: "a", values: ["score": .double(.infinity)]), .server),
            (Item(id: "", values: ["text": "x"]), .local),
            (Item(id: "a", values: ["id": "a", "deleted": .bool(true)]), .local),
        ]
        for (item, origin) in items {
            let expected = Result { try todo.normalize(item, origin: origin) }
            let row = Result { try todo.normalizedRow(item, origin: origin) }
            switch (expected, row) {
            case (.success(let normalized), .success(let row)):
                #expect(row == todo.columns.map { normalized.values[$0.name] ?? .null }, "row of \(item)")
            case (.failure(let expectedError as OfflineSyncError), .failure(let error as OfflineSyncError)):
                #expect(error == expectedError, "error for \(item)")
            default:
                Issue.record("normalize gave \(expected) but normalizedRow gave \(row) for \(item)")
            }
        }
    }

    @Test("a value error names the item, the column and the kind of value, never the value")
    func valueErrorsNeverQuoteTheValue() throws {
        let secret = "hunter2-card-4111111111111111"
        for item in [
            Item(id: "a", values: ["priority": .string(secret)]),
            Item(id: "a", values: ["due": .string(secret)]),
            Item(id: "a", values: ["score": .string(secret)]),
        ] {
            let error = try #require(throws: OfflineSyncError.self) { try todo.normalize(item, origin: .local) }
            #expect(error.message.contains("'a'") && error.message.contains("string"), "\(error)")
            #expect(!error.message.contains("hunter2"), "\(error)")
        }
    }

    @Test("date text whose offset carries it past year 9999 or before year 1 is refused, as a date value there is")
    func dateTextOutsideTheYearsIsRefused() throws {
        for text in ["9999-12-31T23:59:59.999-07:00", "0001-01-01T00:00:00.000+01:00"] {
            let error = try #require(throws: OfflineSyncError.self) {
                try todo.normalize(Item(id: "a", values: ["due": .string(text)]), origin: .local)
            }
            #expect(error.message.contains("outside the years 1 to 9999"), "\(error)")
        }
        let inside = try todo.normalize(Item(id: "a", values: ["due": "9999-12-31T16:59:59.999-07:00"]), origin: .local)
        #expect(inside.values["due"] == .date(.maximum))
    }

    @Test func syncedTablesGetTheSystemProperties() {
        #expect(todo.column(named: "updatedAt")?.type == .date)
        #expect(todo.column(named: "version")?.type == .string)
        #expect(todo.column(named: "deleted")?.type == .bool)
        #expect(TableSchema("plain", columns: [], synced: false).columns.isEmpty)
    }

    @Test func localWritesRejectUnknownColumns() throws {
        let error = #expect(throws: OfflineSyncError.self) {
            try todo.normalize(Item(id: "a", values: ["colour": "red"]), origin: .local)
        }
        #expect(error?.code == .unknownColumn)
        #expect(error?.message.contains("'colour'") == true)
    }

    @Test func serverWritesDropUnknownColumns() throws {
        let item = try todo.normalize(Item(id: "a", values: ["colour": "red", "text": "x"]), origin: .server)
        #expect(item.values == ["text": "x"])
    }

    @Test func valuesAreConvertedToTheColumnType() throws {
        let item = try todo.normalize(
            Item(
                id: "a",
                values: [
                    "priority": .double(3), "score": .int(2),
                    "due": "2026-01-02T03:04:05.678Z",
                ]), origin: .server)
        #expect(item["priority"] == .int(3))
        #expect(item["score"] == .double(2))
        #expect(item["due"] == .date(Timestamp(iso8601: "2026-01-02T03:04:05.678Z")!))
    }

    @Test func mismatchedValuesAreRejected() {
        for value: Value in [.string("3"), .double(3.5), .bool(true)] {
            #expect(throws: OfflineSyncError.self) {
                try todo.normalize(Item(id: "a", values: ["priority": value]), origin: .local)
            }
        }
        #expect(throws: OfflineSyncError.self) {
            try todo.normalize(Item(id: "a", values: ["score": .double(.nan)]), origin: .local)
        }
        #expect(throws: OfflineSyncError.self) {
            try todo.normalize(Item(id: "a", values: ["due": "tomorrow"]), origin: .local)
        }
    }

    @Test func datesOutsideYears1To9999AreRejected() throws {
        for outside in [
            Timestamp.minimum.millisecondsSince1970 - 1, Timestamp.maximum.millisecondsSince1970 + 1, .min, .max,
        ] {
            #expect(throws: OfflineSyncError.self) {
                try todo.normalize(
                    Item(id: "a", values: ["due": .date(Timestamp(millisecondsSince1970: outside))]), origin: .local)
            }
        }
        for edge in [Timestamp.minimum, .maximum] {
            #expect(
                try todo.normalize(Item(id: "a", values: ["due": .date(edge)]), origin: .local)["due"] == .date(edge))
        }
    }

    @Test func nullsAreRemoved() throws {
        #expect(try todo.normalize(Item(id: "a", values: ["text": .null]), origin: .local).values.isEmpty)
    }

    @Test func idsMustBeShortAndNonEmpty() {
        #expect(throws: OfflineSyncError.self) { try todo.normalize(Item(id: ""), origin: .local) }
        #expect(throws: OfflineSyncError.self) {
            try todo.normalize(Item(id: String(repeating: "x", count: 256)), origin: .local)
        }
        #expect(throws: OfflineSyncError.self) { try todo.normalize(Item(id: "a\u{0}b"), origin: .local) }
    }

    @Test func identifiersFollowTheGrammar() {
        for bad in ["", "1abc", "a-b", "a b", "é", String(repeating: "a", count: 129)] {
            #expect(throws: OfflineSyncError.self, "\(bad)") { try Identifier.validate(bad, kind: "column") }
        }
        #expect(throws: OfflineSyncError.self) { try Identifier.validateUserTable("__operations") }
        #expect(throws: Never.self) { try Identifier.validate("_a1", kind: "column") }
    }

    @Test func namesWithAPrefixTheStoreReservesAreRejectedInAnyLetterCase() throws {
        #expect(throws: Never.self) { try Identifier.validate("db_master", kind: "table") }
        let error = try #require(throws: OfflineSyncError.self) {
            try Identifier.validate("DB_master", kind: "table", reservedPrefixes: ["db_"])
        }
        #expect(error.code == .invalidName)
        #expect(error.message.contains("'DB_master'") && error.message.contains("'db_'"), "\(error)")
        let schema = StoreSchema([
            TableSchema("t", columns: [Column("n", .integer)], indexes: [TableIndex("db_n", on: ["n"])])
        ])
        #expect(throws: Never.self) { try schema.validate() }
        #expect(throws: OfflineSyncError.self) { try schema.validate(reservedPrefixes: ["db_"]) }
    }

    @Test func duplicateColumnsDifferingInCaseAreRejected() {
        let schema = TableSchema("t", columns: [Column("Name", .string), Column("name", .string)])
        #expect(throws: OfflineSyncError.self) { try schema.validate() }
    }

    @Test func reopeningWidensButNeverRetypes() throws {
        let wider = try todo.merged(with: TableSchema("todoitem", columns: [Column("tags", .json)]))
        #expect(wider.column(named: "tags")?.type == .json)
        #expect(wider.column(named: "text")?.type == .string)
        #expect(throws: OfflineSyncError.self) {
            try todo.merged(with: TableSchema("todoitem", columns: [Column("text", .integer)]))
        }
    }
}
