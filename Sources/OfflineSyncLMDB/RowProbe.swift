import OfflineSync

/// A query's filter and ordering compiled against the column ordinals of one table, so that a
/// candidate row is tested and ranked on the few fields of its encoded record that the query
/// reads, without decoding the row into an `Item`.
///
/// The filter is evaluated exactly as ``OfflineSync/QueryEvaluator/matches(_:)`` evaluates it on
/// the decoded row (the same operators, functions and null rules, called through the core's
/// public `compare`, `apply`, `arithmetic` and `negate`), only with each column read from a slot
/// filled from the record instead of from an item's values; a field absent from the record reads
/// as null, as it does in an item. Ordering compares the same values with
/// ``OfflineSync/ValueSemantics/compare(_:_:)``, then the ids' bytes, as
/// ``OfflineSync/QueryEvaluator/precedes(_:_:)`` does. Only the rows a query returns are decoded
/// whole.
///
/// A class, not a struct: the scan's closure uses the probe once per candidate row, and a struct
/// of this many arrays was copied (and each array retained and released) at every use.
final class RowProbe {
    /// For each column ordinal of the table, its slot in ``Row/values``, or `-1` when the query
    /// does not read the column.
    let slots: [Int]
    /// How many slots are used (the columns the filter or the ordering reads, `id` aside).
    let slotCount: Int
    /// The compiled filter, `nil` when the query has none.
    let filter: Node?
    /// The ordering keys: the slot each reads (`-1`: `id`) and its direction.
    let order: [(slot: Int, descending: Bool)]
    /// `true` when the filter reads `id` (its text is then made for every candidate).
    let filterReadsId: Bool
    /// The filter's simple conjuncts, tested on the encoded record before anything is decoded.
    let fieldTests: RecordCodec.FieldTests?

    /// A filter expression whose column references are slots.
    indirect enum Node {
        case literal(Value)
        case slot(Int)
        case id
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
        case comparison(Node, ComparisonOperator, Node)
        /// `slot op literal`, the commonest comparison, without evaluating the literal.
        case compareSlot(Int, ComparisonOperator, Value)
        case isIn(Node, [Value])
        case function(Function, [Node])
        case arithmetic(Node, ArithmeticOperator, Node)
        case negate(Node)
    }

    /// The fields of one candidate row that the query reads.
    struct Row {
        /// By slot; null where the record has no field.
        var values: [Value]
        /// The id, as `.string`, when ``RowProbe/filterReadsId``; `.null` otherwise.
        var id: Value = .null
    }

    init(_ query: Query, layout: TableLayout) {
        var slotOfColumn: [String: Int] = [:]
        var slots = Array(repeating: -1, count: layout.columnNames.count)
        var slotCount = 0
        func slot(_ column: String) -> Int? {
            if column == "id" { return nil }
            if let existing = slotOfColumn[column] { return existing }
            guard let ordinal = layout.ordinals.ordinal(of: column) else { return -2 }  // not stored: always null
            slotOfColumn[column] = slotCount
            slots[ordinal] = slotCount
            slotCount += 1
            return slotCount - 1
        }
        var readsId = false
        func compile(_ expression: FilterExpression) -> Node {
            switch expression {
            case .literal(let value):
                return .literal(value)
            case .column(let name):
                guard let position = slot(name) else {
                    readsId = true
                    return .id
                }
                return position < 0 ? .literal(.null) : .slot(position)
            case .not(let operand):
                return .not(compile(operand))
            case .and(let lhs, let rhs):
                return .and(compile(lhs), compile(rhs))
            case .or(let lhs, let rhs):
                return .or(compile(lhs), compile(rhs))
            case .comparison(let lhs, let op, let rhs):
                let left = compile(lhs)
                let right = compile(rhs)
                if case .slot(let position) = left, case .literal(let value) = right {
                    return .compareSlot(position, op, value)
                }
                return .comparison(left, op, right)
            case .isIn(let operand, let values):
                return .isIn(compile(operand), values)
            case .function(let function, let arguments):
                return .function(function, arguments.map(compile))
            case .arithmetic(let lhs, let op, let rhs):
                return .arithmetic(compile(lhs), op, compile(rhs))
            case .negate(let operand):
                return .negate(compile(operand))
            }
        }
        filter = query.filter.map(compile)
        fieldTests = RecordCodec.FieldTests(query.filter, orderBy: query.orderBy, columns: layout.schema.columns)
        filterReadsId = readsId
        order = query.orderBy.map { key in
            // -1: the id; below -1: a column no record stores (always null).
            (slot: slot(key.column).map { $0 < 0 ? -2 : $0 } ?? -1, descending: key.descending)
        }
        self.slots = slots
        self.slotCount = slotCount
    }

    /// A row to fill with ``load(_:id:into:)``, reused from one candidate to the next.
    func makeRow() -> Row {
        Row(values: .nulls(count: slotCount))
    }

