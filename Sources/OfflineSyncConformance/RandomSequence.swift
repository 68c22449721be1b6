import OfflineSync

/// Draws the steps of a random sequence from a seed, looking at the reference store's schema and
/// rows so that steps touch rows that exist, columns a reopen added, and tables a reopen left out.
///
/// The same seed gives the same steps: the reference store is deterministic, and nothing else is
/// read. What a step may be is documented on ``RandomStep``; how often each kind comes is below
/// (`step(reference:)`).
struct RandomSequence {
    private var random: SeededRandom
    /// A counter for the names of the tables, columns and indexes reopens add.
    private var nextName = 0

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// The schema of the first step: an unsynced table with a column of every type and indexes
    /// (single, composite, with `id`), and a synced one.
    static let initialSchema = StoreSchema([
        TableSchema(
            "rnd_items",
            columns: [
                Column("b", .bool), Column("i", .integer), Column("d", .double), Column("s", .string),
                Column("t", .date), Column("j", .json), Column("u", .string),
            ],
            indexes: [
                TableIndex("rnd_items_s", on: ["s"]), TableIndex("rnd_items_i", on: ["i"]),
                TableIndex("rnd_items_d_id", on: ["d", "id"]), TableIndex("rnd_items_b_t", on: ["b", "t"]),
                TableIndex("rnd_items_j", on: ["j"]),
            ], synced: false),
        TableSchema(
            "rnd_notes", columns: [Column("title", .string), Column("n", .integer)],
            indexes: [TableIndex("rnd_notes_title", on: ["title"])]),
    ])

    /// A table no step declares.
    static let undeclaredTable = "rnd_undeclared"

    // MARK: Steps

    /// The next step, given what the reference holds now.
    mutating func step(reference: InMemoryStore) -> RandomStep {
        guard let schema = try? reference.schema, !schema.tables.isEmpty else {
            return .reopen(Self.initialSchema)
        }
        let tables = schema.tables.map { table in
            (table, ((try? reference.read(Query(table: table.name, selection: [])).items) ?? []).map(\.id))
        }
        // Tables grown past a few hundred rows are trimmed, so reads stay cheap.
        if let (table, ids) = tables.first(where: { $0.1.count > 150 }), random.chance(40) {
            return .write(trim(table, ids: ids), rollback: random.chance(10))
        }
        switch random.int(in: 0...99) {
        case 0...6: return .reopen(reopenSchema(stored: schema))
        case 7...26:
            let (table, ids) = random.pick(tables)
            return .read(query(on: table, ids: ids))
        case 27...33:
            let (table, ids) = random.pick(tables)
            return .lookup(table: random.chance(3) ? Self.undeclaredTable : table.name, id: id(from: ids))
        case 34...36:
            let (table, ids) = random.pick(tables)
            return .write(bulk(table, ids: ids), rollback: random.chance(40))
        default:
            let operations = (0..<random.int(in: 1...6)).map { _ in
                let (table, ids) = random.pick(tables)
                return operation(on: table, ids: ids)
            }
            return .write(operations, rollback: random.chance(15))
        }
    }

    private mutating func operation(on table: TableSchema, ids: [String]) -> RandomOperation {
        let origin: WriteOrigin = random.chance(50) ? .local : .server
        if random.chance(5) {
            // A batch of one row that the core refuses (of an id no step writes, so that neither
            // what a failing batch leaves of its other rows nor whether `insertNew` checks the
            // rows it keeps comes into it, which the contract leaves open).
            nextName += 1
            let bad = [
                random.chance(20)
                    ? Item(id: random.pick(Self.invalidIds), values: [:])
                    : item(for: table, id: "bad\(nextName)", origin: origin, invalid: true)
            ]
            return random.chance(60)
                ? .upsert(bad, table: tableName(table), origin: origin)
                : .insertNew(bad, table: tableName(table), origin: origin)
        }
        switch random.int(in: 0...19) {
        case 0...5: return .upsert(items(for: table, ids: ids, origin: origin), table: tableName(table), origin: origin)
        case 6...8:
            return .insertNew(items(for: table, ids: ids, origin: origin), table: tableName(table), origin: origin)
        case 9, 10: return .deleteIds(idList(ids), table: tableName(table))
        case 11, 12: return .deleteMatching(query(on: table, ids: ids))
        case 13...16: return .read(query(on: table, ids: ids))
        default: return .lookup(table: tableName(table), id: id(from: ids))
        }
    }

