import OfflineSyncProtocol
import Testing

@Suite struct PercentEncodingTests {
    @Test func componentsEscapeEverythingButTheUnreservedCharactersOfEncodeURIComponent() {
        #expect(PercentEncoding.component("a-b_c.d!e~f*g(h)") == "a-b_c.d!e~f*g(h)")
        #expect(PercentEncoding.component("a/b?c#d e'f") == "a%2Fb%3Fc%23d%20e%27f")
        #expect(PercentEncoding.component("é") == "%C3%A9")
    }

    @Test func queryValuesKeepTheCharactersOfDatesAndListsLiteral() {
        #expect(
            PercentEncoding.queryValue("updatedAt ge datetimeoffset'2026-11-22T00:04:43.885Z'")
                == "updatedAt%20ge%20datetimeoffset%272026-11-22T00:04:43.885Z%27")
        #expect(PercentEncoding.queryValue("text,complete") == "text,complete")
        #expect(PercentEncoding.queryValue("a&b=c+d#e%") == "a%26b%3Dc%2Bd%23e%25")
    }

    @Test func decodingUndoesEncoding() {
        let text = "id/with?odd#chars 'and' é"
        #expect(PercentEncoding.decode(PercentEncoding.component(text)) == text)
        #expect(PercentEncoding.decode(PercentEncoding.queryValue(text)) == text)
    }

    @Test func plusReadsAsASpaceOnlyWhenAsked() {
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentEncoding.decode("a+b") == "a+b")
    }

    @Test func malformedEscapesAndInvalidUTF8DecodeToNil() {
        #expect(PercentEncoding.decode("%") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%FF") == nil)
    }
}
