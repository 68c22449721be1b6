package import OfflineSync

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
/// A reader accepts the fields in any order; the store writes them in ascending ordinal (column
/// order, ``OfflineSync/TableSchema/forEachStoredValue(of:origin:_:)``), so a row is the same bytes
/// in every process and a filter that stops once it has read the fields it tests walks the same
/// length of every record.
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
        var values = [Value?].noValues(count: columnCount)
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
    ///
    /// With `wanted`, reading stops once that many fields were found (a record holds each
    /// ordinal once), so the rest of the record is neither read nor checked.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, slots: [Int], into values: inout [Value], wanted: Int = .max
    ) -> Bool {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == formatVersion else { return false }
        var found = 0
        while !reader.isAtEnd && found < wanted {
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
            found += 1
        }
        return true
    }

    /// `true` when `bytes` start like a record (its fields are checked when they are read).
    static func isWellFormedHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.first == formatVersion
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

extension RecordCodec {
    /// The top-level `column op literal` conjuncts of a filter whose literal has the column's own
    /// type (integer, double, boolean or date), tested on a record's encoded fields without
    /// building a single `Value`: a row failing one of them fails the filter.
    ///
    /// Each test computes what ``OfflineSync/QueryEvaluator/compare(_:_:_:)`` computes for a
    /// value of that type and a non-null literal: an absent field is null, which only `ne`
    /// admits; numbers, booleans and dates compare as ``OfflineSync/ValueSemantics`` compares them.
    ///
    /// A bounded top-N scan can also set a ``cutoff`` on the first ordering key (an integer or
    /// date column): once the scan keeps its N rows, a record whose key sorts strictly after the
    /// last kept row's cannot enter them and is rejected here, before anything is decoded (what
    /// a hand-written scan does with the raw field).
    ///
    /// A class holding its tests in memory it owns, so that testing a record neither copies nor
    /// retains anything.
    final class FieldTests {
        enum Literal {
            case integer(Int64)
            case double(Double)
            case bool(Bool)
            case date(Int64)
        }

        struct Test {
            let ordinal: Int
            let op: ComparisonOperator
            let literal: Literal
        }

        /// The outcome for one record.
        enum Verdict {
            /// A test failed (or the record sorts after the ``cutoff``): the row is not wanted.
            case rejected
            /// Every test passed.
            case passed
            /// A field did not have the expected encoding; evaluate the filter in full.
            case undecided
        }

        let tests: [Test]
        /// The filter is exactly the conjunction of the tests.
        let coversFilter: Bool
        /// What ``verdict(_:)`` reads, in memory this object owns: a scan passes the pointer
        /// and tests each record without retaining anything.
        let screen: UnsafeMutablePointer<Screen>
        /// The ordering key a cutoff applies to: its ordinal, the record tag of its values
        /// (3 integer, 6 date), and its direction; `nil` when the query's first key is not such a
        /// column.
        let cutoffKey: (ordinal: Int, tag: UInt8, descending: Bool)?

        /// The plain data of the tests and the cutoff.
        struct Screen {
            var tests: UnsafeMutablePointer<Test>
            var testCount: Int
            /// Bit `n` set: ordinal `n` is tested (ordinals below 64 only; see `isUsable`).
            var testedMask: UInt64
            /// `false` when a test reads an ordinal of 64 or more: every verdict is then `undecided`.
            var isUsable: Bool
            /// The cutoff key's ordinal (-1: none), record tag and direction.
            var cutoffOrdinal: Int
            var cutoffTag: UInt8
            var cutoffDescending: Bool
            /// Whether ``cutoff`` is set.
            var hasCutoff: Bool
            /// The first ordering value of the last row a bounded scan keeps, once it keeps as
            /// many as it wants: a record whose value is strictly after it (in the key's
            /// direction) is rejected. Integers and dates as their `Int64` (milliseconds).
            var cutoff: Int64
        }

        /// Sets (or, with `nil`, clears) the cutoff.
        var cutoff: Int64? {
            get { screen.pointee.hasCutoff ? screen.pointee.cutoff : nil }
            set {
                screen.pointee.hasCutoff = newValue != nil
                screen.pointee.cutoff = newValue ?? 0
            }
        }