    /// The table's name, or now and then one no open declared.
    private mutating func tableName(_ table: TableSchema) -> String {
        random.chance(2) ? Self.undeclaredTable : table.name
    }

    /// Deletes most rows of a grown table: by a query, by ids, or both.
    private mutating func trim(_ table: TableSchema, ids: [String]) -> [RandomOperation] {
        var operations: [RandomOperation] = []
        if random.chance(50) {
            operations.append(
                .deleteMatching(Query(table: table.name, filter: predicate(on: table, ids: ids, depth: 1))))
        }
        if random.chance(50) { operations.append(.read(query(on: table, ids: ids))) }
        let keep = random.int(in: 0...40)
        operations.append(.deleteIds(Array(ids.shuffled(using: &random).dropFirst(keep)), table: table.name))
        if random.chance(50) { operations.append(.read(query(on: table, ids: ids))) }
        return operations
    }

    /// More than a thousand rows written in one transaction, read back inside it (filters,
    /// windows around 1,000, counts, lookups, insertNew over them) and mostly deleted again.
    private mutating func bulk(_ table: TableSchema, ids: [String]) -> [RandomOperation] {
        let count = random.pick([999, 1_000, 1_001, 1_001, 1_050, 1_100])
        let prefix = "bulk\(random.int(in: 0...9))-"
        let bulkIds = (0..<count).map { "\(prefix)\($0)" }
        let origin: WriteOrigin = random.chance(50) ? .local : .server
        var operations: [RandomOperation] = []
        let rows = bulkIds.map { item(for: table, id: $0, origin: origin, invalid: false) }
        if random.chance(70) {
            operations.append(.upsert(rows, table: table.name, origin: origin))
        } else {
            operations.append(.insertNew(rows, table: table.name, origin: origin))
        }
        let all = ids + bulkIds
        for _ in 0..<random.int(in: 2...5) {
            switch random.int(in: 0...5) {
            case 0:
                operations.append(.lookup(table: table.name, id: random.pick(bulkIds)))
            case 1:
                let again = (0..<random.int(in: 1...20)).map { _ in
                    item(
                        for: table, id: random.chance(70) ? random.pick(bulkIds) : id(from: ids, invalid: false),
                        origin: origin, invalid: false)
                }
                operations.append(.insertNew(again, table: table.name, origin: origin))
            case 2:
                var window = Query(table: table.name, filter: predicate(on: table, ids: all, depth: 1))
                window.skip = random.pick([0, 0, 1, 998, 999, 1_000])
                window.top = random.pick([1, 999, 1_000, 1_001, 5_000])
                window.orderBy = [
                    SortKey(random.pick(["id"] + table.columns.map(\.name)), descending: random.chance(50))
                ]
                operations.append(.deleteMatching(window))
            default:
                var read = query(on: table, ids: all)
                if random.chance(50) {
                    read.filter = .function(.startsWith, [.column("id"), .literal(.string(prefix))])
                }
                if random.chance(50) { read.top = random.pick([999, 1_000, 1_001, nil]) }
                read.includeTotalCount = random.chance(60)
                operations.append(.read(read))
            }
        }
        if random.chance(70) {
            operations.append(
                .deleteMatching(
                    Query(
                        table: table.name, filter: .function(.startsWith, [.column("id"), .literal(.string(prefix))]))))
            operations.append(.read(Query(table: table.name, top: 0, includeTotalCount: true)))
        }
        return operations
    }

    // MARK: Reopens

    private mutating func reopenSchema(stored: StoreSchema) -> StoreSchema {
        switch random.int(in: 0...9) {
        case 0, 1: return StoreSchema([])
        case 2, 3, 4: return widened(stored, leaveOut: 30)
        case 5, 6: return widened(stored, leaveOut: 70)
        case 7, 8: return retyped(stored)
        default: return stored
        }
    }

    /// `stored` declared again with tables left out (each with probability `leaveOut` percent),
    /// columns left out of some tables, and new columns, indexes and tables.
    private mutating func widened(_ stored: StoreSchema, leaveOut: Int) -> StoreSchema {
        var tables: [TableSchema] = []
        for table in stored.tables where !random.chance(leaveOut) {
            tables.append(redeclared(table, widen: random.chance(50)))
        }
        if stored.tables.count < 5, random.chance(30) {
            nextName += 1
            let columns = (0..<random.int(in: 1...3)).map { position in
                Column("c\(position)", random.pick(ColumnType.allCases))
            }
            let indexes = random.chance(50) ? [TableIndex("rnd_t\(nextName)_c0", on: ["c0"])] : []
            tables.append(
                TableSchema("rnd_t\(nextName)", columns: columns, indexes: indexes, synced: random.chance(30)))
        }
        return StoreSchema(tables)
    }

