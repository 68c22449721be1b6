import OfflineSync
import Testing

@testable import OfflineSyncLMDB

@Suite struct ValueRoundTripTests {
    static let extremes: [String: Value] = [
        "title": .string("nul\u{0}inside, e\u{301} and 😀"),
        "rank": .int(.min),
        "score": .double(-0.0),
        "due": .date(Timestamp(millisecondsSince1970: -62_135_596_800_000)),
        "done": .bool(false),
        "tags": .json("{\"k\":[1,2,{\"x\":null}]}"),
    ]

    @Test func everyValueRoundTripsBitExactThroughTheStoreAndAReopen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let items = [
            Item(id: "low", values: Self.extremes),
            Item(
                id: "high",
                values: [
                    "rank": .int(.max), "score": .double(.greatestFiniteMagnitude),
                    "due": .date(Timestamp(millisecondsSince1970: 253_402_300_799_999)), "done": true,
                    "title": .string(String(repeating: "a", count: 1 << 20)),
                ]),
            Item(id: "tiny", values: ["score": .double(.leastNonzeroMagnitude), "rank": 0, "title": ""]),
            Item(id: "empty"),
        ]
        let store = try openStore(StoreSchema([notes]), in: directory)
        try store.upsert(items, into: "notes")
        for item in items {
            let stored = try store.lookup(table: "notes", id: item.id)
            #expect(stored == item, "lookup of \(item.id)")
        }
        try store.close()
        try store.open(schema: StoreSchema([notes]))
        defer { try? store.close() }
        let negativeZero = try store.lookup(table: "notes", id: "low")?["score"].doubleValue
        #expect(negativeZero?.sign == .minus && negativeZero == 0)
        for item in items {
            #expect(try store.lookup(table: "notes", id: item.id) == item, "lookup of \(item.id) after reopen")
        }
    }

    @Test func recordCodecRoundTripsEveryTag() {
        let item = Item(id: "x", values: Self.extremes)
        var buffer: [UInt8] = []
        RecordCodec.encode(item, columns: RecordCodec.ColumnOrdinals(notes.columns.map(\.name)), into: &buffer)
        let decoded = buffer.withUnsafeBytes { RecordCodec.decode($0, id: "x", columnNames: notes.columns.map(\.name)) }
        #expect(decoded == item)
        #expect(decoded?["score"].doubleValue?.sign == .minus)
    }

    @Test func recordCodecRejectsTruncatedAndForeignBytes() {
        var buffer: [UInt8] = []
        RecordCodec.encode(
            Item(id: "x", values: Self.extremes), columns: RecordCodec.ColumnOrdinals(notes.columns.map(\.name)),
            into: &buffer)
        let names = notes.columns.map(\.name)
        for length in 1..<buffer.count - 1 {
            let cut = Array(buffer.prefix(length))
            let decoded = cut.withUnsafeBytes { RecordCodec.decode($0, id: "x", columnNames: names) }
            #expect(
                decoded != Item(id: "x", values: Self.extremes),
                "a record cut to \(length) bytes must not decode to the whole item")
        }
        #expect(
            [UInt8]("{\"json\":1}".utf8).withUnsafeBytes { RecordCodec.decode($0, id: "x", columnNames: names) } == nil)
        #expect([UInt8]([1, 200, 5, 1]).withUnsafeBytes { RecordCodec.decode($0, id: "x", columnNames: names) } == nil)
    }

    @Test func indexKeysSortLikeTheQueryOrder() {
        let samples: [(ColumnType, [Value])] = [
            (.integer, [nil, .int(.min), -5, -1, 0, 1, 3, .int(.max)]),
            (.double, [nil, -1e300, -2.25, -1e-300, 0.0, 1e-300, 1.0, 1e300]),
            (.string, [nil, "", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é"]),
            (
                .date,
                [
                    nil, .date(Timestamp(millisecondsSince1970: -1)), .date(Timestamp.epoch),
                    .date(Timestamp(millisecondsSince1970: 1)),
                ]
            ),
            (.bool, [nil, false, true]),
        ]
        for (type, values) in samples {
            let keys = values.map { IndexKey.prefix($0, as: type)! }
            for (left, right) in zip(keys, keys.dropFirst()) {
                #expect(left.lexicographicallyPrecedes(right), "\(type) keys out of order: \(left) vs \(right)")
            }
        }
        #expect(IndexKey.prefix(-0.0, as: .double) == IndexKey.prefix(0.0, as: .double))
    }
}
