import OfflineSync

/// The binary encoding of a row's values: compact, exact, and independent of column order.
///
/// A record is a format byte (`1`) followed by one field per non-null value: the column's
/// ordinal in the table schema (LEB128), a tag byte, and the payload:
///
/// | tag | value | payload |
/// |---|---|---|
/// | 1, 2 | `false`, `true` | none |
/// | 3 | integer | zigzag LEB128 |
/// | 4 | double | the 8 bytes of the IEEE 754 bit pattern, little-endian (`-0.0` kept) |
/// | 5 | string | LEB128 byte count, UTF-8 bytes |
/// | 6 | date | zigzag LEB128 milliseconds since 1970 |
/// | 7 | JSON | LEB128 byte count, UTF-8 text |
///
/// The id is the record's key, not part of it. Ordinals are stable because a stored schema only
/// ever appends columns (``OfflineSync/TableSchema/merged(with:)``), so old records read under a
/// widened schema unchanged, and the new columns read as null.
package enum RecordCodec {
    static let formatVersion: UInt8 = 1

    /// Appends the encoding of `item`'s values to `buffer` (which the caller empties); values of
    /// columns missing from `columns` (which normalised items never have) are left out.
    package static func encode(_ item: Item, columns: ColumnOrdinals, into buffer: inout [UInt8]) {
        var writer = RecordWriter()
        encode(item, columns: columns, into: &writer)
        writer.withBytes { buffer.append(contentsOf: $0) }
    }

    /// Writes the record of `item` into `writer`, replacing the record it held.
    package static func encode(_ item: Item, columns: ColumnOrdinals, into writer: inout RecordWriter) {
        writer.begin()
        item.forEachValue { name, value in
            guard let ordinal = columns.ordinal(of: name) else { return }
            writer.append(ordinal: ordinal, value)
        }
    }

    /// Decodes a record of a table whose columns are `layout` (the schema's
    /// ``OfflineSync/TableSchema/rowLayout``: ordinal = position), keeping only the ordinals
    /// marked in `only` when it is given. Returns `nil` when the bytes are not a well-formed
    /// record.
    package static func decode(_ bytes: UnsafeRawBufferPointer, id: String, layout: RowLayout, only: [Bool]? = nil)
        -> Item?
    {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == formatVersion else { return nil }
        let columnCount = layout.names.count
        var values = [Value?](repeating: nil, count: columnCount)
        while !reader.isAtEnd {
            guard let ordinal = reader.varint(), ordinal < UInt64(columnCount), let tag = reader.byte() else {
                return nil
            }
            if let only, !only[Int(ordinal)] {
                guard reader.skip(tag: tag) else { return nil }
                continue
            }
            guard let value = reader.value(tag: tag) else { return nil }
            values[Int(ordinal)] = value
        }
        return Item(id: id, layout: layout, values: values)
    }

    /// ``decode(_:id:layout:only:)`` for a table whose columns are `columnNames` (by ordinal).
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, id: String, columnNames: [String], only: [Bool]? = nil
    ) -> Item? {
        decode(bytes, id: id, layout: RowLayout(columnNames), only: only)
    }

    /// Reads the fields of a record whose ordinal `slots` maps to a slot (`slots[ordinal] >= 0`)
    /// into that slot of `values`, skipping the others; slots of absent fields are left as they
    /// are. `slots` has one entry per column of the table. Returns `false` when the bytes are not
    /// a well-formed record.
    static func decode(_ bytes: UnsafeRawBufferPointer, slots: [Int], into values: inout [Value]) -> Bool {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == formatVersion else { return false }
        while !reader.isAtEnd {
            guard let ordinal = reader.varint(), ordinal < UInt64(slots.count), let tag = reader.byte() else {
                return false
            }
            let slot = slots[Int(ordinal)]
            if slot < 0 {
                guard reader.skip(tag: tag) else { return false }
                continue
            }
            guard let value = reader.value(tag: tag) else { return false }
            values[slot] = value
        }
        return true
    }

    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The ordinal of each column name, found by comparing lengths before text: cheaper than
    /// hashing for the handful of columns a table has.
    package struct ColumnOrdinals: Sendable {
        let names: [String]
        private let lengths: [Int]

        /// Indexes `names` by position.
        package init(_ names: [String]) {
            self.names = names
            self.lengths = names.map(\.utf8.count)
        }

        /// The position of `name`, or `nil`.
        @inline(__always)
        func ordinal(of name: String) -> Int? {
            let length = name.utf8.count
            for position in lengths.indices where lengths[position] == length && names[position] == name {
                return position
            }
            return nil
        }
    }

    /// A bounds-checked reader over a record.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while let next = byte() {
                guard shift < 64 else { return nil }
                result |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return result }
                shift += 7
            }
            return nil
        }

        /// Moves past the payload of a field with this tag; `false` when it is malformed.
        mutating func skip(tag: UInt8) -> Bool {
            switch tag {
            case 1, 2: return true
            case 3, 6: return varint() != nil
            case 4: return fixed64() != nil
            case 5, 7:
                guard let length = varint(), length <= UInt64(bytes.count - offset) else { return false }
                offset += Int(length)
                return true
            default: return false
            }
        }

        /// The payload of a field with this tag; `nil` when it is malformed.
        @inline(__always)
        mutating func value(tag: UInt8) -> Value? {
            switch tag {
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3: return varint().map { .int(RecordCodec.unzigzag($0)) }
            case 4: return fixed64().map { .double(Double(bitPattern: $0)) }
            case 5: return text().map { .string($0) }
            case 6: return varint().map { .date(Timestamp(millisecondsSince1970: RecordCodec.unzigzag($0))) }
            case 7: return text().map { .json($0) }
            default: return nil
            }
        }

        mutating func fixed64() -> UInt64? {
            guard bytes.count - offset >= 8 else { return nil }
            var raw: UInt64 = 0
            withUnsafeMutableBytes(of: &raw) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8]))
            }
            offset += 8
            return UInt64(littleEndian: raw)
        }

        mutating func text() -> String? {
            guard let length = varint(), length <= UInt64(bytes.count - offset) else { return nil }
            let start = offset
            offset += Int(length)
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        }
    }
}