        /// The tests of `filter` over a table whose columns are `columns` (by ordinal), and the
        /// cutoff key when the first of `orderBy` is an integer or date column; `nil` when there
        /// is neither.
        init?(_ filter: FilterExpression?, orderBy: [SortKey] = [], columns: [Column]) {
            var conjuncts: [FilterExpression] = []
            func collect(_ expression: FilterExpression) {
                if case .and(let lhs, let rhs) = expression {
                    collect(lhs)
                    collect(rhs)
                } else {
                    conjuncts.append(expression)
                }
            }
            if let filter { collect(filter) }
            var tests: [Test] = []
            var covered = true
            for conjunct in conjuncts {
                if let test = FieldTests.test(conjunct, columns: columns) {
                    tests.append(test)
                } else {
                    covered = false
                }
            }
            var cutoffKey: (ordinal: Int, tag: UInt8, descending: Bool)?
            if let first = orderBy.first, let ordinal = columns.firstIndex(where: { $0.name == first.column }),
                ordinal < 64
            {
                switch columns[ordinal].type {
                case .integer: cutoffKey = (ordinal, 3, first.descending)
                case .date: cutoffKey = (ordinal, 6, first.descending)
                default: break
                }
            }
            guard !tests.isEmpty || cutoffKey != nil else { return nil }
            var mask: UInt64 = 0
            var usable = true
            for test in tests {
                if test.ordinal < 64 { mask |= 1 << UInt64(test.ordinal) } else { usable = false }
            }
            let stored = UnsafeMutablePointer<Test>.allocate(capacity: max(tests.count, 1))
            stored.initialize(from: tests, count: tests.count)
            self.tests = tests
            self.coversFilter = covered
            self.cutoffKey = cutoffKey
            self.screen = .allocate(capacity: 1)
            screen.initialize(
                to: Screen(
                    tests: stored, testCount: tests.count, testedMask: mask, isUsable: usable,
                    cutoffOrdinal: cutoffKey?.ordinal ?? -1, cutoffTag: cutoffKey?.tag ?? 0,
                    cutoffDescending: cutoffKey?.descending ?? false, hasCutoff: false, cutoff: 0))
        }

        deinit {
            screen.pointee.tests.deallocate()
            screen.deallocate()
        }

        private static func test(_ expression: FilterExpression, columns: [Column]) -> Test? {
            let name: String
            var op: ComparisonOperator
            let value: Value
            switch expression {
            case .comparison(.column(let column), let comparison, .literal(let literal)):
                (name, op, value) = (column, comparison, literal)
            case .comparison(.literal(let literal), let comparison, .column(let column)):
                (name, op, value) = (column, comparison, literal)
                switch comparison {
                case .gt: op = .lt
                case .ge: op = .le
                case .lt: op = .gt
                case .le: op = .ge
                case .eq, .ne: break
                }
            case .column(let column):
                (name, op, value) = (column, .eq, .bool(true))
            case .not(.column(let column)):
                (name, op, value) = (column, .ne, .bool(true))
            default:
                return nil
            }
            guard let ordinal = columns.firstIndex(where: { $0.name == name }) else { return nil }
            switch (columns[ordinal].type, value) {
            case (.integer, .int(let number)): return Test(ordinal: ordinal, op: op, literal: .integer(number))
            case (.double, .double(let number)) where !number.isNaN:
                return Test(ordinal: ordinal, op: op, literal: .double(number))
            case (.bool, .bool(let flag)): return Test(ordinal: ordinal, op: op, literal: .bool(flag))
            case (.date, .date(let date)):
                return Test(ordinal: ordinal, op: op, literal: .date(date.millisecondsSince1970))
            default: return nil
            }
        }

        /// A decoded field of a tested column.
        private enum Field {
            case bool(Bool)
            case integer(Int64)
            case date(Int64)
            case double(Double)
        }

        /// The order of `field` against `literal`, or `nil` when their types differ.
        @inline(__always)
        private static func order(_ field: Field, _ literal: Literal) -> Int? {
            switch (field, literal) {
            case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
            case (.integer(let a), .integer(let b)), (.date(let a), .date(let b)): return a < b ? -1 : (a > b ? 1 : 0)
            case (.double(let a), .double(let b)): return a < b ? -1 : (a > b ? 1 : 0)
            default: return nil
            }
        }

