import Foundation

/// The raw side's way from an `Encodable` model to the record it stores: the model's own
/// `encode(to:)` into a keyed container that assigns each value to the record's field and does
/// nothing else (no row, no checks, no conversions beyond `Date` to milliseconds).
///
/// A program that writes `Codable` models with the C API has to read them through some encoder;
/// this is the least such an encoder can do, so the typed `Codable` scenario compares the store
/// with the raw C API doing the same work (`Codable` included), as the `RowWritable` scenario
/// compares the store with hand-written C that reads the fields directly.
/// `Benchmarks/Swift/codable-floor.swift` measures the same dispatch into an encoder that keeps
/// nothing.
final class RawRecordEncoder: Encoder {
    /// The record being written: a local write's (system columns empty) until a model sets them.
    fileprivate var record = RawRecordEncoder.empty
    let codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private static let empty = BenchmarkRecord(
        id: "", title: "", quantity: 0, price: 0, done: false, due: 0, createdAt: 0, updatedAt: 0, version: "",
        deleted: false)

    /// The record of `model`, read through its `Codable` encoding.
    func record(of model: some Encodable) throws -> BenchmarkRecord {
        record = RawRecordEncoder.empty
        try model.encode(to: self)
        return record
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RawRecordContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        preconditionFailure("a benchmark model encodes as a keyed container")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        preconditionFailure("a benchmark model encodes as a keyed container")
    }
}

/// The keyed container of ``RawRecordEncoder``: one `switch` on the key per value.
private struct RawRecordContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RawRecordEncoder
    var codingPath: [any CodingKey] { [] }

    /// Thrown for a key or a value type the benchmark record has no field for.
    private func unexpected(_ key: Key, _ type: Any.Type) -> EncodingError {
        EncodingError.invalidValue(
            key.stringValue,
            EncodingError.Context(
                codingPath: [key], debugDescription: "the benchmark record has no \(type) field '\(key.stringValue)'"))
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        switch key.stringValue {
        case "id": encoder.record.id = value
        case "title": encoder.record.title = value
        case "version": encoder.record.version = value
        default: throw unexpected(key, String.self)
        }
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        guard key.stringValue == "quantity" else { throw unexpected(key, Int64.self) }
        encoder.record.quantity = value
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard key.stringValue == "price" else { throw unexpected(key, Double.self) }
        encoder.record.price = value
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        switch key.stringValue {
        case "done": encoder.record.done = value
        case "deleted": encoder.record.deleted = value
        default: throw unexpected(key, Bool.self)
        }
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // A static type comparison, as the store's encoder makes, not a dynamic cast.
        guard T.self == Date.self else { throw unexpected(key, T.self) }
        let milliseconds = Int64((unsafeBitCast(value, to: Date.self).timeIntervalSince1970 * 1000).rounded())
        switch key.stringValue {
        case "due": encoder.record.due = milliseconds
        case "createdAt": encoder.record.createdAt = milliseconds
        case "updatedAt": encoder.record.updatedAt = milliseconds
        default: throw unexpected(key, Date.self)
        }
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Float, forKey key: Key) throws { throw unexpected(key, Float.self) }
    mutating func encode(_ value: Int, forKey key: Key) throws { throw unexpected(key, Int.self) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { throw unexpected(key, Int8.self) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { throw unexpected(key, Int16.self) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { throw unexpected(key, Int32.self) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { throw unexpected(key, UInt.self) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { throw unexpected(key, UInt8.self) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { throw unexpected(key, UInt16.self) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { throw unexpected(key, UInt32.self) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { throw unexpected(key, UInt64.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        preconditionFailure("the benchmark model has no nested values")
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        preconditionFailure("the benchmark model has no nested values")
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}
