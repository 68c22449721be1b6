import Foundation
import Testing

@testable import OfflineSync

/// Items keep their values by position in a shared ``RowLayout``; these pin down that the
/// dictionary-shaped API still means what it meant, and that rows built on a schema's layout are
/// read by position.
@Suite struct ItemLayoutTests {
    let todo = TableSchema("todo", columns: [Column("text", .string), Column("done", .bool), Column("rank", .double)])

    @Test func aSchemaHasOneLayoutInColumnOrderSharedByItsCopies() {
        let copy = todo
        #expect(todo.rowLayout.names == todo.columns.map(\.name))
        #expect(copy.rowLayout === todo.rowLayout)
    }

    @Test func widenedSchemaGetsALayoutWithTheNewColumn() throws {
        let wider = try todo.merged(with: TableSchema("todo", columns: [Column("note", .string)]))
        #expect(wider.rowLayout.names == wider.columns.map(\.name))
        #expect(wider.rowLayout.names.contains("note"))
        #expect(!todo.rowLayout.names.contains("note"))
    }

    @Test func decodedSchemaRebuildsItsLayout() throws {
        let decoded = try JSONDecoder().decode(TableSchema.self, from: JSONEncoder().encode(todo))
        #expect(decoded == todo)
        #expect(decoded.rowLayout.names == todo.columns.map(\.name))
    }

    /// The system properties are found by position on every kind of layout: a schema's (where
    /// they come last), one built from a dictionary, one widened by a subscript, and none.
    @Test func systemPropertiesReadTheSameOnEveryLayout() throws {
        let synced = TableSchema("todo", columns: [Column("text", .string)])
        let stamp = Timestamp(millisecondsSince1970: 1_700_000_000_123)
        let created = Timestamp(millisecondsSince1970: 1_600_000_000_000)
        var values = [Value?](repeating: nil, count: synced.rowLayout.names.count)
        for (position, name) in synced.rowLayout.names.enumerated() {
            switch name {
            case "updatedAt": values[position] = .date(stamp)
            case "createdAt": values[position] = .date(created)
            case "version": values[position] = .string("v2")
            case "deleted": values[position] = .bool(true)
            default: values[position] = .string("milk")
            }
        }
        let onSchema = Item(id: "1", layout: synced.rowLayout, values: values)
        let fromDictionary = Item(
            id: "1",
            values: [
                "deleted": true, "text": "milk", "version": "v2", "updatedAt": .date(stamp),
                "createdAt": .date(created),
            ])
        var widened = Item(id: "1", values: ["text": "milk"])
        widened["version"] = "v2"
        widened["deleted"] = true
        widened["createdAt"] = .date(created)
        widened["updatedAt"] = .date(stamp)
        for item in [onSchema, fromDictionary, widened] {
            #expect(item.updatedAt == stamp)
            #expect(item.createdAt == created)
            #expect(item.version == "v2")
            #expect(item.isDeleted)
        }
        widened.removeValue(forColumn: "updatedAt")
        widened["deleted"] = false
        #expect(widened.updatedAt == nil)
        #expect(!widened.isDeleted)
        let bare = Item(id: "2")
        #expect(bare.updatedAt == nil && bare.createdAt == nil && bare.version == nil && !bare.isDeleted)
    }

    @Test func itemOnTheSchemaLayoutReadsByName() {
        var values = [Value?](repeating: nil, count: todo.rowLayout.names.count)
        values[0] = .string("milk")
        values[1] = .bool(false)
        let item = Item(id: "1", layout: todo.rowLayout, values: values)
        #expect(item["text"] == .string("milk"))
        #expect(item["done"] == .bool(false))
        #expect(item["rank"] == .null)
        #expect(item["id"] == .string("1"))
        #expect(item.values == ["text": .string("milk"), "done": .bool(false)])
        #expect(item == Item(id: "1", values: ["done": false, "text": "milk", "rank": .null]))
    }

    @Test func absentAndExplicitNullStayDistinctInValuesButEqual() {
        var item = Item(id: "1", values: ["text": "a"])
        item["done"] = .null
        #expect(item.values == ["text": "a", "done": .null])
        #expect(item.hasValue(forColumn: "done"))
        item.removeValue(forColumn: "done")
        #expect(item.values == ["text": "a"])
        #expect(!item.hasValue(forColumn: "done"))
        #expect(item == Item(id: "1", values: ["text": "a", "done": .null]))
    }

    @Test func settingValuesReplacesEveryColumn() {
        var item = Item(id: "1", values: ["text": "a", "done": true])
        item.values["text"] = nil
        item.values["rank"] = .double(2)
        #expect(item.values == ["done": true, "rank": .double(2)])
        item.values = [:]
        #expect(item.values.isEmpty)
        #expect(item["done"] == .null)
    }