        /// Runs the tests (and the cutoff) on `bytes`, a record (malformed ones are `undecided`).
        func verdict(_ bytes: UnsafeRawBufferPointer) -> Verdict {
            FieldTests.verdict(screen, bytes)
        }

        /// ``verdict(_:)`` on the plain data of a `FieldTests`, which the caller keeps alive.
        /// Reads the record with raw loads; every read is checked against its end.
        @inline(__always)
        static func verdict(_ screen: UnsafeMutablePointer<Screen>, _ bytes: UnsafeRawBufferPointer) -> Verdict {
            let tests = screen.pointee.tests
            let testCount = screen.pointee.testCount
            let testedMask = screen.pointee.testedMask
            guard screen.pointee.isUsable, let start = bytes.baseAddress, bytes.count > 0,
                start.load(as: UInt8.self) == formatVersion
            else { return .undecided }
            let cutoffOrdinal = screen.pointee.hasCutoff ? screen.pointee.cutoffOrdinal : -1
            let wanted = testedMask | (cutoffOrdinal >= 0 ? 1 << UInt64(cutoffOrdinal) : 0)
            let end = start + bytes.count
            var cursor = start + 1
            var seen: UInt64 = 0

            /// A LEB128 varint at `cursor`, or `nil` when it runs past the end or 64 bits.
            @inline(__always)
            func varint() -> UInt64? {
                guard cursor < end else { return nil }
                let first = cursor.load(as: UInt8.self)
                cursor += 1
                if first < 0x80 { return UInt64(first) }
                var result = UInt64(first & 0x7F)
                var shift: UInt64 = 7
                while cursor < end {
                    let next = cursor.load(as: UInt8.self)
                    cursor += 1
                    guard shift < 64 else { return nil }
                    result |= UInt64(next & 0x7F) << shift
                    if next < 0x80 { return result }
                    shift += 7
                }
                return nil
            }

            while cursor < end && seen != wanted {
                guard let ordinal = varint(), cursor < end else { return .undecided }
                let tag = cursor.load(as: UInt8.self)
                cursor += 1
                guard ordinal < 64, wanted & (1 << ordinal) != 0 else {
                    // Skip the payload.
                    switch tag {
                    case 1, 2: break
                    case 3, 6: guard varint() != nil else { return .undecided }
                    case 4:
                        guard end - cursor >= 8 else { return .undecided }
                        cursor += 8
                    case 5, 7:
                        guard let length = varint(), length <= UInt64(end - cursor) else { return .undecided }
                        cursor += Int(length)
                    default: return .undecided
                    }
                    continue
                }
                seen |= 1 << ordinal
                let field: Field
                switch tag {
                case 1, 2: field = .bool(tag == 2)
                case 3, 6:
                    guard let raw = varint() else { return .undecided }
                    let number = RecordCodec.unzigzag(raw)
                    field = tag == 3 ? .integer(number) : .date(number)
                    if Int(ordinal) == cutoffOrdinal, tag == screen.pointee.cutoffTag {
                        let cutoff = screen.pointee.cutoff
                        if screen.pointee.cutoffDescending ? number < cutoff : number > cutoff { return .rejected }
                    }
                case 4:
                    guard end - cursor >= 8 else { return .undecided }
                    field = .double(Double(bitPattern: UInt64(littleEndian: cursor.loadUnaligned(as: UInt64.self))))
                    cursor += 8
                default:
                    return .undecided
                }
                guard testedMask & (1 << ordinal) != 0 else { continue }
                for index in 0..<testCount where tests[index].ordinal == Int(ordinal) {
                    let test = tests[index]
                    guard let comparison = FieldTests.order(field, test.literal) else { return .undecided }
                    let passes: Bool
                    switch test.op {
                    case .eq: passes = comparison == 0
                    case .ne: passes = comparison != 0
                    case .gt: passes = comparison > 0
                    case .ge: passes = comparison >= 0
                    case .lt: passes = comparison < 0
                    case .le: passes = comparison <= 0
                    }
                    if !passes { return .rejected }
                }
            }
            if seen & testedMask != testedMask {
                // Tested columns absent from the record are null there: only `ne` admits a null.
                for index in 0..<testCount where seen & (1 << UInt64(tests[index].ordinal)) == 0 {
                    if tests[index].op != .ne { return .rejected }
                }
            }
            return .passed
        }
    }
}
