import CLibPQ
import OfflineSync

/// One row of a result read in binary format, valid only during the callback it is handed to.
package struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    /// `true` when the column is SQL NULL.
    package func isNull(_ column: Int32) -> Bool {
        PQgetisnull(result, row, column) == 1
    }

    /// The column's bytes as sent by the server.
    func bytes(_ column: Int32) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(result, row, column))
        guard length > 0, let start = PQgetvalue(result, row, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: start, count: length)
    }

    /// A `text` or `bytea` column as a string (its bytes are UTF-8: the store writes nothing else).
    package func string(_ column: Int32) -> String {
        String(decoding: bytes(column), as: UTF8.self)
    }

    /// An `int8` column (8 bytes, network order); 0 for anything shorter.
    package func int64(_ column: Int32) -> Int64 {
        let raw = bytes(column)
        guard raw.count == 8 else { return 0 }
        var bits: UInt64 = 0
        for byte in raw { bits = bits << 8 | UInt64(byte) }
        return Int64(bitPattern: bits)
    }

    /// A `float8` column (its IEEE bits, network order).
    package func double(_ column: Int32) -> Double {
        Double(bitPattern: UInt64(bitPattern: int64(column)))
    }

    /// A `bool` column.
    package func bool(_ column: Int32) -> Bool {
        let raw = bytes(column)
        return raw.count == 1 && raw[0] != 0
    }

    /// The value of a column stored for a declared column of `type` (see ``PostgresType/init(storing:)``).
    func value(_ column: Int32, as type: ColumnType) -> Value {
        if isNull(column) { return .null }
        switch type {
        case .bool: return .bool(bool(column))
        case .integer: return .int(int64(column))
        case .double: return .double(double(column))
        case .string: return .string(string(column))
        case .date: return .date(Timestamp(millisecondsSince1970: int64(column)))
        case .json: return .json(string(column))
        }
    }
}