    /// Reads the fields the query needs from `record` into `row`; `false` when the record is
    /// malformed.
    @inline(__always)
    func load(_ record: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, into row: inout Row) -> Bool {
        if filterReadsId { row.id = .string(String(decoding: id, as: UTF8.self)) }
        guard slotCount > 0 else { return RecordCodec.isWellFormedHeader(record) }
        for position in row.values.indices { row.values[position] = .null }
        return RecordCodec.decode(record, slots: slots, into: &row.values, wanted: slotCount)
    }

    /// Tells the ``fieldTests`` (which screen each record before it is loaded: `.rejected` rows
    /// are not wanted; `.passed` rows pass the filter when the tests cover all of it) that the
    /// scan keeps enough rows and `last` is the last of them, so that records whose first
    /// ordering value sorts strictly after its are rejected unread (when that key is an integer
    /// or date column). Call only when no row beyond the kept ones matters (not while counting
    /// every match).
    func cutOff(after last: Candidate) {
        guard let fieldTests, fieldTests.cutoffKey != nil, let first = last.keys.first else { return }
        switch (first, fieldTests.cutoffKey?.tag) {
        case (.int(let number), 3): fieldTests.cutoff = number
        case (.date(let date), 6): fieldTests.cutoff = date.millisecondsSince1970
        default: fieldTests.cutoff = nil
        }
    }

    /// `true` when the loaded row satisfies the filter (always without one), given the
    /// ``fieldTests`` verdict of its record.
    @inline(__always)
    func matches(_ row: Row, screened verdict: RecordCodec.FieldTests.Verdict) -> Bool {
        guard let filter else { return true }
        if verdict == .passed, fieldTests?.coversFilter == true { return true }
        return truth(filter, row)
    }

    private func truth(_ node: Node, _ row: Row) -> Bool {
        switch node {
        case .and(let lhs, let rhs): return truth(lhs, row) && truth(rhs, row)
        case .or(let lhs, let rhs): return truth(lhs, row) || truth(rhs, row)
        case .not(let operand): return !truth(operand, row)
        case .compareSlot(let position, let op, let literal):
            return QueryEvaluator.compare(row.values[position], op, literal)
        case .comparison(let lhs, let op, let rhs):
            return QueryEvaluator.compare(value(lhs, row), op, value(rhs, row))
        default: return QueryEvaluator.isTrue(value(node, row))
        }
    }

    private func value(_ node: Node, _ row: Row) -> Value {
        switch node {
        case .literal(let value): return value
        case .slot(let position): return row.values[position]
        case .id: return row.id
        case .not, .and, .or, .comparison, .compareSlot: return .bool(truth(node, row))
        case .isIn(let operand, let values):
            let operand = value(operand, row)
            return .bool(values.contains { ValueSemantics.equal(operand, $0) })
        case .function(let function, let arguments):
            return QueryEvaluator.apply(function, arguments.map { value($0, row) })
        case .arithmetic(let lhs, let op, let rhs):
            return ValueSemantics.arithmetic(value(lhs, row), op, value(rhs, row))
        case .negate(let operand):
            return ValueSemantics.negate(value(operand, row))
        }
    }

    // MARK: - Ordering

    /// The value of ordering key `slot` in the loaded row.
    @inline(__always)
    private func orderValue(_ slot: Int, _ row: Row, id: UnsafeRawBufferPointer) -> Value {
        if slot >= 0 { return row.values[slot] }
        return slot == -1 ? .string(String(decoding: id, as: UTF8.self)) : .null
    }

    /// The ordering values of the loaded row.
    func sortKeys(of row: Row, id: UnsafeRawBufferPointer) -> [Value] {
        order.map { orderValue($0.slot, row, id: id) }
    }

    /// `true` when the loaded row, whose id is `id`, sorts before `other`.
    @inline(__always)
    func precedes(_ row: Row, id: UnsafeRawBufferPointer, _ other: Candidate) -> Bool {
        for position in order.indices {
            let key = order[position]
            let order = ValueSemantics.compare(orderValue(key.slot, row, id: id), other.keys[position])
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return KeyRange.compare(id, other.id) < 0
    }

    /// `true` when candidate `lhs` sorts before `rhs`.
    func precedes(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        for position in order.indices {
            let order = ValueSemantics.compare(lhs.keys[position], rhs.keys[position])
            if order != 0 { return self.order[position].descending ? order > 0 : order < 0 }
        }
        return KeyRange.compare(lhs.id, rhs.id) < 0
    }

    /// A matching row kept for the answer: its ordering values and where its id and record lie
    /// in the memory map (valid until the transaction ends or writes).
    struct Candidate {
        var keys: [Value]
        var id: UnsafeRawBufferPointer
        var record: UnsafeRawBufferPointer
    }
}

extension KeyRange {
    /// Lexicographic comparison of two byte buffers (LMDB's default key order).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let result = memcmp(x, y, common)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count > b.count ? 1 : 0)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