    /// `table` declared again: some of its columns (always those of the indexes declared again),
    /// and when `widen`, a new column and maybe a new index.
    private mutating func redeclared(_ table: TableSchema, widen: Bool) -> TableSchema {
        let own = table.columns.filter { !table.synced || SystemProperty(rawValue: $0.name) == nil }
        var indexes = table.indexes.filter { _ in random.chance(60) }
        let needed = Set(indexes.flatMap(\.columns))
        var columns = own.filter { needed.contains($0.name) || random.chance(70) }
        if widen {
            nextName += 1
            let added = Column("w\(nextName)", random.pick(ColumnType.allCases))
            columns.append(added)
            if random.chance(50) {
                let other = random.pick(columns)
                let on = random.chance(50) ? [added.name] : [other.name, added.name]
                indexes.append(TableIndex("rnd_ix\(nextName)", on: on.count == 2 && on[0] == on[1] ? [added.name] : on))
            }
        } else if random.chance(30), let column = own.randomElement(using: &random) {
            // An index added over the rows already stored.
            nextName += 1
            indexes.append(TableIndex("rnd_ix\(nextName)", on: [column.name]))
            if !columns.contains(column) { columns.append(column) }
        }
        return TableSchema(table.name, columns: columns, indexes: indexes, synced: table.synced)
    }

    /// A declaration that changes the type of one column, beside a widening: both stores must
    /// reject it and change nothing, the widening included.
    private mutating func retyped(_ stored: StoreSchema) -> StoreSchema {
        var widened = self.widened(stored, leaveOut: 20)
        let candidates = stored.tables.filter { table in
            table.columns.contains { !table.synced || SystemProperty(rawValue: $0.name) == nil }
        }
        guard let table = candidates.randomElement(using: &random) else { return widened }
        let own = table.columns.filter { !table.synced || SystemProperty(rawValue: $0.name) == nil }
        let column = random.pick(own)
        let other = random.pick(ColumnType.allCases.filter { $0 != column.type })
        let declared = TableSchema(
            table.name,
            columns: [Column(column.name, other)] + own.filter { $0.name != column.name && random.chance(50) },
            synced: table.synced)
        var tables = widened.tables.filter { $0.name != table.name }
        tables.insert(declared, at: random.int(in: 0...tables.count))
        widened = StoreSchema(tables)
        return widened
    }

    // MARK: Rows

    private static let specialIds: [String] = [
        "A", "a", "\u{E9}", "e\u{301}", "a b", "a ", " a", "😀", "0", "00", "1e3", "%", "_", "x\u{FEFF}", "\u{FEFF}x",
        String(repeating: "i", count: 255), String(repeating: "\u{E9}", count: 127),
    ]

    /// Ids the core refuses: empty, longer than 255 bytes, holding U+0000.
    private static let invalidIds = ["", String(repeating: "i", count: 256), "a\u{0}b"]

    /// An id: a present one, one of a pool of plain and awkward ids, or (rarely) an invalid one.
    private mutating func id(from ids: [String], invalid: Bool = true) -> String {
        if !ids.isEmpty, random.chance(55) { return random.pick(ids) }
        if invalid, random.chance(1) { return random.pick(Self.invalidIds) }
        return random.chance(70) ? "r\(random.int(in: 0...39))" : random.pick(Self.specialIds)
    }

    private mutating func idList(_ ids: [String]) -> [String] {
        if random.chance(4) {
            // Lists around the parameter limits, mostly of ids that are not there.
            let count = random.pick([999, 1_000, 1_001, 32_766, 32_767])
            return (0..<count).map { position in
                random.chance(1) && !ids.isEmpty ? random.pick(ids) : "m\(position)"
            } + ids.prefix(3)
        }
        return (0..<random.int(in: 1...5)).map { _ in id(from: ids, invalid: false) }
    }

