package import OfflineSync

/// A record being built in the ``RecordCodec`` format.
///
/// Each field is written through a pointer after one capacity check (where `Array.append` checks
/// capacity and uniqueness once per byte), and the memory is kept from one record to the next,
/// so a bulk write allocates only while its largest record grows. The writer owns its memory and
/// cannot be copied, so no two writers ever share it.
package struct RecordWriter: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0

    /// An empty writer; call ``begin()`` before each record.
    package init() {
        capacity = 256
        base = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit {
        base.deallocate()
    }

    /// Starts a new record: forgets the previous one and writes the format byte.
    package mutating func begin() {
        count = 0
        write(maximumBytes: 1) { bytes in
            bytes.storeBytes(of: RecordCodec.formatVersion, as: UInt8.self)
            return 1
        }
    }

    /// Appends the field of column `ordinal` holding `value` (nothing for `null`).
    @inline(__always)
    package mutating func append(ordinal: Int, _ value: Value) {
        switch value {
        case .null:
            return
        case .bool(let flag):
            field(ordinal, tag: flag ? 2 : 1, maximumPayload: 0) { _ in 0 }
        case .int(let number):
            field(ordinal, tag: 3, maximumPayload: 10) { RecordWriter.putVarint(RecordCodec.zigzag(number), at: $0) }
        case .double(let number):
            field(ordinal, tag: 4, maximumPayload: 8) { bytes in
                bytes.storeBytes(of: number.bitPattern.littleEndian, as: UInt64.self)
                return 8
            }
        case .string(let text):
            textField(ordinal, tag: 5, text)
        case .date(let date):
            field(ordinal, tag: 6, maximumPayload: 10) {
                RecordWriter.putVarint(RecordCodec.zigzag(date.millisecondsSince1970), at: $0)
            }
        case .json(let text):
            textField(ordinal, tag: 7, text)
        }
    }

    /// Calls `body` with the bytes of the record written so far.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    @inline(__always)
    private mutating func textField(_ ordinal: Int, tag: UInt8, _ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            field(ordinal, tag: tag, maximumPayload: 10 + utf8.count) { bytes in
                let prefix = RecordWriter.putVarint(UInt64(utf8.count), at: bytes)
                if let source = utf8.baseAddress {
                    (bytes + prefix).copyMemory(from: source, byteCount: utf8.count)
                }
                return prefix + utf8.count
            }
        }
    }

    /// Writes the ordinal, the tag, and a payload of at most `maximumPayload` bytes.
    @inline(__always)
    private mutating func field(
        _ ordinal: Int, tag: UInt8, maximumPayload: Int,
        _ payload: (UnsafeMutableRawPointer) -> Int
    ) {
        write(maximumBytes: 11 + maximumPayload) { bytes in
            let head = RecordWriter.putVarint(UInt64(ordinal), at: bytes)
            (bytes + head).storeBytes(of: tag, as: UInt8.self)
            return head + 1 + payload(bytes + head + 1)
        }
    }

    /// Makes room for `maximumBytes` more, then lets `body` write at the end and return how many
    /// bytes it wrote (at most `maximumBytes`).
    @inline(__always)
    private mutating func write(maximumBytes: Int, _ body: (UnsafeMutableRawPointer) -> Int) {
        if count + maximumBytes > capacity {
            grow(toHold: count + maximumBytes)
        }
        count += body(base + count)
    }

    private mutating func grow(toHold needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 1)
        moved.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Stores `value` as LEB128 at `bytes` (room for 10 bytes) and returns its length.
    @inline(__always)
    private static func putVarint(_ value: UInt64, at bytes: UnsafeMutableRawPointer) -> Int {
        var rest = value
        var length = 0
        while rest >= 0x80 {
            (bytes + length).storeBytes(of: UInt8(truncatingIfNeeded: rest) | 0x80, as: UInt8.self)
            rest >>= 7
            length += 1
        }
        (bytes + length).storeBytes(of: UInt8(rest), as: UInt8.self)
        return length + 1
    }
}
