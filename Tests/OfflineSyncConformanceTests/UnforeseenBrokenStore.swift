import OfflineSync
import OfflineSyncSQLite

/// A store with one bug that the conformance suite's cases were not written against: a wrapper
/// around a real store (``OfflineSync/InMemoryStore``, or an `SQLiteStore` for the bugs that need
/// a second instance over one location) that breaks one documented sentence of `LocalStore`,
/// `StoreTransaction`, the filter language or `ValueSemantics`, the way a backend author's next
/// bug would: past a threshold the cases did not cross, through a method the cases did not call
/// after a reopen, after a kind of write the cases did not mix, at a corner of the value semantics.
///
/// Each bug was written before any case aimed at it, and ``BrokenStoreTests`` records which cases
/// catch it (see the coverage matrix of the conformance DocC catalog, "Unforeseen broken stores").
final class UnforeseenBrokenStore: LocalStore {
    /// The one bug a store has, named after what it does.
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        // Thresholds beyond the sizes the cases crossed.
        /// An `eq` of an indexed string column with a literal longer than 65,535 UTF-8 bytes
        /// compares only the first 65,535 bytes (an index key capped at 64 KiB, no recheck).
        case indexedEqualityComparesTheFirst64KiB
        /// String functions read at most 65,535 bytes of each string argument (a 16-bit length).
        case stringFunctionsCutArgumentsPast64KiB
        /// An `in` list of more than 64 values never matches null (bound as an array without nulls).
        case longInListsNeverMatchNull
        /// An `in` list of more than 100 values is bound as an array of its first value's type:
        /// after an integer, the doubles are truncated to integers.
        case longInListsTakeTheirFirstValuesType
        /// Reads inside a transaction see only the first 1,000 rows the transaction upserted (a
        /// pending-row buffer of fixed size).
        case transactionReadsSeeOnlyTheFirst1000PendingRows
        /// Lookups inside a transaction see only the first 1,000 rows the transaction upserted.
        case transactionLookupsSeeOnlyTheFirst1000PendingRows
        // Reopen and widening through every method.
        /// A selection naming a column added by a reopen answers it as null (the projection was
        /// built from the first open's columns).
        case selectionsReadColumnsAddedOnReopenAsNull
        /// An ordering by a column added by a reopen is ignored.
        case orderingsIgnoreColumnsAddedOnReopen
        /// A filter reads a column added by a reopen as null (compiled against the first layout).
        case filtersReadColumnsAddedOnReopenAsNull
        /// `lookup` answers rows without the columns a reopen added.
        case lookupsDropColumnsAddedOnReopen
        /// Writes to a table the last open left out throw `unknownTable` (reads still work).
        case tablesLeftOutOfAReopenRefuseWrites
        /// A reopen rejected for a retyped column has already added the other tables and columns
        /// it declared.
        case rejectedReopensKeepTheirOtherAdditions
        /// An instance that has not yet seen another instance's widening fails its reads.
        case readsFailOnAnInstanceThatMissedAWidening
        // What a transaction sees of its own deletes and inserts, and what a caught error does.
        /// `lookup` inside a transaction answers a row that `delete(matching:)` deleted earlier in it.
        case transactionLookupsSeeRowsDeletedByQuery
        /// `insertNew` takes a row `delete(matching:)` deleted earlier in the transaction as present.
        case insertNewSeesRowsDeletedByQuery
        /// Filtered reads inside a transaction miss the rows `insertNew` inserted in it.
        case filteredTransactionReadsMissInsertNewRows
        /// An `insertNew` error caught by the closure rolls the whole transaction back.
        case caughtInsertNewErrorsRollBack
        /// A `delete(matching:)` error caught by the closure rolls the whole transaction back.
        case caughtDeleteByQueryErrorsRollBack
        /// A `lookup` error caught by the closure rolls the whole transaction back.
        case caughtLookupErrorsRollBack
        // Documented value semantics at their corners.
        /// `-9223372036854775808 div -1` wraps to the most negative integer instead of going on in doubles.
        case mostNegativeIntegerDividedByMinusOneWraps
        /// `-9223372036854775808 mod -1` is null (the overflow check of the division) instead of 0.
        case mostNegativeIntegerModMinusOneIsNull
        /// Division by `-0.0` is infinite (a zero test on the bits of `+0.0` only) instead of null.
        case divisionByNegativeZeroIsInfinite
        /// `trim` leaves U+FEFF (the white-space set of a library without it).
        case trimKeepsByteOrderMarks
        /// Strings that read as numbers are stored as the number's text (`'007'` → `'7'`), as a
        /// column with numeric affinity does.
        case storesNumericLookingStringsAsNumbers
        // Requirements no case observed.
        /// Says it is confined to its instance although a second instance can open its file.
        case claimsToBeConfinedToItsInstance
        /// `storedSchemaChanged()` throws while another thread is inside `write`.
        case storedSchemaChangedFailsDuringWrites

