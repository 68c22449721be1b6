// The floor of encoding a typed model through `Codable`, in plain Swift: the benchmark's model
// (`BenchmarkModel` in Sources/offline-sync, ten properties) encoded by its synthesized
// `encode(to:)` into an encoder that keeps nothing, into the raw record of the typed `Codable`
// enqueue's raw side (`RawRecordEncoder`), and beside reading the same properties by hand. No
// encoder can cost less than the first; the store's `RowEncoder` adds the row it builds.
// Prints the median and fastest CPU time per model of 31 rounds of 10,000 models per way.
//
//   swiftc -O Benchmarks/Swift/codable-floor.swift -o /tmp/codable-floor && /tmp/codable-floor
//
// BENCHMARKS.md, "Typed models", has the figures and what they mean for the typed enqueue cells.
import Foundation

struct BenchmarkModel: Codable {
    var id: String
    var title: String
    var quantity: Int64
    var price: Double
    var done: Bool
    var due: Date
    var createdAt: Date?
    var updatedAt: Date?
    var version: String?
    var deleted: Bool?
}

/// A keyed container without nested containers (the benchmark model has no nested values).
protocol FlatContainer: KeyedEncodingContainerProtocol {}

extension FlatContainer {
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    { fatalError("not used") }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { fatalError("not used") }
    mutating func superEncoder() -> any Encoder { fatalError("not used") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("not used") }
}

/// An encoder that discards every value: what remains is `Codable`'s own dispatch.
final class NullEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var count = 0
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(NullKeyed<Key>(encoder: self))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("not used") }
    func singleValueContainer() -> any SingleValueEncodingContainer { fatalError("not used") }
}

struct NullKeyed<Key: CodingKey>: FlatContainer {
    let encoder: NullEncoder
    var codingPath: [any CodingKey] { [] }
    func note() { encoder.count &+= 1 }
    mutating func encodeNil(forKey key: Key) throws { note() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { note() }
    mutating func encode(_ value: String, forKey key: Key) throws { note() }
    mutating func encode(_ value: Double, forKey key: Key) throws { note() }
    mutating func encode(_ value: Float, forKey key: Key) throws { note() }
    mutating func encode(_ value: Int, forKey key: Key) throws { note() }
    mutating func encode(_ value: Int8, forKey key: Key) throws { note() }
    mutating func encode(_ value: Int16, forKey key: Key) throws { note() }
    mutating func encode(_ value: Int32, forKey key: Key) throws { note() }
    mutating func encode(_ value: Int64, forKey key: Key) throws { note() }
    mutating func encode(_ value: UInt, forKey key: Key) throws { note() }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { note() }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { note() }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { note() }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { note() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { note() }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { note() }
}

/// The benchmark's raw record (`BenchmarkRecord` in Sources/offline-sync, the fields a raw
/// baseline stores).
struct Record {
    var id = "", title = "", quantity: Int64 = 0, price = 0.0, done = false, due: Int64 = 0
    var createdAt: Int64 = 0, updatedAt: Int64 = 0, version = "", deleted = false
}

/// The raw side of the typed `Codable` enqueue (`RawRecordEncoder` in Sources/offline-sync):
/// each value assigned to the record's field after a `switch` on its key.
final class RecordEncoder: Encoder {
    var record = Record()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyed<Key>(encoder: self))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("not used") }
    func singleValueContainer() -> any SingleValueEncodingContainer { fatalError("not used") }
}

struct Unexpected: Error {}

struct RecordKeyed<Key: CodingKey>: FlatContainer {
    let encoder: RecordEncoder
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        switch key.stringValue {
        case "done": encoder.record.done = value
        case "deleted": encoder.record.deleted = value
        default: throw Unexpected()
        }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        switch key.stringValue {
        case "id": encoder.record.id = value
        case "title": encoder.record.title = value
        case "version": encoder.record.version = value
        default: throw Unexpected()
        }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard key.stringValue == "price" else { throw Unexpected() }
        encoder.record.price = value
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        guard key.stringValue == "quantity" else { throw Unexpected() }
        encoder.record.quantity = value
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        guard T.self == Date.self else { throw Unexpected() }
        let milliseconds = Int64((unsafeBitCast(value, to: Date.self).timeIntervalSince1970 * 1000).rounded())
        switch key.stringValue {
        case "due": encoder.record.due = milliseconds
        case "createdAt": encoder.record.createdAt = milliseconds
        case "updatedAt": encoder.record.updatedAt = milliseconds
        default: throw Unexpected()
        }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: Int, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: Int8, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: Int16, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: Int32, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: UInt, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { throw Unexpected() }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { throw Unexpected() }
}

/// A column value, as the store's `Value` holds one.
enum Value { case string(String), int(Int64), double(Double), bool(Bool), date(Int64) }

func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

let count = 10_000
let rounds = 31
func model(_ n: Int) -> BenchmarkModel {
    let due = Date(timeIntervalSince1970: 1_700_000_000 + Double(n))
    let price = Double(n) * 0.25
    return BenchmarkModel(
        id: "item-\(n)", title: "Benchmark record number \(n)", quantity: Int64(n % 1000), price: price,
        done: n % 3 == 0, due: due)
}
let models = (0..<count).map(model)

/// Each way encodes every model once per round and returns a checksum, so nothing is optimized away.
let ways: [(String, () throws -> Int)] = [
    ("synthesized encode(to:) into an encoder that keeps nothing (the Codable floor)", {
        let encoder = NullEncoder()
        for model in models { try model.encode(to: encoder) }
        return encoder.count
    }),
    ("synthesized encode(to:) into a record, a switch on each key (the raw side of the typed Codable enqueue)", {
        let encoder = RecordEncoder()
        var records: [Record] = []
        records.reserveCapacity(models.count)
        for model in models {
            encoder.record = Record()
            try model.encode(to: encoder)
            records.append(encoder.record)
        }
        return records.count
    }),
    ("the same properties read by hand into a row of ten values (what generated code would do)", {
        var sum = 0
        for model in models {
            var row = [Value?](repeating: nil, count: 9)
            row[0] = .string(model.title)
            row[1] = .int(model.quantity)
            row[2] = .double(model.price)
            row[3] = .bool(model.done)
            row[4] = .date(Int64((model.due.timeIntervalSince1970 * 1000).rounded()))
            if let value = model.createdAt { row[5] = .date(Int64(value.timeIntervalSince1970 * 1000)) }
            if let value = model.updatedAt { row[6] = .date(Int64(value.timeIntervalSince1970 * 1000)) }
            if let value = model.version { row[7] = .string(value) }
            if let value = model.deleted { row[8] = .bool(value) }
            sum &+= row.count + model.id.utf8.count
        }
        return sum
    }),
]

var times = Array(repeating: [Double](), count: ways.count)
for _ in 0..<rounds {
    for (index, way) in ways.enumerated() {
        let start = cpuSeconds()
        let check = try way.1()
        times[index].append(cpuSeconds() - start)
        precondition(check > 0)
    }
}
for (index, way) in ways.enumerated() {
    let sorted = times[index].sorted()
    print(String(format: "%7.3f µs median, %7.3f µs fastest per model: %@", sorted[rounds / 2] / Double(count) * 1e6,
                 sorted[0] / Double(count) * 1e6, way.0))
}
