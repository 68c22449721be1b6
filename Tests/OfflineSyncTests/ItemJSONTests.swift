import Testing
@testable import OfflineSync

/// The text form of items kept in the system tables round-trips every value exactly.
@Suite struct ItemJSONTests {
    @Test func everyValueTypeRoundTripsExactly() throws {
        let item = Item(id: "id \"quoted\" \\ é \u{1F600}", values: [
            "flag": true, "off": false, "int": .int(Int64.min), "max": .int(Int64.max),
            "double": .double(-0.0), "whole": .double(3), "tiny": .double(1e-300),
            "text": .string("line\nbreak\ttab \u{1} control \u{1F600}"),
            "date": .date(Timestamp(millisecondsSince1970: -1)), "json": .json("{\"a\": [1, 2]}"),
        ])
        let decoded = try ItemJSON.decode(ItemJSON.encode(item))
        #expect(decoded == item)
        #expect(decoded["double"].doubleValue?.sign == .minus)
        #expect(decoded["whole"] == .double(3))
    }

    @Test func damagedTextIsAStorageErrorNotACrash() {
        for text in ["", "{", "{\"id\":1}", "{\"id\":\"a\",\"x\":{\"$other\":\"y\"}}", "{\"id\":\"a\",\"x\":12a}", "{\"id\":\"a\"} extra"] {
            #expect(throws: OfflineSyncError.self) { try ItemJSON.decode(text) }
        }
    }
}