    private mutating func items(for table: TableSchema, ids: [String], origin: WriteOrigin) -> [Item] {
        let count: Int
        switch random.int(in: 0...49) {
        case 0: count = random.pick([16, 32, 64])
        case 1: count = random.pick([999, 1_000, 1_001])
        case 2: count = 0
        default: count = random.int(in: 1...4)
        }
        if count > 64 {
            return (0..<count).map { _ in
                item(for: table, id: "b\(random.int(in: 0...1_999))", origin: origin, invalid: false)
            }
        }
        return (0..<count).map { _ in
            item(for: table, id: id(from: ids, invalid: false), origin: origin, invalid: false)
        }
    }

    /// A row of `table`: each column absent, null or a value (sometimes one the core converts),
    /// and when `invalid`, a value of the wrong type or a column the table does not declare.
    private mutating func item(for table: TableSchema, id: String, origin: WriteOrigin, invalid: Bool) -> Item {
        var values: [String: Value] = [:]
        for column in table.columns where !random.chance(25) {
            values[column.name] = random.chance(6) ? .null : value(of: column.type, converted: random.chance(5))
        }
        if invalid {
            if random.chance(50), let column = table.columns.randomElement(using: &random) {
                values[column.name] = wrongValue(for: column.type)
            } else {
                values["zz_unknown"] = .int(1)
            }
        }
        return Item(id: id, values: values)
    }

    private mutating func wrongValue(for type: ColumnType) -> Value {
        switch type {
        case .bool: return .string("yes")
        case .integer: return random.pick([.double(2.5), .string("x"), .double(.nan), .double(1e300)])
        case .double: return random.pick([.string("1.5"), .double(.nan), .double(.infinity)])
        case .string: return .int(7)
        case .date: return random.pick([.string("2026-13-01"), .int(0), .string("0000-12-31T00:00:00Z")])
        case .json: return random.pick([.json("1"), .json("[1,"), .string("nope"), .json("\"text\"")])
        }
    }

    /// A value of `type` from the corners of ``RandomValues``; when `converted`, in a form the
    /// core converts (an integral double into an integer column, ISO 8601 text into a date).
    mutating func value(of type: ColumnType, converted: Bool = false) -> Value {
        switch type {
        case .bool: return .bool(random.chance(50))
        case .integer:
            if converted { return .double(Double(random.int(in: -1_000...1_000))) }
            return .int(random.chance(70) ? random.pick(RandomValues.integers) : Int64(random.int(in: -10...10)))
        case .double:
            if converted { return .int(random.pick(RandomValues.integers)) }
            return .double(random.chance(75) ? random.pick(RandomValues.doubles) : Double(random.int(in: -40...40)) / 4)
        case .string: return .string(string())
        case .date:
            let milliseconds =
                random.chance(50)
                ? random.pick(RandomValues.dates)
                : Int64(random.int(in: -20_000...20_000)) * 86_400_000 + Int64(random.int(in: 0...86_399_999))
            if converted {
                let hours = random.int(in: -12...14)
                let minutes = random.pick([0, 30, 45])
                let sign = hours < 0 ? "-" : "+"
                let offset = "\(sign)\(abs(hours) < 10 ? "0" : "")\(abs(hours)):\(minutes == 0 ? "00" : String(minutes))"
                let text = Timestamp(millisecondsSince1970: milliseconds).iso8601
                // The text's fields read at an offset name another instant; only one inside the
                // years a date column holds is a valid value (one outside is refused).
                let shift = Int64((abs(hours) * 60 + minutes) * 60_000) * (hours < 0 ? -1 : 1)
                let instant = Timestamp(millisecondsSince1970: milliseconds - shift)
                let fits = instant >= .minimum && instant <= .maximum
                return .string(random.chance(50) || !fits ? text : String(text.dropLast()) + offset)
            }
            return .date(Timestamp(millisecondsSince1970: milliseconds))
        case .json:
            if random.chance(2) {
                return .json(random.pick(RandomValues.longJSONArrays))
            }
            return .json(random.pick(RandomValues.jsonTexts))
        }
    }