        var description: String { rawValue }

        /// The rule of `LocalStore`'s doc comment the bug breaks (0: a member outside the
        /// numbered rules, `isConfinedToInstance`).
        var rule: Int {
            switch self {
            case .selectionsReadColumnsAddedOnReopenAsNull, .orderingsIgnoreColumnsAddedOnReopen,
                .filtersReadColumnsAddedOnReopenAsNull, .lookupsDropColumnsAddedOnReopen,
                .tablesLeftOutOfAReopenRefuseWrites, .rejectedReopensKeepTheirOtherAdditions,
                .readsFailOnAnInstanceThatMissedAWidening:
                return 1
            case .storesNumericLookingStringsAsNumbers: return 3
            case .indexedEqualityComparesTheFirst64KiB, .stringFunctionsCutArgumentsPast64KiB,
                .longInListsNeverMatchNull, .longInListsTakeTheirFirstValuesType,
                .mostNegativeIntegerDividedByMinusOneWraps, .mostNegativeIntegerModMinusOneIsNull,
                .divisionByNegativeZeroIsInfinite, .trimKeepsByteOrderMarks:
                return 4
            case .transactionReadsSeeOnlyTheFirst1000PendingRows, .transactionLookupsSeeOnlyTheFirst1000PendingRows,
                .transactionLookupsSeeRowsDeletedByQuery, .insertNewSeesRowsDeletedByQuery,
                .filteredTransactionReadsMissInsertNewRows, .caughtInsertNewErrorsRollBack,
                .caughtDeleteByQueryErrorsRollBack, .caughtLookupErrorsRollBack:
                return 6
            case .storedSchemaChangedFailsDuringWrites: return 8
            case .claimsToBeConfinedToItsInstance: return 0
            }
        }

