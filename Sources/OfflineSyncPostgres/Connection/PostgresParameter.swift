package import OfflineSync

/// The PostgreSQL types the store binds and reads, with their type OIDs (fixed in `pg_type`).
package enum PostgresType: UInt32 {
    case bool = 16
    case bytea = 17
    case int8 = 20
    case text = 25
    case float8 = 701

    /// The type's name in SQL, for casts (`$1::int8`).
    var name: String {
        switch self {
        case .bool: return "bool"
        case .bytea: return "bytea"
        case .int8: return "int8"
        case .text: return "text"
        case .float8: return "float8"
        }
    }

    /// How a column of `type` is stored (see ``PostgresTableLayout``).
    init(storing type: ColumnType) {
        switch type {
        case .bool: self = .bool
        case .integer, .date: self = .int8
        case .double: self = .float8
        case .string: self = .bytea
        case .json: self = .text
        }
    }
}

/// One bound value in PostgreSQL's binary format: network byte order for `int8` and `float8`
/// (the IEEE bits, so `-0.0` keeps its sign), one byte for `bool`, the UTF-8 bytes for `text` and
/// `bytea`; `nil` bytes bind SQL NULL.
package struct PostgresParameter {
    package var type: UInt32
    package var bytes: [UInt8]?

    /// Binds `value` as `type`; a value of another kind than the type stores is a programming
    /// error of the translation and binds NULL (the core has already checked every value).
    package init(_ value: Value, as type: PostgresType) {
        self.type = type.rawValue
        switch (value, type) {
        case (.bool(let flag), .bool): bytes = [flag ? 1 : 0]
        case (.int(let number), .int8): bytes = PostgresParameter.bigEndian(UInt64(bitPattern: number))
        case (.date(let date), .int8):
            bytes = PostgresParameter.bigEndian(UInt64(bitPattern: date.millisecondsSince1970))
        case (.double(let number), .float8): bytes = PostgresParameter.bigEndian(number.bitPattern)
        case (.string(let text), .bytea), (.string(let text), .text), (.json(let text), .text),
            (.json(let text), .bytea):
            bytes = Array(text.utf8)
        default: bytes = nil
        }
    }

    private static func bigEndian(_ bits: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
    }

    /// Calls `body` with libpq's parameter arrays (values, lengths, formats: all binary) for
    /// `parameters`, valid only during the call.
    static func withBuffers<Result>(
        _ parameters: [PostgresParameter],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> Result
    ) -> Result {
        var storage: [UInt8] = []
        storage.reserveCapacity(parameters.reduce(0) { $0 + ($1.bytes?.count ?? 0) } + 1)
        var offsets: [Int] = []
        var lengths: [Int32] = []
        offsets.reserveCapacity(parameters.count)
        lengths.reserveCapacity(parameters.count)
        for parameter in parameters {
            if let bytes = parameter.bytes {
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
            } else {
                offsets.append(-1)
                lengths.append(0)
            }
        }
        storage.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { $0 < 0 ? nil : base + $0 }
            return pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