    /// A string: a corner, white space around one, or a threshold length (long ones rarely).
    mutating func string() -> String {
        switch random.int(in: 0...99) {
        case 0...59: return random.pick(RandomValues.strings)
        case 60...74:
            return random.pick(RandomValues.whiteSpace) + random.pick(RandomValues.strings)
                + random.pick(RandomValues.whiteSpace)
        case 75...89: return random.pick(RandomValues.strings) + random.pick(RandomValues.strings)
        case 90...96:
            let length = random.pick(RandomValues.thresholds.filter { $0 < 2_000 })
            return RandomValues.sized(
                length, stem: random.int(in: 0...4), tail: random.int(in: 0...8), lead: random.int(in: 0...4))
        default:
            let length = random.pick([32_766, 32_767, 65_535, 65_536, 65_537, 70_000])
            return RandomValues.sized(
                length, stem: random.int(in: 0...1), tail: random.int(in: 0...3), lead: random.int(in: 0...1))
        }
    }

    // MARK: Queries

    /// A query on `table`: a filter (mostly), an ordering of up to three keys, windows around the
    /// thresholds, a count and a selection now and then; rarely one naming an undeclared column,
    /// which both stores must reject.
    mutating func query(on table: TableSchema, ids: [String]) -> Query {
        var query = Query(table: table.name)
        if random.chance(85) { query.filter = predicate(on: table, ids: ids, depth: random.int(in: 0...2)) }
        let keys = ["id"] + table.columns.map(\.name)
        for _ in 0..<random.int(in: 0...3) {
            query.orderBy.append(SortKey(random.pick(keys), descending: random.chance(50)))
        }
        if random.chance(25) {
            query.skip = random.chance(70) ? random.int(in: 0...5) : random.pick([16, 999, 1_000, 1_001])
        }
        if random.chance(35) {
            query.top =
                random.chance(60) ? random.int(in: 0...5) : random.pick([16, 32, 64, 999, 1_000, 1_001, 32_766])
        }
        query.includeTotalCount = random.chance(30)
        if random.chance(20) {
            query.selection = keys.filter { _ in random.chance(35) }
        }
        if random.chance(2) {
            if random.chance(50) {
                query.orderBy.append(SortKey("zz_unknown"))
            } else {
                query.filter = .comparison(.column("zz_unknown"), .eq, .literal(.int(1)))
            }
        }
        return query
    }

    /// A boolean expression of at most `depth` levels of `and`, `or` and `not`.
    mutating func predicate(on table: TableSchema, ids: [String], depth: Int) -> FilterExpression {
        var concats = 6
        return predicate(on: table, ids: ids, depth: depth, concats: &concats)
    }

    private mutating func predicate(on table: TableSchema, ids: [String], depth: Int, concats: inout Int)
        -> FilterExpression
    {
        guard depth > 0, random.chance(60) else { return condition(on: table, ids: ids, concats: &concats) }
        switch random.int(in: 0...2) {
        case 0:
            return .and(
                predicate(on: table, ids: ids, depth: depth - 1, concats: &concats),
                predicate(on: table, ids: ids, depth: depth - 1, concats: &concats))
        case 1:
            return .or(
                predicate(on: table, ids: ids, depth: depth - 1, concats: &concats),
                predicate(on: table, ids: ids, depth: depth - 1, concats: &concats))
        default: return .not(predicate(on: table, ids: ids, depth: depth - 1, concats: &concats))
        }
    }

    private func columns(of table: TableSchema, _ types: Set<ColumnType>) -> [String] {
        table.columns.filter { types.contains($0.type) }.map(\.name) + (types.contains(.string) ? ["id"] : [])
    }