        /// `true` for the bugs only a second instance over one location shows: the store wraps an
        /// `SQLiteStore`, and the suite is given a second instance.
        var needsASecondInstance: Bool {
            self == .readsFailOnAnInstanceThatMissedAWidening || self == .claimsToBeConfinedToItsInstance
        }
    }

    private struct State {
        /// The stored schema after the first open.
        var firstStored: StoreSchema?
        /// What the last open declared.
        var lastDeclared: StoreSchema?
        /// Write transactions running now.
        var activeWrites = 0
    }

    let fault: Fault
    /// The store every call goes to.
    let inner: any LocalStore
    private let state = Locked(State())

    init(_ fault: Fault, wrapping inner: any LocalStore) {
        self.fault = fault
        self.inner = inner
    }

    /// A store with `fault` over a new store: an `SQLiteStore` at `path` for the bugs that need a
    /// second instance, an ``OfflineSync/InMemoryStore`` otherwise.
    static func make(_ fault: Fault, path: () throws -> String) rethrows -> UnforeseenBrokenStore {
        UnforeseenBrokenStore(
            fault, wrapping: fault.needsASecondInstance ? SQLiteStore(path: try path()) : InMemoryStore())
    }

    var info: StoreInfo { StoreInfo(backend: "unforeseen-\(fault)") }
    var reservedNamePrefixes: [String] { inner.reservedNamePrefixes }
    var schema: StoreSchema { get throws { try inner.schema } }

    var isConfinedToInstance: Bool { fault == .claimsToBeConfinedToItsInstance ? true : inner.isConfinedToInstance }

    func storedSchemaChanged() throws -> Bool {
        if fault == .storedSchemaChangedFailsDuringWrites, state.withLock({ $0.activeWrites > 0 }) {
            throw OfflineSyncError(.storage, "the schema cannot be read while a write transaction runs")
        }
        return try inner.storedSchemaChanged()
    }

    // MARK: Open and close

    func open(schema: StoreSchema) throws {
        if fault == .rejectedReopensKeepTheirOtherAdditions, let stored = state.withLock({ $0.firstStored }) {
            // Applies the declaration table by table: what comes before the retyped column is kept.
            var retyped: (table: String, column: String)?
            var applied: [TableSchema] = []
            for table in schema.tables {
                let old = stored.table(named: table.name)
                if retyped == nil,
                    let column = table.columns.first(where: { column in
                        old?.column(named: column.name).map { $0.type != column.type } ?? false
                    })
                {
                    retyped = (table.name, column.name)
                }
                let kept = table.columns.filter { column in
                    old?.column(named: column.name).map { $0.type == column.type } ?? true
                }
                applied.append(
                    TableSchema(
                        table.name, columns: kept,
                        indexes: table.indexes.filter {
                            $0.columns.allSatisfy { name in kept.contains { $0.name == name } || name == "id" }
                        },
                        synced: table.synced))
            }
            if let retyped {
                try inner.open(schema: StoreSchema(applied))
                try inner.close()
                throw OfflineSyncError(
                    .invalidSchema, "column '\(retyped.column)' of table '\(retyped.table)' cannot change its type")
            }
        }
        try inner.open(schema: schema)
        let stored = try inner.schema
        state.withLock {
            if $0.firstStored == nil { $0.firstStored = stored }
            $0.lastDeclared = schema
        }
    }

    func close() throws { try inner.close() }

    // MARK: Reads

    func read(_ query: Query) throws -> QueryResult {
        try failIfAWideningWasMissed()
        return try bentRead(query, schema: try inner.schema, read: inner.read)
    }

    func lookup(table: String, id: String) throws -> Item? {
        try failIfAWideningWasMissed()
        return try inner.lookup(table: table, id: id).map {
            withoutAddedColumns($0, table: table, schema: try? inner.schema)
        }
    }

    private func failIfAWideningWasMissed() throws {
        if fault == .readsFailOnAnInstanceThatMissedAWidening, try inner.storedSchemaChanged() {
            throw OfflineSyncError(.storage, "the stored schema changed; close and reopen the store")
        }
    }

    /// The columns of `table` that a reopen added after the first open (`schema` is the stored
    /// one, read before any transaction: the store is not called from inside its own `write`).
    private func addedColumns(of table: String, schema: StoreSchema?) -> Set<String> {
        guard let first = state.withLock({ $0.firstStored }), let now = schema?.table(named: table) else {
            return []
        }
        let before = first.table(named: table)
        return Set(now.columns.map(\.name).filter { before?.column(named: $0) == nil && before != nil })
    }

    private func withoutAddedColumns(_ item: Item, table: String, schema: StoreSchema?) -> Item {
        guard fault == .lookupsDropColumnsAddedOnReopen else { return item }
        var item = item
        for column in addedColumns(of: table, schema: schema) { item.values[column] = nil }
        return item
    }

    /// Answers `query` through `read`, bent the way this store's fault says.
    fileprivate func bentRead(_ query: Query, schema: StoreSchema, read: (Query) throws -> QueryResult) throws
        -> QueryResult
    {
        var query = query
        guard let table = schema.table(named: query.table) else { return try read(query) }
        try query.validate(against: table)
        switch fault {
        case .indexedEqualityComparesTheFirst64KiB:
            let indexed = Set(table.indexes.compactMap(\.columns.first))
            query.filter = query.filter.map {
                Self.transform($0) { node in
                    guard case .comparison(.column(let column), .eq, .literal(.string(let text))) = node,
                        indexed.contains(column), text.utf8.count > 65_535
                    else { return nil }
                    return .function(.startsWith, [.column(column), .literal(.string(Self.cut(text)))])
                }
            }
        case .longInListsNeverMatchNull:
            query.filter = query.filter.map {
                Self.transform($0) { node in
                    guard case .isIn(let operand, let values) = node, values.count > 64 else { return nil }
                    return .isIn(operand, values.filter { !$0.isNull })
                }
            }
        case .longInListsTakeTheirFirstValuesType:
            query.filter = query.filter.map {
                Self.transform($0) { node in
                    guard case .isIn(let operand, let values) = node, values.count > 100, case .int = values.first
                    else { return nil }
                    return .isIn(
                        operand,
                        values.map { value in
                            if case .double(let number) = value, number.isFinite, abs(number) < 9e18 {
                                return .int(Int64(number.rounded(.towardZero)))
                            }
                            return value
                        })
                }
            }
        case .orderingsIgnoreColumnsAddedOnReopen:
            let added = addedColumns(of: table.name, schema: schema)
            query.orderBy.removeAll { added.contains($0.column) }
        case .filtersReadColumnsAddedOnReopenAsNull:
            let added = addedColumns(of: table.name, schema: schema)
            guard let filter = query.filter, !added.isDisjoint(with: Self.columns(of: filter)) else { break }
            let evaluator = try QueryEvaluator(query: query, schema: table)
            let rows = try read(Query(table: table.name)).items.filter { row in
                var seen = row
                for column in added { seen.values[column] = nil }
                return evaluator.matches(seen)
            }
            query.filter = nil
            return try QueryEvaluator(query: query, schema: table).run(over: rows)
        case .stringFunctionsCutArgumentsPast64KiB, .mostNegativeIntegerDividedByMinusOneWraps,
            .mostNegativeIntegerModMinusOneIsNull, .divisionByNegativeZeroIsInfinite, .trimKeepsByteOrderMarks:
            guard let filter = query.filter, Self.contains(filter, where: bends) else { break }
            let rows = try read(Query(table: table.name)).items.filter {
                QueryEvaluator.isTrue(value(of: filter, on: $0))
            }
            query.filter = nil
            return try QueryEvaluator(query: query, schema: table).run(over: rows)
        default:
            break
        }
        var result = try read(query)
        if fault == .selectionsReadColumnsAddedOnReopenAsNull, let selection = query.selection {
            let added = addedColumns(of: table.name, schema: schema).intersection(selection)
            if !added.isEmpty {
                result.items = result.items.map { item in
                    var item = item
                    for column in added { item.values[column] = nil }
                    return item
                }
            }
        }
        return result
    }

    // MARK: Bent evaluation

    /// `true` for the nodes whose value this store's fault changes.
    private func bends(_ node: FilterExpression) -> Bool {
        switch (fault, node) {
        case (.stringFunctionsCutArgumentsPast64KiB, .function): return true
        case (.trimKeepsByteOrderMarks, .function(.trim, _)): return true
        case (.mostNegativeIntegerDividedByMinusOneWraps, .arithmetic(_, .div, _)),
            (.mostNegativeIntegerModMinusOneIsNull, .arithmetic(_, .mod, _)),
            (.divisionByNegativeZeroIsInfinite, .arithmetic(_, .div, _)):
            return true
        default: return false
        }
    }

    /// The value of `expression` on `row`: ``QueryEvaluator/evaluate(_:on:)`` with this store's fault.
    private func value(of expression: FilterExpression, on row: Item) -> Value {
        switch expression {
        case .literal(let value): return value
        case .column(let name): return row[name]
        case .not(let operand): return .bool(!QueryEvaluator.isTrue(value(of: operand, on: row)))
        case .and(let lhs, let rhs):
            return .bool(
                QueryEvaluator.isTrue(value(of: lhs, on: row)) && QueryEvaluator.isTrue(value(of: rhs, on: row)))
        case .or(let lhs, let rhs):
            return .bool(
                QueryEvaluator.isTrue(value(of: lhs, on: row)) || QueryEvaluator.isTrue(value(of: rhs, on: row)))
        case .comparison(let lhs, let op, let rhs):
            return .bool(QueryEvaluator.compare(value(of: lhs, on: row), op, value(of: rhs, on: row)))
        case .isIn(let operand, let values):
            let found = value(of: operand, on: row)
            return .bool(values.contains { ValueSemantics.equal(found, $0) })
        case .function(let function, let arguments):
            var values = arguments.map { value(of: $0, on: row) }
            if fault == .stringFunctionsCutArgumentsPast64KiB {
                values = values.map { value in
                    if case .string(let text) = value { return .string(Self.cut(text)) }
                    return value
                }
            }
            if fault == .trimKeepsByteOrderMarks, function == .trim, case .string(let text) = values[0] {
                let blank = QueryEvaluator.whiteSpace.subtracting(["\u{FEFF}"])
                let scalars = text.unicodeScalars
                guard let first = scalars.firstIndex(where: { !blank.contains($0) }),
                    let last = scalars.lastIndex(where: { !blank.contains($0) })
                else { return .string("") }
                return .string(String(scalars[first...last]))
            }
            return QueryEvaluator.apply(function, values)
        case .arithmetic(let lhs, let op, let rhs):
            return arithmetic(value(of: lhs, on: row), op, value(of: rhs, on: row))
        case .negate(let operand):
            return arithmetic(.int(0), .sub, value(of: operand, on: row))
        }
    }

    private func arithmetic(_ lhs: Value, _ op: ArithmeticOperator, _ rhs: Value) -> Value {
        switch (fault, lhs, op, rhs) {
        case (.mostNegativeIntegerDividedByMinusOneWraps, .int(.min), .div, .int(-1)): return .int(.min)
        case (.mostNegativeIntegerModMinusOneIsNull, .int(.min), .mod, .int(-1)): return .null
        case (.divisionByNegativeZeroIsInfinite, _, .div, .double(let zero)) where zero == 0 && zero.sign == .minus:
            guard let numerator = lhs.doubleValue else { return .null }
            let result = numerator / zero
            return result.isNaN ? .null : .double(result)
        default: return ValueSemantics.arithmetic(lhs, op, rhs)
        }
    }

    // MARK: Writes

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        state.withLock { $0.activeWrites += 1 }
        defer { state.withLock { $0.activeWrites -= 1 } }
        var rolledBack: Result?
        let schema = try inner.schema
        do {
            return try inner.write { inner in
                let transaction = Transaction(store: self, inner: inner, schema: schema)
                let result = try body(transaction)
                if transaction.caughtErrorRollsBack {
                    rolledBack = result
                    throw SilentRollback()
                }
                return result
            }
        } catch is SilentRollback {
            guard let rolledBack else { throw OfflineSyncError(.storage, "the transaction was rolled back") }
            return rolledBack
        }
    }

    /// Rolls back a transaction whose body returned.
    private struct SilentRollback: Error {}

    /// Throws `unknownTable` for a write to a table the last open left out
    /// (``Fault/tablesLeftOutOfAReopenRefuseWrites``).
    fileprivate func requireDeclaredForWrites(_ table: String) throws {
        guard fault == .tablesLeftOutOfAReopenRefuseWrites, let declared = state.withLock({ $0.lastDeclared }),
            declared.table(named: table) == nil
        else { return }
        throw OfflineSyncError(.unknownTable, "table '\(table)' was not declared by the last open")
    }

    /// `items` as this store writes them into `table` of `schema`.
    fileprivate func stored(_ items: [Item], into table: String, schema: StoreSchema) -> [Item] {
        guard fault == .storesNumericLookingStringsAsNumbers, let schema = schema.table(named: table) else {
            return items
        }
        let strings = Set(schema.columns.filter { $0.type == .string }.map(\.name))
        return items.map { item in
            var item = item
            for (column, value) in item.values where strings.contains(column) {
                guard case .string(let text) = value else { continue }
                if let integer = Int64(text) {
                    item.values[column] = .string(String(integer))
                } else if let number = Double(text), number.isFinite {
                    item.values[column] = .string(String(number))
                }
            }
            return item
        }
    }

    /// The transaction handed to `write`'s body: the wrapped store's, bent by the fault.
    private final class Transaction: StoreTransaction {
        let store: UnforeseenBrokenStore
        let inner: any StoreTransaction
        /// The stored schema when the transaction began.
        let schema: StoreSchema
        /// Per table, the distinct ids this transaction upserted, in order.
        var pending: [String: (ids: [String], known: Set<String>)] = [:]
        /// Per table, the rows `delete(matching:)` deleted, by id.
        var deletedByQuery: [String: [String: Item]] = [:]
        /// Per table, the ids `insertNew` inserted.
        var insertedNew: [String: Set<String>] = [:]
        /// Set when an error of the kind this store's fault rolls back was thrown.
        var caughtErrorRollsBack = false

        init(store: UnforeseenBrokenStore, inner: any StoreTransaction, schema: StoreSchema) {
            self.store = store
            self.inner = inner
            self.schema = schema
        }

        private var fault: Fault { store.fault }

        /// The ids upserted past the first 1,000 in `table`.
        private func overflow(_ table: String) -> Set<String> {
            guard let ids = pending[table]?.ids, ids.count > 1_000 else { return [] }
            return Set(ids.dropFirst(1_000))
        }

        func read(_ query: Query) throws -> QueryResult {
            var result = try store.bentRead(query, schema: schema, read: inner.read)
            if fault == .transactionReadsSeeOnlyTheFirst1000PendingRows {
                let hidden = overflow(query.table)
                if !hidden.isEmpty { result.items.removeAll { hidden.contains($0.id) } }
            }
            if fault == .filteredTransactionReadsMissInsertNewRows, query.filter != nil,
                let inserted = insertedNew[query.table]
            {
                result.items.removeAll { inserted.contains($0.id) }
            }
            return result
        }

        func lookup(table: String, id: String) throws -> Item? {
            do {
                if fault == .transactionLookupsSeeOnlyTheFirst1000PendingRows, overflow(table).contains(id) {
                    return nil
                }
                if fault == .transactionLookupsSeeRowsDeletedByQuery, let row = deletedByQuery[table]?[id] {
                    return row
                }
                return try inner.lookup(table: table, id: id).map {
                    store.withoutAddedColumns($0, table: table, schema: schema)
                }
            } catch {
                if fault == .caughtLookupErrorsRollBack { caughtErrorRollsBack = true }
                throw error
            }
        }

        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            try store.requireDeclaredForWrites(table)
            try inner.upsert(store.stored(items, into: table, schema: schema), into: table, origin: origin)
            var entry = pending[table] ?? ([], [])
            for item in items where entry.known.insert(item.id).inserted { entry.ids.append(item.id) }
            pending[table] = entry
        }

        func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
            do {
                try store.requireDeclaredForWrites(table)
                if fault == .insertNewSeesRowsDeletedByQuery, let deleted = deletedByQuery[table] {
                    var present: [String] = []
                    var absent: [Item] = []
                    for item in items {
                        if deleted[item.id] != nil { present.append(item.id) } else { absent.append(item) }
                    }
                    let alsoPresent = try inner.insertNew(absent, into: table, origin: origin)
                    return items.map(\.id).filter { present.contains($0) || alsoPresent.contains($0) }
                }
                let present = try inner.insertNew(
                    store.stored(items, into: table, schema: schema), into: table, origin: origin)
                let presentIds = Set(present)
                insertedNew[table, default: []].formUnion(items.map(\.id).filter { !presentIds.contains($0) })
                return present
            } catch {
                if fault == .caughtInsertNewErrorsRollBack { caughtErrorRollsBack = true }
                throw error
            }
        }

        func delete(ids: [String], from table: String) throws {
            try store.requireDeclaredForWrites(table)
            try inner.delete(ids: ids, from: table)
        }

        func delete(matching query: Query) throws -> Int {
            do {
                try store.requireDeclaredForWrites(query.table)
                if fault == .transactionLookupsSeeRowsDeletedByQuery || fault == .insertNewSeesRowsDeletedByQuery {
                    var whole = query
                    whole.selection = nil
                    whole.includeTotalCount = false
                    for row in try inner.read(whole).items { deletedByQuery[query.table, default: [:]][row.id] = row }
                }
                return try inner.delete(matching: query)
            } catch {
                if fault == .caughtDeleteByQueryErrorsRollBack { caughtErrorRollsBack = true }
                throw error
            }
        }
    }

    // MARK: Expressions

    /// `text` cut to at most 65,535 UTF-8 bytes, at a scalar boundary.
    static func cut(_ text: String) -> String {
        guard text.utf8.count > 65_535 else { return text }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += String(scalar).utf8.count
            if bytes > 65_535 { break }
            kept.append(scalar)
        }
        return String(kept)
    }

    /// `expression` rebuilt top-down, each node replaced by what `replace` answers (or kept on `nil`).
    static func transform(_ expression: FilterExpression, _ replace: (FilterExpression) -> FilterExpression?)
        -> FilterExpression
    {
        if let replaced = replace(expression) { return replaced }
        func again(_ node: FilterExpression) -> FilterExpression { transform(node, replace) }
        switch expression {
        case .literal, .column: return expression
        case .not(let operand): return .not(again(operand))
        case .and(let lhs, let rhs): return .and(again(lhs), again(rhs))
        case .or(let lhs, let rhs): return .or(again(lhs), again(rhs))
        case .comparison(let lhs, let op, let rhs): return .comparison(again(lhs), op, again(rhs))
        case .isIn(let operand, let values): return .isIn(again(operand), values)
        case .function(let function, let arguments): return .function(function, arguments.map(again))
        case .arithmetic(let lhs, let op, let rhs): return .arithmetic(again(lhs), op, again(rhs))
        case .negate(let operand): return .negate(again(operand))
        }
    }

    /// `true` when a node of `expression` satisfies `test`.
    static func contains(_ expression: FilterExpression, where test: (FilterExpression) -> Bool) -> Bool {
        if test(expression) { return true }
        switch expression {
        case .literal, .column: return false
        case .not(let operand), .negate(let operand), .isIn(let operand, _): return contains(operand, where: test)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs),
            .arithmetic(let lhs, _, let rhs):
            return contains(lhs, where: test) || contains(rhs, where: test)
        case .function(_, let arguments): return arguments.contains { contains($0, where: test) }
        }
    }

    /// The columns `expression` reads.
    static func columns(of expression: FilterExpression) -> Set<String> {
        var names: Set<String> = []
        _ = contains(expression) { node in
            if case .column(let name) = node { names.insert(name) }
            return false
        }
        return names
    }
}
