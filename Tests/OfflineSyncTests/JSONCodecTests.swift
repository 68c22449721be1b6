import Testing

@testable import OfflineSync
@testable import OfflineSyncConformance

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func value(_ json: String) throws -> Value { try JSONCodec.decodeValue(Array(json.utf8)) }

/// The error that decoding `bytes` with `decode` throws, or `nil` when it succeeds.
private func failure<T>(_ bytes: [UInt8], _ decode: ([UInt8]) throws -> T = JSONCodec.decodeItem) -> OfflineSyncError? {
    do {
        _ = try decode(bytes)
        return nil
    } catch let error as OfflineSyncError {
        return error
    } catch {
        Issue.record("unexpected \(error)")
        return nil
    }
}

private func failure(_ json: String) -> OfflineSyncError? { failure(Array(json.utf8)) }

private func expectFailure(
    _ error: OfflineSyncError?, _ code: OfflineSyncError.Code, offset: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error?.code == code, sourceLocation: sourceLocation)
    #expect(
        error?.message.contains("at byte offset \(offset):") == true, "\(String(describing: error))",
        sourceLocation: sourceLocation)
}

@Suite struct JSONCodecRoundTripTests {
    static let everyValue: Item = Item(
        id: "every-value",
        values: [
            "null": .null, "yes": true, "no": false,
            "zero": 0, "min": .int(.min), "max": .int(.max), "negative": -17,
            "tenth": 0.1, "negativeZero": .double(-0.0), "smallest": .double(.leastNonzeroMagnitude),
            "largest": .double(.greatestFiniteMagnitude), "integralDouble": 3.0, "big": 1e300,
            "empty": "", "unicode": "héllo wörld 中文 👋🏽 e\u{301}", "controls": "\u{0}\u{1}\n\r\t\u{8}\u{C}\u{1F}\"\\/",
            "array": .json(#"[1,"two",[3.5,null],{"k":true}]"#), "object": .json(#"{"a":{"b":[]},"c":"\n"}"#),
            "createdAt": .date(Timestamp(millisecondsSince1970: -1)),
            "updatedAt": .date(Timestamp(millisecondsSince1970: -62_135_596_800_000)),
        ])

    @Test func readsBackEveryValueTypeExactly() throws {
        let decoded = try JSONCodec.decodeItem(try JSONCodec.encode(Self.everyValue))
        #expect(decoded == Self.everyValue)
        #expect(decoded.values.count == Self.everyValue.values.count)
    }

    @Test func writesCompactJSONWithIdFirstAndMembersInNameOrder() throws {
        let item = Item(id: "a", values: ["z": 1, "b": "x", "m": .double(-0.0)])
        #expect(text(try JSONCodec.encode(item)) == #"{"id":"a","b":"x","m":-0.0,"z":1}"#)
    }

    @Test func readsBackA1MiBString() throws {
        let long = String(repeating: "abcdefé👋", count: 1 << 17)
        let item = Item(id: "long", values: ["text": .string(long)])
        #expect(try JSONCodec.decodeItem(try JSONCodec.encode(item)) == item)
    }

    @Test func writesDoublesThatReadBackBitExactly() throws {
        var random = SeededRandom(seed: 42)
        for _ in 0..<20_000 {
            let number = Double(bitPattern: random.next())
            guard number.isFinite else { continue }
            let decoded = try JSONCodec.decodeValue(try JSONCodec.encode(.double(number)))
            #expect(decoded == .double(number), "\(number)")
        }
    }

    @Test func readsBackSpecialCharactersAtEveryPositionOfAString() throws {
        for special in ["\"", "\\", "\n", "\u{1F}", "\u{7F}", "é", "👋", "\u{0}"] {
            for position in 0..<20 {
                let string = String(repeating: "a", count: position) + special + String(repeating: "b", count: 11)
                #expect(
                    try JSONCodec.decodeValue(try JSONCodec.encode(.string(string))) == .string(string), "\(position)")
            }
        }
    }

    @Test func writesNegativeZeroWithItsSign() throws {
        #expect(text(try JSONCodec.encode(.double(-0.0))) == "-0.0")
        #expect(try value("-0.0") == .double(-0.0))
    }