    @Test func normalizeLaysAnItemOutOnTheSchemaAndKeepsALaidOutOneAsItIs() throws {
        let normalized = try todo.normalize(Item(id: "1", values: ["text": "a", "rank": .int(3)]), origin: .local)
        #expect(normalized.layout === todo.rowLayout)
        #expect(normalized["rank"] == .double(3))
        #expect(normalized.values == ["text": "a", "rank": .double(3)])
        let again = try todo.normalize(normalized, origin: .local)
        #expect(again.layout === todo.rowLayout)
        #expect(again.values == normalized.values)
    }

    @Test func storedValuesOfALaidOutItemAreConvertedAndChecked() throws {
        var values = [Value?](repeating: nil, count: todo.rowLayout.names.count)
        values[2] = .int(4)
        var seen: [Int: Value] = [:]
        try todo.forEachStoredValue(of: Item(id: "1", layout: todo.rowLayout, values: values), origin: .local) {
            seen[$0] = $1
        }
        #expect(seen == [2: .double(4)])
        values[1] = .string("not a bool")
        #expect(throws: OfflineSyncError.self) {
            try todo.normalizedRow(Item(id: "1", layout: todo.rowLayout, values: values), origin: .local)
        }
        #expect(throws: OfflineSyncError.self) {
            try todo.normalizedRow(Item(id: "", layout: todo.rowLayout, values: values), origin: .local)
        }
    }

    @Test func aSchemaReadsItemsOfAnotherLayoutByName() throws {
        let row = try todo.normalizedRow(Item(id: "1", values: ["rank": .double(1), "text": "t"]), origin: .local)
        #expect(row[0] == .string("t"))
        #expect(row[2] == .double(1))
        #expect(throws: OfflineSyncError.self) {
            try todo.normalizedRow(Item(id: "1", values: ["nope": 1]), origin: .local)
        }
        #expect(
            try todo.normalizedRow(Item(id: "1", values: ["nope": 1]), origin: .server)
                == Array(repeating: .null, count: todo.columns.count))
    }

    @Test func wideLayoutsFindEveryColumn() {
        let names = (0..<40).map { "c\($0)" }
        let item = Item(
            id: "w", values: Dictionary(uniqueKeysWithValues: names.map { ($0, Value.int(Int64($0.count))) }))
        for name in names { #expect(item[name] == .int(Int64(name.count))) }
        #expect(item["c40"] == .null)
    }

    /// Setting a column the item lacks appends it to a new layout, which keeps the positions the
    /// old one found (system properties, the name table of a wide layout) and adds the new one's.
    @Test func columnsSetOneByOneAreFoundAcrossTheLinearSearchLimit() {
        var item = Item(id: "grown")
        let stamp = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        var names: [String] = []
        for index in 0..<(RowLayout.linearSearchLimit + 8) {
            let name = "column\(index)"
            item[name] = .int(Int64(index))
            names.append(name)
            if index == 3 { item[SystemProperty.updatedAt.rawValue] = .date(stamp) }
            if index == RowLayout.linearSearchLimit + 2 { item[SystemProperty.deleted.rawValue] = .bool(true) }
            for (position, name) in names.enumerated() { #expect(item[name] == .int(Int64(position))) }
        }
        #expect(item.updatedAt == stamp)
        #expect(item.isDeleted)
        #expect(item.version == nil && item["version"] == .null)
        item["version"] = "v1"
        #expect(item.version == "v1")
        #expect(item["column0"] == .int(0) && item["column23"] == .int(23))
    }

    @Test func jsonPageItemsWithTheSameMembersShareOneLayout() throws {
        let page = try JSONCodec.decodeItems(
            Array(#"[{"id":"1","a":1,"b":2},{"id":"2","a":3,"b":4},{"id":"3","b":5}]"#.utf8))
        #expect(page[0].layout === page[1].layout)
        #expect(page[2].layout !== page[1].layout)
        #expect(page.map(\.values) == [["a": 1, "b": 2], ["a": 3, "b": 4], ["b": 5]])
    }

    @Test func jsonItemWithARepeatedMemberIsRejectedAfterASharedPrefix() throws {
        #expect(throws: OfflineSyncError.self) {
            try JSONCodec.decodeItems(Array(#"[{"id":"1","a":1,"b":2},{"id":"2","a":3,"a":4}]"#.utf8))
        }
        let many = (0..<40).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        #expect(throws: OfflineSyncError.self) {
            try JSONCodec.decodeItem(Array(("{\"id\":\"x\"," + many + ",\"m3\":1}").utf8))
        }
        #expect(try JSONCodec.decodeItem(Array(("{\"id\":\"x\"," + many + "}").utf8)).values.count == 40)
    }

    @Test func selectionLaysOutOnlyTheSelectedColumns() throws {
        let evaluator = try QueryEvaluator(
            query: Query(table: "todo", selection: ["done", "id", "done"]), schema: todo)
        let selected = evaluator.select(Item(id: "1", values: ["text": "a", "done": true]))
        #expect(selected.layout.names == ["done"])
        #expect(selected.values == ["done": true])
    }
}
