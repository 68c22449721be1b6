import Testing

@testable import OfflineSync

@Suite struct TimestampTests {
    @Test func formatsWithMillisecondsAndZ() {
        #expect(
            Timestamp(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, millisecond: 678)!.iso8601
                == "2026-01-02T03:04:05.678Z")
    }

    @Test func writesEveryFieldZeroPaddedFromYearOneTo9999() {
        #expect(Timestamp(year: 1, month: 1, day: 1)!.iso8601 == "0001-01-01T00:00:00.000Z")
        #expect(
            Timestamp(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999)!.iso8601
                == "9999-12-31T23:59:59.999Z")
        #expect(
            Timestamp(year: 987, month: 6, day: 5, hour: 4, minute: 3, second: 2, millisecond: 10)!.iso8601
                == "0987-06-05T04:03:02.010Z")
        var random = SeededRandom(seed: 8601)
        let first = Timestamp(year: 1, month: 1, day: 1)!.millisecondsSince1970
        let last = Timestamp(year: 9999, month: 12, day: 31)!.millisecondsSince1970
        for _ in 0..<2_000 {
            let date = Timestamp(millisecondsSince1970: first + Int64(random.next() % UInt64(last - first)))
            let text = date.iso8601
            #expect(text.utf8.count == 24 && text.hasSuffix("Z"), "\(text)")
            #expect(Timestamp(iso8601: text) == date, "\(text)")
        }
    }

    @Test func writesYearsOutsideOneTo9999InTheExpandedForm() {
        let top = Timestamp(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59, millisecond: 999)!
        let bottom = Timestamp(year: 1, month: 1, day: 1)!
        #expect(Timestamp(millisecondsSince1970: .max).iso8601 == "+292278994-08-17T07:12:55.807Z")
        #expect(Timestamp(millisecondsSince1970: .min).iso8601 == "-292275055-05-16T16:47:04.192Z")
        #expect(Timestamp(millisecondsSince1970: top.millisecondsSince1970 + 1).iso8601 == "+10000-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: bottom.millisecondsSince1970 - 1).iso8601 == "0000-12-31T23:59:59.999Z")
        #expect(
            Timestamp(millisecondsSince1970: bottom.millisecondsSince1970 - 366 * 86_400_000 - 1).iso8601
                == "-0001-12-31T23:59:59.999Z")
    }

    @Test func roundTripsBefore1970() {
        let date = Timestamp(millisecondsSince1970: -1)
        #expect(date.iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(iso8601: date.iso8601) == date)
    }

    @Test func parsesOffsetsAndTruncatesFractions() {
        #expect(Timestamp(iso8601: "2026-01-02T03:04:05.6789+01:00")?.iso8601 == "2026-01-02T02:04:05.678Z")
        #expect(Timestamp(iso8601: "2026-01-02")?.iso8601 == "2026-01-02T00:00:00.000Z")
    }

    @Test func calendarFieldsOfTheExtremesDoNotOverflow() {
        #expect(Timestamp(millisecondsSince1970: .min).components.year < 0)
        #expect(Timestamp(millisecondsSince1970: .max).components.year > 9999)
        #expect(Timestamp(millisecondsSince1970: -86_400_001).components.day == 30)
    }

    @Test func rejectsMalformedText() {
        #expect(Timestamp(iso8601: "2026-13-02T00:00:00Z") == nil)
        #expect(Timestamp(iso8601: "2026-02-30T00:00:00Z") == nil)
        #expect(Timestamp(iso8601: "yesterday") == nil)
    }
}