    /// One condition without `and`, `or` or `not` at the top.
    private mutating func condition(on table: TableSchema, ids: [String], concats: inout Int) -> FilterExpression {
        let strings = columns(of: table, [.string])
        let numbers = columns(of: table, [.integer, .double])
        let dates = columns(of: table, [.date])
        let all = ["id"] + table.columns.map(\.name)
        let types = Dictionary(uniqueKeysWithValues: table.columns.map { ($0.name, $0.type) } + [("id", .string)])
        switch random.int(in: 0...21) {
        case 0, 1, 2:
            let column = random.pick(all)
            let literal = FilterExpression.literal(literal(for: types[column]!, ids: ids))
            let op = random.pick(ComparisonOperator.allCases)
            return random.chance(80)
                ? .comparison(.column(column), op, literal) : .comparison(literal, op, .column(column))
        case 3:
            return .comparison(.column(random.pick(all)), random.pick([.eq, .ne]), .literal(.null))
        case 4, 5:
            let column = random.pick(all)
            return .isIn(.column(column), list(for: types[column]!, ids: ids))
        case 6:
            let function = random.pick([Function.startsWith, .endsWith, .contains])
            return .function(function, [stringExpression(strings), .literal(needle())])
        case 7:
            return .comparison(
                .function(.length, [stringExpression(strings)]), random.pick(ComparisonOperator.allCases),
                .literal(.int(random.pick([0, 1, 2, 3, 255, 1_000, 32_766, 32_767, 65_535, 65_536, 65_537]))))
        case 8:
            return .comparison(
                .function(.indexOf, [stringExpression(strings), .literal(needle())]),
                random.pick(ComparisonOperator.allCases),
                .literal(.int(Int64(random.int(in: -1...3)))))
        case 9, 10:
            return .comparison(
                stringFunction(strings, concats: &concats), random.pick([.eq, .ne, .lt, .ge]),
                .literal(.string(string())))
        case 11, 12:
            guard !numbers.isEmpty else { return .comparison(.column("id"), .ne, .literal(.null)) }
            return .comparison(
                arithmetic(numbers), random.pick(ComparisonOperator.allCases), .literal(numericLiteral()))
        case 13:
            guard let column = dates.randomElement(using: &random) else {
                return .comparison(.column("id"), .gt, .literal(.string("")))
            }
            let part = random.pick([Function.year, .month, .day, .hour, .minute, .second])
            return .comparison(
                .function(part, [.column(column)]), random.pick(ComparisonOperator.allCases),
                .literal(.int(Int64(random.pick([1, 12, 31, 0, 59, 1969, 1970, 1582, 2000, 9999])))))
        case 14:
            guard !numbers.isEmpty else { return .comparison(.column("id"), .lt, .literal(.string("r"))) }
            let function = random.pick([Function.round, .floor, .ceiling])
            return .comparison(
                .function(function, [arithmetic(numbers)]), random.pick(ComparisonOperator.allCases),
                .literal(numericLiteral()))
        case 15:
            guard let column = columns(of: table, [.bool]).randomElement(using: &random) else {
                return .comparison(.column("id"), .eq, .literal(.string("a")))
            }
            return random.pick([
                .column(column), .not(.column(column)),
                .comparison(.column(column), .eq, .literal(.bool(random.chance(50)))),
            ])
        case 16, 17:
            let column = random.pick(all)
            let type = types[column]!
            let family: Set<ColumnType> =
                type == .integer || type == .double
                ? [.integer, .double] : type == .string || type == .json ? [.string, .json] : [type]
            let other = random.pick(
                table.columns.filter { family.contains($0.type) }.map(\.name) + (family.contains(.string) ? ["id"] : [])
            )
            return .comparison(.column(column), random.pick(ComparisonOperator.allCases), .column(other))
        case 18:
            // A long literal against an indexed (or any) string column: two strings that share
            // their first 64 KiB differ after it.
            let column = random.pick(strings)
            let length = random.pick([255, 256, 1_001, 32_767, 65_535, 65_536, 65_537, 70_000])
            let text = RandomValues.sized(
                length, stem: random.int(in: 0...1), tail: random.int(in: 0...3), lead: random.int(in: 0...1))
            switch random.int(in: 0...3) {
            case 0: return .function(.startsWith, [.column(column), .literal(.string(text))])
            case 1: return .comparison(.column(column), random.pick([.lt, .ge]), .literal(.string(text)))
            default: return .comparison(.column(column), random.pick([.eq, .ne]), .literal(.string(text)))
            }
        default:
            let column = random.pick(all)
            return .comparison(
                .column(column), random.pick(ComparisonOperator.allCases),
                .literal(literal(for: types[column]!, ids: ids)))
        }
    }

    /// A string column, sometimes through `tolower`, `toupper` or `trim`.
    private mutating func stringExpression(_ strings: [String]) -> FilterExpression {
        let column = FilterExpression.column(random.pick(strings))
        switch random.int(in: 0...6) {
        case 0: return .function(.toLower, [column])
        case 1: return .function(.toUpper, [column])
        case 2: return .function(.trim, [column])
        default: return column
        }
    }

