import OfflineSync

/// The order-preserving encoding of index keys: byte order of the keys is the query order of
/// the indexed values (``OfflineSync/ValueSemantics/compare(_:_:)``), nulls first.
///
/// A key is the encoded values of the index's columns, cut to ``maximumValueBytes``, followed by
/// the row's id. Each value is one component:
///
/// - null: `00`
/// - otherwise `01` and: a boolean as `00`/`01`; an integer or a date as 8 big-endian bytes with
///   the sign bit flipped; a double as its 8 big-endian bit-pattern bytes with the sign bit flipped
///   for positives and every bit flipped for negatives (`-0.0` is written as `0.0`, since they
///   are equal in queries); a string or JSON text as its UTF-8 bytes with `00` written `00 FF`,
///   ended by `00 01`.
///
/// Cutting every key at the same length keeps order (not strictly), so a range of cut keys still
/// holds every row of the uncut range; the query evaluator removes the few extra rows.
enum IndexKey {
    /// The most bytes of encoded values in a key; with a 255-byte id the key stays under LMDB's
    /// 511-byte limit.
    static let maximumValueBytes = 240

    /// The full key of a row in an index over `columns` (with their types).
    static func key(for item: Item, columns: [(name: String, type: ColumnType)]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + item.id.utf8.count)
        write(into: &bytes, id: item.id, columns: columns) { item[columns[$0].name] }
        return bytes
    }

    /// Replaces the bytes of `key` with the key of row `id` in an index over `columns`, whose
    /// value in the column at each position `value` answers (keeping `key`'s capacity).
    @inline(__always)
    static func write(
        into key: inout [UInt8], id: String, columns: [(name: String, type: ColumnType)],
        value: (_ position: Int) -> Value
    ) {
        key.removeAll(keepingCapacity: true)
        for position in columns.indices {
            appendComponent(value(position), as: columns[position].type, to: &key)
            if key.count >= maximumValueBytes { break }
        }
        if key.count > maximumValueBytes { key.removeLast(key.count - maximumValueBytes) }
        key.append(contentsOf: id.utf8)
    }

    /// The key prefix of one value of the index's first column, cut like a key; `nil` when the
    /// value's type does not match the column's.
    static func prefix(_ value: Value, as type: ColumnType) -> [UInt8]? {
        guard value.isNull || compatible(value, type) else { return nil }
        var bytes: [UInt8] = []
        appendComponent(value, as: type, to: &bytes)
        if bytes.count > maximumValueBytes { bytes.removeLast(bytes.count - maximumValueBytes) }
        return bytes
    }

    /// The key prefix shared by every string (or JSON text) value that starts with the bytes of
    /// `text`: the component without its terminator, cut like a key.
    static func stringPrefix(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [1]
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
            if bytes.count >= maximumValueBytes { break }
        }
        if bytes.count > maximumValueBytes { bytes.removeLast(bytes.count - maximumValueBytes) }
        return bytes
    }

    /// The smallest prefix of any non-null value.
    static let firstNonNull: [UInt8] = [1]

    /// The length of the first component of `key` (whose value part is `valueLength` bytes long).
    static func firstComponentLength(_ key: UnsafeRawBufferPointer, valueLength: Int, type: ColumnType) -> Int {
        guard let tag = key.first, tag == 1 else { return min(1, valueLength) }
        let length: Int
        switch type {
        case .bool: length = 2
        case .integer, .double, .date: length = 9
        case .string, .json:
            var offset = 1
            var end = valueLength
            while offset + 1 < valueLength {
                if key[offset] == 0 {
                    if key[offset + 1] == 1 {
                        end = offset + 2
                        break
                    }
                    offset += 2
                } else {
                    offset += 1
                }
            }
            length = end
        }
        return min(length, valueLength)
    }

    private static func compatible(_ value: Value, _ type: ColumnType) -> Bool {
        switch (value, type) {
        case (.bool, .bool), (.int, .integer), (.double, .double), (.date, .date),
            (.string, .string), (.json, .json), (.string, .json), (.json, .string):
            return true
        default:
            return false
        }
    }

    private static func appendComponent(_ value: Value, as type: ColumnType, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(0)
        case .bool(let flag):
            bytes.append(1)
            bytes.append(flag ? 1 : 0)
        case .int(let number):
            bytes.append(1)
            appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63), to: &bytes)
        case .date(let date):
            bytes.append(1)
            appendBigEndian(UInt64(bitPattern: date.millisecondsSince1970) ^ (1 << 63), to: &bytes)
        case .double(let number):
            bytes.append(1)
            let bits = (number == 0 ? 0.0 : number).bitPattern
            appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &bytes)
        case .string(let text), .json(let text):
            bytes.append(1)
            for byte in text.utf8 {
                bytes.append(byte)
                if byte == 0 { bytes.append(0xFF) }
                if bytes.count > maximumValueBytes { return }
            }
            bytes.append(0)
            bytes.append(1)
        }
    }

    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
