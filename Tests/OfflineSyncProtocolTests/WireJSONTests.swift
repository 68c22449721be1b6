import OfflineSync
import OfflineSyncProtocol
import Testing

@Suite struct WireJSONTests {
    @Test func aClientWriteCarriesNoSystemPropertiesAndTheIdFirst() throws {
        let item = Item(
            id: "a1",
            values: [
                "text": .string("milk"), "version": .string("MQ=="), "deleted": .bool(false),
                "updatedAt": .date(Timestamp(millisecondsSince1970: 0)),
            ])
        #expect(String(decoding: try WireJSON.encodeForWrite(item), as: UTF8.self) == #"{"id":"a1","text":"milk"}"#)
    }

    @Test func aClientWriteOfANewItemLeavesTheIdToTheServer() throws {
        let body = try WireJSON.encodeForWrite(Item(id: "", values: ["text": .string("milk")]))
        #expect(String(decoding: body, as: UTF8.self) == #"{"text":"milk"}"#)
    }

    @Test func anItemWhoseUpdatedAtIsNotADateIsRefusedNamingItAndTheProperty() {
        let body = Array(#"{"id": "a1", "updatedAt": "yesterday"}"#.utf8)
        #expect {
            try WireJSON.decodeItem(body)
        } throws: { error in
            let message = (error as? WireFormatError)?.message ?? ""
            return message.contains("'a1'") && message.contains("updatedAt") && message.contains("yesterday")
        }
    }

    @Test func aPageWhoseDeletedIsNotABooleanIsRefused() {
        let body = Array(#"[{"id": "a1", "deleted": "no"}]"#.utf8)
        #expect(throws: WireFormatError.self) { try WireJSON.decodePage(body) }
    }

    @Test func aTruncatedBodySaysItMayHaveBeenTruncated() {
        #expect {
            try WireJSON.decodeItem(Array(#"{"id": "a1", "text": "mi"#.utf8))
        } throws: { error in
            (error as? WireFormatError)?.message.contains("truncated") == true
        }
    }

    @Test func aRequestBodyMayLackAnIdAndNestJSON() throws {
        let values = try WireJSON.decodeObject(Array(#"{"text": "milk", "tags": ["a", "b"]}"#.utf8))
        #expect(values["text"] == .string("milk"))
        #expect(values["tags"] == .json(#"["a","b"]"#))
        #expect(values["id"] == nil)
    }

    @Test func aRequestBodyThatIsNotAnObjectIsRefused() {
        #expect(throws: WireFormatError.self) { try WireJSON.decodeObject(Array("[1, 2]".utf8)) }
        #expect(throws: WireFormatError.self) { try WireJSON.decodeObject([]) }
    }
}