    private mutating func stringFunction(_ strings: [String], concats: inout Int) -> FilterExpression {
        let inner = stringExpression(strings)
        switch random.int(in: 0...5) {
        case 0: return .function(.trim, [inner])
        case 1 where concats > 0:
            concats -= 1
            return .function(.concat, random.chance(50) ? [inner, .literal(needle())] : [.literal(needle()), inner])
        case 2:
            var arguments = [inner, .literal(.int(random.pick([-1, 0, 1, 2, 5, 65_535, 65_536, .max, .min])))]
            if random.chance(60) { arguments.append(.literal(.int(random.pick([-1, 0, 1, 3, 65_536, .max])))) }
            return .function(.substring, arguments)
        case 3:
            return .function(
                .replace,
                [inner, .literal(needle()), .literal(.string(random.pick(["", "x", "😀😀", " ", "\u{FEFF}"])))])
        case 4: return .function(.toLower, [inner])
        default: return .function(.toUpper, [inner])
        }
    }

    /// An arithmetic expression over a numeric column, with the operands of the documented
    /// corners: overflow, division by `0`, `0.0` and `-0.0`, the most negative integer by `-1`.
    private mutating func arithmetic(_ numbers: [String]) -> FilterExpression {
        let column = FilterExpression.column(random.pick(numbers))
        switch random.int(in: 0...6) {
        case 0:
            return .arithmetic(.literal(.int(.min)), random.pick([.div, .mod, .mul, .sub]), .literal(.int(-1)))
        case 1:
            return .arithmetic(
                column, random.pick([.div, .mod]),
                .literal(random.pick([.int(0), .double(0), .double(-0.0), .int(-1)])))
        case 2: return .negate(column)
        case 3:
            return .arithmetic(
                .arithmetic(column, random.pick(ArithmeticOperator.allCases), .literal(numericLiteral())),
                random.pick(ArithmeticOperator.allCases), .column(random.pick(numbers)))
        default:
            return .arithmetic(column, random.pick(ArithmeticOperator.allCases), .literal(numericLiteral()))
        }
    }

    private mutating func numericLiteral() -> Value {
        switch random.int(in: 0...9) {
        case 0...3: return .int(Int64(random.int(in: -3...3)))
        case 4, 5: return .int(random.pick(RandomValues.integers))
        case 6, 7: return .double(random.pick(RandomValues.doubles))
        case 8: return .double(Double(random.int(in: -12...12)) / 4)
        default: return .null
        }
    }

    private mutating func needle() -> Value {
        if random.chance(4) { return .null }
        switch random.int(in: 0...9) {
        case 0...5: return .string(random.pick(RandomValues.strings))
        case 6, 7: return .string(random.pick(RandomValues.whiteSpace))
        default:
            return .string(
                RandomValues.sized(
                    random.pick(RandomValues.thresholds), stem: random.int(in: 0...4), tail: random.int(in: 0...8),
                    lead: 0))
        }
    }

    /// A literal for a column of `type`: mostly from the corners, sometimes null, for numbers
    /// sometimes of the other numeric type, for JSON columns sometimes a string.
    private mutating func literal(for type: ColumnType, ids: [String]) -> Value {
        if random.chance(6) { return .null }
        switch type {
        case .integer where random.chance(25): return .double(random.pick(RandomValues.doubles))
        case .double where random.chance(25): return .int(random.pick(RandomValues.integers))
        case .json where random.chance(30): return .string(random.pick(RandomValues.jsonTexts))
        case .string where !ids.isEmpty && random.chance(20): return .string(random.pick(ids))
        case .date: return value(of: .date)
        default: return value(of: type)
        }
    }

    /// An `in` list of a size around a threshold, for numbers mixing integers, doubles and null.
    private mutating func list(for type: ColumnType, ids: [String]) -> [Value] {
        let count: Int
        switch random.int(in: 0...99) {
        case 0...59: count = random.int(in: 0...4)
        case 60...79: count = random.pick([16, 32, 64, 65, 100, 101])
        case 80...97: count = random.pick([999, 1_000, 1_001])
        default: count = random.pick([32_766, 32_767])
        }
        var values = (0..<count).map { _ -> Value in
            switch type {
            case .integer, .double:
                if random.chance(3) { return .null }
                return random.chance(50)
                    ? .int(random.chance(50) ? Int64(random.int(in: -50...50)) : random.pick(RandomValues.integers))
                    : .double(
                        random.chance(50) ? Double(random.int(in: -100...100)) / 2 : random.pick(RandomValues.doubles))
            case .string where !ids.isEmpty && random.chance(40): return .string(random.pick(ids))
            default: return literal(for: type, ids: ids)
            }
        }
        if count > 0, random.chance(30) { values[random.int(in: 0...(count - 1))] = .null }
        return values
    }
}