    @Test func readsDecimalTextAsTheCorrectlyRoundedDouble() throws {
        var random = SeededRandom(seed: 5)
        for _ in 0..<20_000 {
            let digits = String(
                UInt64.random(in: 0...UInt64.max, using: &random) >> UInt64.random(in: 0...63, using: &random))
            let point = Int.random(in: 0...digits.count, using: &random)
            var decimal = digits
            if point < digits.count { decimal.insert(".", at: decimal.index(decimal.startIndex, offsetBy: point)) }
            if point == 0 { decimal = "0" + decimal }
            let exponent = Int.random(in: -330...310, using: &random)
            let json = "\(decimal)e\(exponent)"
            guard let expected = Double(json), expected.isFinite else { continue }
            #expect(try value(json) == .double(expected), "\(json)")
        }
    }

    @Test func writesDatesAsISO8601WithMilliseconds() throws {
        let date = Timestamp(year: 1901, month: 2, day: 3, hour: 4, minute: 5, second: 6, millisecond: 7)!
        #expect(text(try JSONCodec.encode(.date(date))) == #""1901-02-03T04:05:06.007Z""#)
    }

    @Test func datesOutsideSystemPropertiesReadBackAsTextThatNormalizeTurnsIntoDates() throws {
        let date = Timestamp(millisecondsSince1970: 1_234_567_890_123)
        let decoded = try JSONCodec.decodeItem(try JSONCodec.encode(Item(id: "a", values: ["due": .date(date)])))
        #expect(decoded["due"] == .string("2009-02-13T23:31:30.123Z"))
        let table = TableSchema("tasks", columns: [Column("due", .date)])
        #expect(try table.normalize(decoded, origin: .server)["due"] == .date(date))
    }

    @Test func writesPagesWithAndWithoutCount() throws {
        let items = [Item(id: "a"), Item(id: "b", values: ["n": 1])]
        #expect(text(try JSONCodec.encode(QueryResult(items: items))) == #"[{"id":"a"},{"id":"b","n":1}]"#)
        let counted = QueryResult(items: items, totalCount: 7)
        #expect(text(try JSONCodec.encode(counted)) == #"{"results":[{"id":"a"},{"id":"b","n":1}],"count":7}"#)
        #expect(try JSONCodec.decodeResult(try JSONCodec.encode(counted)) == counted)
    }
}

@Suite struct JSONCodecReadingTests {
    @Test func readsIntegersThatFitInt64AsIntegers() throws {
        #expect(try value("0") == .int(0))
        #expect(try value("-0") == .int(0))
        #expect(try value("9223372036854775807") == .int(.max))
        #expect(try value("-9223372036854775808") == .int(.min))
    }

    @Test func readsOtherNumbersAsDoubles() throws {
        #expect(try value("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try value("-9223372036854775809") == .double(-0x1p63))
        #expect(try value("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(try value("1.0") == .double(1))
        #expect(try value("1e2") == .double(100))
        #expect(try value("1E+2") == .double(100))
        #expect(try value("0.1") == .double(0.1))
        #expect(try value("5e-324") == .double(.leastNonzeroMagnitude))
        #expect(try value("1e-400") == .double(0))
        #expect(try value("-1e-400") == .double(-0.0))
    }

