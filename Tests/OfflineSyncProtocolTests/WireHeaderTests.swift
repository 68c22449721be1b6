import OfflineSyncProtocol
import Testing

@Suite struct WireHeaderTests {
    @Test func strongEntityTagsCarryTheVersionInQuotes() {
        #expect(ETag.quoted("MQ==") == "\"MQ==\"")
        #expect(ETag.version(fromStrong: ETag.quoted("MQ==")) == "MQ==")
    }

    @Test func weakOrUnquotedEntityTagsCarryNoVersion() {
        #expect(ETag.version(fromStrong: "W/\"15f-IFKEG8NX\"") == nil)
        #expect(ETag.version(fromStrong: "MQ==") == nil)
        #expect(ETag.version(fromStrong: "\"") == nil)
    }

    @Test func pathsPercentEncodeTableAndId() {
        #expect(TablePath.table("todoitem") == "/tables/todoitem")
        #expect(TablePath.item("todoitem", "a/b?c") == "/tables/todoitem/a%2Fb%3Fc")
    }

    @Test func onlyVersion2_0OfTheProtocolIsSupported() {
        #expect(WireHeader.isSupportedAPIVersion(WireHeader.apiVersionValue))
        #expect(WireHeader.isSupportedAPIVersion("2.0.17"))
        #expect(!WireHeader.isSupportedAPIVersion("2.1.0"))
        #expect(!WireHeader.isSupportedAPIVersion("1.0.0"))
        #expect(!WireHeader.isSupportedAPIVersion("2.0"))
        #expect(!WireHeader.isSupportedAPIVersion("2.0.x"))
    }
}