    @Test func readsEveryStringEscape() throws {
        #expect(
            try value(#""\"\\\/\b\f\n\r\t\u0000\u00e9\u4E2D\ud83d\ude00""#) == .string("\"\\/\u{8}\u{C}\n\r\t\u{0}é中😀"))
    }

    @Test func readsRawUnicode() throws {
        #expect(try value("\"héllo 👋🏽 \u{10FFFF}\"") == .string("héllo 👋🏽 \u{10FFFF}"))
    }

    @Test func keepsNestedArraysAndObjectsAsCompactCanonicalText() throws {
        let item = try JSONCodec.decodeItem(
            Array(#"{ "id" : "a", "tags" : [ 1 , "x\u00e9\/" , { "k" : null } , 2.50e1 ] }"#.utf8))
        #expect(item["tags"] == .json(#"[1,"xé/",{"k":null},2.50e1]"#))
        #expect(try value(" [ ] ") == .json("[]"))
        #expect(try value("{\"a\":\"\\u0001\"}") == .json(#"{"a":"\u0001"}"#))
        #expect(try value("[1e999, -0, 12345678901234567890123]") == .json("[1e999,-0,12345678901234567890123]"))
    }

    @Test func readsSystemDatesAsDatesAndOtherTextAsStrings() throws {
        let item = try JSONCodec.decodeItem(
            Array(
                #"{"id":"a","createdAt":"2026-11-22T00:04:39.354Z","updatedAt":"soon","when":"2026-11-22T00:04:39.354Z","version":"MQ=="}"#
                    .utf8))
        #expect(item.createdAt == Timestamp(iso8601: "2026-11-22T00:04:39.354Z"))
        #expect(item["updatedAt"] == "soon")
        #expect(item["when"] == "2026-11-22T00:04:39.354Z")
        #expect(item.version == "MQ==")
    }

    @Test func readsSystemDatesWrittenWithEscapes() throws {
        let item = try JSONCodec.decodeItem(Array(#"{"id":"a","updatedAt":"2026-11-22T00:04:39.354\u005a"}"#.utf8))
        #expect(item.updatedAt == Timestamp(iso8601: "2026-11-22T00:04:39.354Z"))
    }

    @Test func readsItemsWhoseMembersChangeOrderAndName() throws {
        let json = #"[{"id":"a","x":1,"y":2},{"y":3,"id":"b","x":4},{"id":"c","":5,"z":6},{"x":7,"id":"d"}]"#
        let items = try JSONCodec.decodeItems(Array(json.utf8))
        #expect(
            items == [
                Item(id: "a", values: ["x": 1, "y": 2]), Item(id: "b", values: ["x": 4, "y": 3]),
                Item(id: "c", values: ["": 5, "z": 6]), Item(id: "d", values: ["x": 7]),
            ])
    }

    @Test func readsPagesWithMoreDistinctMemberNamesThanItRemembers() throws {
        let count = JSONMemberNames.capacity * 2
        let items = (0..<count).map { Item(id: "i\($0)", values: ["c\($0)": .int(Int64($0)), "shared": "s"]) }
        #expect(try JSONCodec.decodeItems(try JSONCodec.encode(items)) == items)
    }

    @Test func treatsEscapedAndPlainSpellingsOfANameAsTheSameMember() {
        expectFailure(failure(#"{"id":"a","text":1,"te\u0078t":2}"#), .invalidValue, offset: 19)
        expectFailure(failure(#"{"\u0069d":"a","id":"b"}"#), .invalidValue, offset: 15)
    }

    @Test func keepsNullMembers() throws {
        let item = try JSONCodec.decodeItem(Array(#"{"id":"a","text":null}"#.utf8))
        #expect(item.values == ["text": .null])
    }

    @Test func readsARecordedServerPage() throws {
        let body =
            #"[{"id": "c2d2c651-cace-4613-9894-2142f4320abd", "createdAt": "2026-11-22T00:04:39.354Z", "updatedAt": "2026-11-22T00:04:39.354Z", "version": "MQ==", "deleted": false, "text": "first", "complete": false}, {"id": "fixed-id", "createdAt": "2026-11-22T00:04:39.395Z", "updatedAt": "2026-11-22T00:04:39.395Z", "version": "MQ==", "deleted": false, "text": "second", "complete": true}]"#
        let result = try JSONCodec.decodeResult(Array(body.utf8))
        #expect(result.totalCount == nil)
        #expect(result.items.map(\.id) == ["c2d2c651-cace-4613-9894-2142f4320abd", "fixed-id"])
        #expect(
            result.items[1]
                == Item(
                    id: "fixed-id",
                    values: [
                        "createdAt": .date(Timestamp(iso8601: "2026-11-22T00:04:39.395Z")!),
                        "updatedAt": .date(Timestamp(iso8601: "2026-11-22T00:04:39.395Z")!),
                        "version": "MQ==", "deleted": false, "text": "second", "complete": true,
                    ]))
    }

    @Test func readsCountedPagesAndIgnoresOtherMembers() throws {
        let result = try JSONCodec.decodeResult(
            Array(#"{"count": 12, "next": {"skip": [1]}, "results": [{"id": "a"}]}"#.utf8))
        #expect(result == QueryResult(items: [Item(id: "a")], totalCount: 12))
    }

    @Test func acceptsAByteOrderMarkAndSurroundingWhitespace() throws {
        #expect(try JSONCodec.decodeItem([0xEF, 0xBB, 0xBF] + Array(" \n{\"id\":\"a\"}\t\r\n".utf8)) == Item(id: "a"))
    }

    @Test func readsAnySequenceOfBytes() throws {
        #expect(try JSONCodec.decodeItem("{\"id\":\"a\"}".utf8) == Item(id: "a"))
        #expect(try JSONCodec.decodeItem(Array("{\"id\":\"a\"}".utf8)[...]) == Item(id: "a"))
    }
}

@Suite struct JSONCodecMalformedInputTests {
    @Test func rejectsTruncatedInputNamingTheOffset() {
        expectFailure(failure(#"{"id":"a""#), .syntax, offset: 9)
        expectFailure(failure(#"{"id":"a"#), .syntax, offset: 6)
        expectFailure(failure(""), .syntax, offset: 0)
        expectFailure(failure(Array(" ".utf8), JSONCodec.decodeItems), .syntax, offset: 1)
        expectFailure(failure(Array(#"[{"id":"a"}"#.utf8), JSONCodec.decodeItems), .syntax, offset: 11)
        expectFailure(failure(#"{"id":"a","n":tru}"#), .syntax, offset: 14)
    }

    @Test func rejectsTrailingBytes() {
        expectFailure(failure(#"{"id":"a"} x"#), .syntax, offset: 11)
    }

    @Test func rejectsStructuralErrors() {
        expectFailure(failure(#"{"id":"a",}"#), .syntax, offset: 10)
        expectFailure(failure(#"{"id" "a"}"#), .syntax, offset: 6)
        expectFailure(failure(#"{"id":"a","n":[1,]}"#), .syntax, offset: 17)
        expectFailure(failure(#"{"id":"a","n":'x'}"#), .syntax, offset: 14)
    }

    @Test func rejectsMalformedNumbers() {
        expectFailure(failure(#"{"id":"a","n":01}"#), .syntax, offset: 14)
        expectFailure(failure(#"{"id":"a","n":1.}"#), .syntax, offset: 16)
        expectFailure(failure(#"{"id":"a","n":-}"#), .syntax, offset: 15)
        expectFailure(failure(#"{"id":"a","n":.5}"#), .syntax, offset: 14)
        expectFailure(failure(#"{"id":"a","n":+1}"#), .syntax, offset: 14)
        expectFailure(failure(#"{"id":"a","n":1e}"#), .syntax, offset: 16)
        expectFailure(failure(#"{"id":"a","n":NaN}"#), .syntax, offset: 14)
        expectFailure(failure(#"{"id":"a","n":1e999}"#), .invalidValue, offset: 14)
    }

    @Test func rejectsInvalidUTF8() {
        let prefix = Array(#"{"id":"a"#.utf8)
        let suffix = Array(#""}"#.utf8)
        for bad: [UInt8] in [
            [0xFF], [0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
            [0xE2, 0x28, 0xA1],
        ] {
            expectFailure(failure(prefix + bad + suffix), .syntax, offset: 8)
        }
        expectFailure(failure(prefix + [0xE2, 0x82]), .syntax, offset: 8)
    }

    @Test func rejectsBadEscapes() {
        expectFailure(failure(#"{"id":"a\x"}"#), .syntax, offset: 8)
        expectFailure(failure(#"{"id":"a\u12"}"#), .syntax, offset: 8)
        expectFailure(failure(#"{"id":"a\u12G4"}"#), .syntax, offset: 8)
        expectFailure(failure(#"{"id":"a\"#), .syntax, offset: 8)
    }

    @Test func rejectsUnpairedSurrogateEscapes() {
        expectFailure(failure(#"{"id":"\ud800"}"#), .syntax, offset: 7)
        expectFailure(failure(#"{"id":"\udc00"}"#), .syntax, offset: 7)
        expectFailure(failure(#"{"id":"\ud800\u0041"}"#), .syntax, offset: 7)
    }

    @Test func rejectsRawControlCharactersInStrings() {
        let error = failure("{\"id\":\"a\nb\"}")
        expectFailure(error, .syntax, offset: 8)
        #expect(error?.message.contains("U+000A") == true)
    }

    @Test func rejectsItemsOfTheWrongShape() {
        expectFailure(failure(#"{"text":"a"}"#), .invalidValue, offset: 0)
        expectFailure(failure(#"{"id":5}"#), .invalidValue, offset: 6)
        expectFailure(failure(#"{"id":null}"#), .invalidValue, offset: 6)
        expectFailure(failure(#"["a"]"#), .invalidValue, offset: 0)
        expectFailure(failure(#"{"id":"a","n":1,"n":2}"#), .invalidValue, offset: 16)
        expectFailure(failure(#"{"id":"a","id":"b"}"#), .invalidValue, offset: 10)
        expectFailure(failure(Array(#"[{"id":"a"},3]"#.utf8), JSONCodec.decodeItems), .invalidValue, offset: 12)
    }

    @Test func rejectsPagesOfTheWrongShape() {
        expectFailure(failure(Array(#"{"count":1}"#.utf8), JSONCodec.decodeResult), .invalidValue, offset: 0)
        expectFailure(
            failure(Array(#"{"results":[],"count":-1}"#.utf8), JSONCodec.decodeResult), .invalidValue, offset: 22)
        expectFailure(
            failure(Array(#"{"results":[],"count":1.5}"#.utf8), JSONCodec.decodeResult), .invalidValue, offset: 22)
        expectFailure(failure(Array(#"{"results":{}}"#.utf8), JSONCodec.decodeResult), .invalidValue, offset: 11)
    }

    @Test func rejectsNestingDeeperThanTheLimitWithoutCrashing() {
        let deep =
            #"{"id":"a","n":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        expectFailure(failure(deep), .syntax, offset: 14 + JSONReader.maximumDepth)
        let allowed = #"{"id":"a","n":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        #expect(failure(allowed) == nil)
    }

    @Test func randomAndTruncatedBytesOnlyDecodeOrThrowOfflineSyncErrors() throws {
        var random = SeededRandom(seed: 11)
        let valid = try JSONCodec.encode([JSONCodecRoundTripTests.everyValue, Item(id: "b", values: ["x": 1])])
        let alphabet = Array(#"{}[]:,"\u0aeE+-.1290 tfnrul"#.utf8) + [0x00, 0x0A, 0xC3, 0xA9, 0xF0, 0x9F, 0xED, 0xFF]
        for round in 0..<5_000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0: bytes = Array(valid[..<Int.random(in: 0...valid.count, using: &random)])
            case 1:
                bytes = valid
                for _ in 0..<3 {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = alphabet.randomElement(using: &random)!
                }
            default:
                bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet.randomElement(using: &random)!
                }
            }
            _ = failure(bytes, JSONCodec.decodeResult)
            _ = failure(bytes, JSONCodec.decodeValue)
        }
    }
}

@Suite struct JSONCodecWritingTests {
    @Test func escapesQuotesBackslashesAndControlCharactersOnly() throws {
        #expect(text(try JSONCodec.encode(.string("a\"b\\c/\u{0}\u{1F}\n\té👋"))) == #""a\"b\\c/\u0000\u001f\n\té👋""#)
    }

    @Test func writesIntegerExtremes() throws {
        #expect(text(try JSONCodec.encode(.int(.min))) == "-9223372036854775808")
        #expect(text(try JSONCodec.encode(.int(.max))) == "9223372036854775807")
    }

    @Test func writesJSONValuesCompactly() throws {
        #expect(text(try JSONCodec.encode(.json(" [ 1 , { \"a\" : \"\\u00e9\" } ] "))) == #"[1,{"a":"é"}]"#)
    }

    @Test func rejectsValuesJSONCannotCarry() {
        for bad: Value in [
            .double(.nan), .double(.infinity), .double(-.infinity), .date(Timestamp(millisecondsSince1970: .max)),
            .date(Timestamp(millisecondsSince1970: Timestamp.minimum.millisecondsSince1970 - 1)),
            .json("not json"), .json("5"), .json("[1,"), .json("[1] 2"),
        ] {
            #expect(throws: OfflineSyncError.self, "\(bad)") { try JSONCodec.encode(Item(id: "a", values: ["v": bad])) }
        }
    }

    @Test func namesTheColumnAndItemOfAValueItCannotWrite() {
        do {
            _ = try JSONCodec.encode(Item(id: "a", values: ["ratio": .double(.nan)]))
            Issue.record("NaN was written")
        } catch let error as OfflineSyncError {
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("column 'ratio' of item 'a'"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func rejectsAnIdAmongTheValues() {
        #expect(throws: OfflineSyncError.self) { try JSONCodec.encode(Item(id: "a", values: ["id": "b"])) }
    }
}
