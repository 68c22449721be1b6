import Synchronization

/// What OfflineSync knows about one ``SyncModel`` type, learnt once from probe instances (see
/// ``ProbeState``) and shared by every table of that type: its columns and their types, the
/// system properties it declares, and which column each key path reads.
final class ModelLayout<Model: SyncModel>: Sendable {
    /// The model's columns (not `id`), in the order the model decodes them, system properties
    /// included, with their derived or declared types.
    let columns: [Column]
    /// The names of ``columns``.
    let columnNames: Set<String>
    /// The system properties the model declares; they are read, never written.
    let systemColumns: [String]
    /// Columns whose type was declared by a ``ModelSchemaOption``; their values are converted.
    let declaredTypes: [String: ColumnType]
    /// The declared indexes, with column names.
    let indexes: [TableIndex]
    /// The values that columns without a value read as (see ``ModelSchemaOption/default(_:_:)``),
    /// as stored values of the column's type.
    let defaults: [String: Value]
    private let probes: [Model]
    private let probeRows: [Item]
    private let keyPathColumns = Locked<[ModelKeyPath: String]>([:])
    /// `true` when the model is ``RowWritable`` (its conformance checked against its `Codable` rows).
    let writesRows: Bool
    /// `true` when the model is ``RowReadable`` (its conformance checked against its `Decodable`
    /// reading of the same rows).
    let readsRows: Bool
    /// The plans of a ``RowWritable`` model, by row layout (see ``writingPlan(for:)``).
    private let writingPlans = Locked<[ObjectIdentifier: RowWritingPlan]>([:])

    /// The layout of `Model`, built on first use.
    static func shared() throws -> ModelLayout<Model> {
        let key = ObjectIdentifier(Model.self)
        if let layout = modelLayouts.withLock({ $0[key] }) as? ModelLayout<Model> { return layout }
        let layout = try ModelLayout<Model>()
        modelLayouts.withLock { $0[key] = layout }
        return layout
    }

    private init() throws {
        var nilKeys: Set<String> = []
        var failures: [String: String] = [:]
        var first: (model: Model, state: ProbeState)?
        while first == nil {
            let state = ProbeState(round: 0, nilKeys: nilKeys)
            do {
                first = (try Model(from: ProbeDecoder(state: state)), state)
            } catch {
                guard let key = state.currentKey, !nilKeys.contains(key) else {
                    let reason = RowDecoder.describe(error)
                    throw ModelLayout.schemaError(
                        "cannot derive the columns of \(Model.self): decoding a probe failed at \(reason.hasSuffix(".") ? String(reason.dropLast()) : reason). A property must decode from any value of its stored type: an enum stored in a column must be CaseIterable (an enum with associated values is not), and Foundation's Decimal is not supported (store a Double, or the decimal's text in a String); String, the numbers, Bool, Date, UUID, URL, arrays, dictionaries and nested Codable structs are"
                    )
                }
                nilKeys.insert(key)
                failures[key] = RowDecoder.describe(error)
            }
        }
        let state = first!.state
        let keys = state.ordinals.sorted { $0.value < $1.value }.map(\.key)
        guard state.types["id"] == .string else {
            throw ModelLayout.schemaError("\(Model.self) does not decode a String 'id'; a model's id is its row's id")
        }
        let rounds = max(1, Int.bitWidth - (keys.count + 1).leadingZeroBitCount)
        var probes = [first!.model]
        for round in 1..<rounds {
            do {
                probes.append(try Model(from: ProbeDecoder(state: ProbeState(round: round, nilKeys: nilKeys))))
            } catch {
                throw ModelLayout.schemaError(
                    "cannot derive the columns of \(Model.self): decoding probe \(round) failed at \(RowDecoder.describe(error))"
                )
            }
        }
        let rows: [Item]
        let probeLayout = RowLayout(keys.filter { $0 != "id" })
        do {
            rows = try probes.map { try RowEncoder.item(of: $0, layout: probeLayout) }
        } catch {
            throw ModelLayout.schemaError(
                "cannot derive the columns of \(Model.self): encoding a probe failed at \(RowDecoder.describe(error))")
        }
        let names = keys.filter { $0 != "id" }
        var types = state.types
        var declared: [String: ColumnType] = [:]
        var indexes: [TableIndex] = []
        var defaultOperands: [(String, ModelPredicate<Model>.Operand)] = []
        func column(for keyPath: ModelKeyPath) throws -> String {
            try ModelLayout.identify(keyPath, probes: probes, rows: rows, columns: Set(names), code: .invalidSchema)
        }
        for option in Model.schemaOptions {
            switch option.kind {
            case .columnType(let keyPath, let type):
                let column = try column(for: keyPath)
                types[column] = type
                declared[column] = type
            case .index(let name, let keyPaths):
                indexes.append(TableIndex(name, on: try keyPaths.map(column(for:))))
            case .defaultValue(let keyPath, let operand):
                defaultOperands.append((try column(for: keyPath), operand))
            }
        }
        var defaults: [String: Value] = [:]
        for (column, operand) in defaultOperands {
            guard SystemProperty(rawValue: column) == nil, column != "id" else {
                throw ModelLayout.schemaError(
                    "\(Model.self) declares a default for '\(column)', which the server sets; declare defaults for the model's own properties only"
                )
            }
            guard case .value(let stored) = operand else {
                if case .invalid(let problem) = operand {
                    throw ModelLayout.schemaError(
                        "the default declared for '\(column)' of \(Model.self) cannot be stored: \(problem)")
                }
                continue
            }
            let value = ModelLayout.converted(stored, to: declared[column])
            guard value.isNull || value.type == types[column] else {
                throw ModelLayout.schemaError(
                    "the default declared for '\(column)' of \(Model.self) is stored as \(value.type?.rawValue ?? "null"), but the column holds \(types[column]?.rawValue ?? "no type"); declare a value of the property's type"
                )
            }
            defaults[column] = value
        }
        var columns: [Column] = []
        var systemColumns: [String] = []
        for name in names {
            guard let type = types[name] else {
                throw ModelLayout.schemaError(
                    "cannot derive the type of column '\(name)' of \(Model.self): decoding a probe value failed (\(failures[name] ?? "no value was decoded")); make the property's type CaseIterable, or declare it with .column(_:as:) in schemaOptions"
                )
            }
            if let property = SystemProperty(rawValue: name) {
                guard type == property.type else {
                    throw ModelLayout.schemaError(
                        "\(Model.self).\(name) is the system property '\(name)', stored as \(property.type.rawValue), but the model decodes it as \(type.rawValue); declare it as \(property == .version ? "String?" : property == .deleted ? "Bool?" : "Date? or Timestamp?")"
                    )
                }
                systemColumns.append(name)
            }
            columns.append(Column(name, type))
        }
        self.probes = probes
        self.probeRows = rows
        writesRows = try ModelLayout.checkRowWriting(probes: probes, rows: rows, layout: probeLayout)
        readsRows = try ModelLayout.checkRowReading(rows: rows, layout: probeLayout)
        self.columnNames = Set(names)
        self.columns = columns
        self.systemColumns = systemColumns
        self.declaredTypes = declared
        self.indexes = indexes
        self.defaults = defaults
    }

    static func schemaError(_ message: String) -> OfflineSyncError {
        OfflineSyncError(.invalidSchema, message)
    }

    /// The schema of a table of this model.
    func schema(name: String) throws -> TableSchema {
        let schema = TableSchema(
            name, columns: columns.filter { SystemProperty(rawValue: $0.name) == nil }, indexes: indexes)
        try schema.validate()
        return schema
    }

    /// Checks that the store's declaration of `table` holds every column of the model with the same type.
    func check(against table: TableSchema) throws {
        for column in columns {
            guard let stored = table.column(named: column.name) else {
                throw OfflineSyncError(
                    .unknownColumn,
                    "table '\(table.name)' has no column '\(column.name)', which \(Model.self) stores; declare the table with TableSchema(\(Model.self).self)"
                )
            }
            guard stored.type == column.type else {
                throw OfflineSyncError(
                    .invalidSchema,
                    "table '\(table.name)' stores column '\(column.name)' as \(stored.type.rawValue), but \(Model.self) holds \(column.type.rawValue) there; change the property's type or declare it with .column(_:as:) in schemaOptions"
                )
            }
        }
    }

    /// The column a key path reads: the one column whose probe values equal the key path's
    /// values in every probe.
    func column(for keyPath: ModelKeyPath) throws -> String {
        if let column = keyPathColumns.withLock({ $0[keyPath] }) { return column }
        let column = try ModelLayout.identify(
            keyPath, probes: probes, rows: probeRows, columns: columnNames, code: .invalidQuery)
        keyPathColumns.withLock { $0[keyPath] = column }
        return column
    }

    private static func identify(
        _ keyPath: ModelKeyPath, probes: [Model], rows: [Item], columns: Set<String>, code: OfflineSyncError.Code
    ) throws -> String {
        var candidates = columns.union(["id"])
        for (probe, row) in zip(probes, rows) {
            guard let raw = probe[keyPath: keyPath.keyPath], let encodable = raw as? any Encodable else {
                throw OfflineSyncError(
                    code, "\(keyPath.keyPath) does not read an encodable stored property of \(Model.self)")
            }
            let value: Value
            do {
                value = try RowEncoder.columnValue(encodable, codingPath: [])
            } catch {
                throw OfflineSyncError(code, "\(keyPath.keyPath) reads a value that cannot be stored: \(error)")
            }
            candidates = candidates.filter { row[$0] == value }
        }
        guard candidates.count == 1, let column = candidates.first else {
            if candidates.isEmpty {
                throw OfflineSyncError(
                    code,
                    "\(keyPath.keyPath) does not read a stored column of \(Model.self); use a key path to a stored property the model encodes (not a computed property, a nested member or a property outside CodingKeys)"
                )
            }
            throw OfflineSyncError(
                code,
                "\(keyPath.keyPath) cannot be told apart from columns \(candidates.sorted().map { "'\($0)'" }.joined(separator: ", ")) of \(Model.self) (their probe values are equal, as for nested values decoded empty); query such columns through Query and FilterExpression"
            )
        }
        return column
    }

    /// A value converted to the declared type of its column (see ``ModelSchemaOption/column(_:as:)``).
    func converted(_ value: Value, column: String) -> Value {
        ModelLayout.converted(value, to: declaredTypes[column])
    }

    /// A value converted to a column type declared with ``ModelSchemaOption/column(_:as:)`` (as is
    /// when `type` is `nil`).
    static func converted(_ value: Value, to type: ColumnType?) -> Value {
        guard let type else { return value }
        switch (type, value) {
        case (.date, .string(let text)): return Timestamp(iso8601: text).map(Value.date) ?? value
        case (.date, .int(let milliseconds)): return .date(Timestamp(millisecondsSince1970: milliseconds))
        case (.json, .string(let text)): return .json(text)
        case (.double, .int(let number)): return .double(Double(number))
        default: return value
        }
    }

    /// The row of a model, without its system properties, laid out on `rowLayout` (the table's
    /// ``TableSchema/rowLayout``, so the store writes it by position).
    func item(from model: Model, table: String, layout rowLayout: RowLayout) throws -> Item {
        try items(from: [model], table: table, layout: rowLayout)[0]
    }

    /// The rows of models, as ``item(from:table:layout:)`` makes each, through one encoder. A
    /// plain loop: this generic code usually runs unspecialized (called from another module),
    /// where `map` looks up closure metadata per element.
    func items(from models: [Model], table: String, layout rowLayout: RowLayout) throws -> [Item] {
        if let plan = writingPlan(for: rowLayout) {
            return try models.withUnsafeBufferPointer { models in
                converted(try written(models, plan: plan, table: table))
            }
        }
        let encoder = encoder(for: rowLayout)
        var items: [Item] = []
        items.reserveCapacity(models.count)
        // Through the buffer, which lends each model to the encoder where the array's iterator
        // would copy it out first (retaining every reference it holds).
        try models.withUnsafeBufferPointer { models in
            for index in models.indices {
                items.append(try item(from: models[index], table: table, encoder: encoder))
            }
        }
        return items
    }

    /// Inserts `models` into `table` a chunk of rows at a time through the same few rows (see
    /// ``SyncTable/insertNew(count:fill:)``), each row written by the model (``RowWritable``)
    /// or encoded (`Codable`) into the storage of the previous chunk's row; `false`, having
    /// written nothing, when one of them has an empty id (made up by the general path), or a
    /// ``RowWritable`` model failed to write a row (the general path reports the failure).
    func insertEncoded(_ models: [Model], into table: SyncTable, layout rowLayout: RowLayout) throws -> Bool {
        if writingPlan(for: rowLayout) != nil { return try insertWritten(models, into: table, layout: rowLayout) }
        let encoder = encoder(for: rowLayout)
        return try models.withUnsafeBufferPointer { models in
            try insertInChunks(count: models.count, into: table) { row, position in
                try refill(&row, with: models[position], table: table.name, encoder: encoder)
            }
        }
    }

    /// Inserts `count` rows into `table` a chunk at a time through the same few rows, each
    /// rewritten by `write` (given the row and the position of its model); `false`, having
    /// written nothing, when a row has an empty id or `write` throws ``RowWritingFailed``.
    private func insertInChunks(
        count: Int, into table: SyncTable, write: (_ row: inout Item, _ position: Int) throws -> Void
    ) throws -> Bool {
        do {
            try table.insertNew(count: count) { positions, rows in
                if rows.count > positions.count { rows.removeLast(rows.count - positions.count) }
                for (offset, position) in positions.enumerated() {
                    if offset == rows.count { rows.append(Item(id: "")) }
                    try write(&rows[offset], position)
                    // An empty id is made up by the general path.
                    if rows[offset].id.isEmpty { throw RowWritingFailed() }
                }
            }
            return true
        } catch is RowWritingFailed {
            return false
        }
    }

    /// Inserts `models` into `table` through their ``RowWritable`` conformance, a chunk of rows at
    /// a time through the same few rows (see ``SyncTable/insertNew(count:fill:)``); `false`, having
    /// written nothing, when the model does not write its rows, one of them has an empty id, or
    /// writing a row failed (the caller then inserts the general way, which reports the failure).
    func insertWritten(_ models: [Model], into table: SyncTable, layout rowLayout: RowLayout) throws -> Bool {
        guard let plan = writingPlan(for: rowLayout), let writable = Model.self as? any RowWritable.Type else {
            return false
        }
        func insert<Writable: RowWritable>(_ type: Writable.Type) throws -> Bool {
            try models.withUnsafeBufferPointer { models in
                try models.withMemoryRebound(to: Writable.self) { models in
                    try insertInChunks(count: models.count, into: table) { row, position in
                        do {
                            try plan.refill(&row, with: models[position])
                        } catch {
                            throw RowWritingFailed()
                        }
                        convertDeclared(&row)
                    }
                }
            }
        }
        return try insert(writable)
    }

    /// The plan that writes this ``RowWritable`` model's rows on `rowLayout`; `nil` when the model
    /// is not ``RowWritable`` or writes a key that is not a column there (it is encoded then).
    private func writingPlan(for rowLayout: RowLayout) -> RowWritingPlan? {
        guard writesRows, let writable = Model.self as? any RowWritable.Type else { return nil }
        // Each plan holds its layout, so no other layout can be allocated at a cached key.
        let key = ObjectIdentifier(rowLayout)
        if let plan = writingPlans.withLock({ $0[key] }), plan.layout === rowLayout { return plan }
        guard let plan = RowWritingPlan(keys: writable.rowKeys, layout: rowLayout, skipping: systemColumns) else {
            return nil
        }
        writingPlans.withLock { plans in
            // Tables reopened many times leave layouts no table uses any more: forget them.
            if plans.count >= 16 { plans.removeAll() }
            plans[key] = plan
        }
        return plan
    }

    /// The rows of `models` written by their ``RowWritable`` conformance along `plan`.
    private func written(_ models: UnsafeBufferPointer<Model>, plan: RowWritingPlan, table: String) throws -> [Item] {
        func write<Writable: RowWritable>(_ type: Writable.Type) throws -> [Item] {
            try models.withMemoryRebound(to: Writable.self) { try plan.items(of: $0) }
        }
        do {
            guard let writable = Model.self as? any RowWritable.Type else { return [] }
            return try write(writable)
        } catch let error as OfflineSyncError where error.code == .invalidSchema {
            throw error
        } catch {
            // Which model failed is found again the slow way, for the message.
            for index in models.indices {
                _ = try item(from: models[index], table: table, encoder: encoder(for: plan.layout))
            }
            throw OfflineSyncError(.invalidValue, "cannot write \(Model.self) to table '\(table)': \(RowDecoder.describe(error))")
        }
    }

    /// `rows` with the values of columns whose type the model declares converted to it.
    private func converted(_ rows: [Item]) -> [Item] {
        guard !declaredTypes.isEmpty else { return rows }
        var rows = rows
        for index in rows.indices { convertDeclared(&rows[index]) }
        return rows
    }

    /// Converts the values of `item`'s columns whose type the model declares.
    private func convertDeclared(_ item: inout Item) {
        for column in declaredTypes.keys where item.hasValue(forColumn: column) {
            item[column] = converted(item[column], column: column)
        }
    }

    /// Whether the model writes its own rows (``RowWritable``): checked by writing every probe
    /// and comparing the row with the one its `Codable` encoding gave. Throws when they differ.
    private static func checkRowWriting(probes: [Model], rows: [Item], layout: RowLayout) throws -> Bool {
        guard let writable = Model.self as? any RowWritable.Type else { return false }
        let keys = writable.rowKeys
        guard let plan = RowWritingPlan(keys: keys, layout: layout, skipping: []) else {
            let encoded = Set(layout.names + ["id"])
            let extra = keys.filter { !encoded.contains($0) }
            throw schemaError(
                "\(Model.self).rowKeys (\(keys.joined(separator: ", "))) \(extra.isEmpty ? "repeats a key" : "has \(extra.map { "'\($0)'" }.joined(separator: ", ")), which its Codable encoding does not write"); the RowWritable conformance must write exactly the keys encode(to:) writes (a model with a custom encode(to:) is better left to Codable)"
            )
        }
        let written: [Item]
        do {
            func write<Writable: RowWritable>(_ type: Writable.Type) throws -> [Item] {
                try probes.withUnsafeBufferPointer { probes in
                    try probes.withMemoryRebound(to: Writable.self) { try plan.items(of: $0) }
                }
            }
            written = try write(writable)
        } catch {
            throw schemaError("\(Model.self).writeRow(to:) failed on a probe value: \(RowDecoder.describe(error))")
        }
        for (row, encoded) in zip(written, rows) where row != encoded || row.id != encoded.id {
            let differing =
                row.id != encoded.id
                ? "id" : (layout.names.first { row[$0] != encoded[$0] } ?? "?")
            throw schemaError(
                "\(Model.self).writeRow(to:) writes \(differing == "id" ? "'\(row.id)'" : "\(row[differing])") under '\(differing)' where its Codable encoding writes \(differing == "id" ? "'\(encoded.id)'" : "\(encoded[differing])"); the RowWritable conformance must write what encode(to:) writes (a renamed property is written under its CodingKeys name; a model with a custom encode(to:) is better left to Codable)"
            )
        }
        return true
    }

    /// An encoder of this model's rows on `rowLayout`, leaving the system properties out.
    private func encoder(for rowLayout: RowLayout) -> RowEncoder {
        RowEncoder(layout: rowLayout, skipping: systemColumns)
    }

    private func item(from model: Model, table: String, encoder: RowEncoder) throws -> Item {
        var item = Item(id: "")
        try refill(&item, with: model, table: table, encoder: encoder)
        return item
    }

    /// Rewrites `item` into the row of `model` (see ``RowEncoder/refill(_:of:)``).
    private func refill(_ item: inout Item, with model: Model, table: String, encoder: RowEncoder) throws {
        do {
            // The encoder drops the system properties (an insert or update never writes them).
            try encoder.refill(&item, of: model)
        } catch {
            throw OfflineSyncError(
                .invalidValue,
                "cannot write \(Model.self) '\(model.id)' to table '\(table)': \(RowDecoder.describe(error))")
        }
        // By column, not through `values`: reading or setting the dictionary view rebuilds it (a
        // dictionary of every column per call).
        convertDeclared(&item)
    }

    /// The model of a row (read with ``RowReadable/init(row:)`` when the model conforms, else
    /// decoded); a row that cannot be read throws ``OfflineSyncError/Code-swift.struct/invalidValue``
    /// naming the item and the column.
    func model(from item: Item, table: String) throws -> Model {
        try models(from: [item], table: table, policy: .fail)[0]
    }

    /// The models of rows, in order. A row that cannot be read throws
    /// ``OfflineSyncError/Code-swift.struct/invalidValue`` naming the item and the column
    /// (``UndecodableRowPolicy/fail``), or is left out and reported (``UndecodableRowPolicy/skip(reporting:)``).
    func models(from items: [Item], table: String, policy: UndecodableRowPolicy) throws -> [Model] {
        if readsRows, let readable = Model.self as? any RowReadable.Type {
            // The loop is the model's `_models`, compiled for its type in its module: here, generic
            // over `Model`, each model would be copied through its type's value witnesses.
            func read<Readable: RowReadable>(_ type: Readable.Type) throws -> [Model] {
                guard !items.isEmpty else { return [] }
                var batch = _RowBatch(items: items, keys: Readable.rowKeys, defaults: defaults) { id, error in
                    try self.undecodable(id, error, table: table, policy: policy)
                }
                // `Readable` is `Model` (opened from `Model.self`): the same array type.
                return unsafeBitCast(try Readable._models(&batch), to: [Model].self)
            }
            return try read(readable)
        }
        var models: [Model] = []
        models.reserveCapacity(items.count)
        for index in items.indices {
            do {
                models.append(try Model(from: RowDecoder(item: items[index], defaults: defaults)))
            } catch {
                try undecodable(items[index].id, error, table: table, policy: policy)
            }
        }
        return models
    }

    /// Throws or reports a row that could not be read, by `policy`.
    private func undecodable(_ id: String, _ error: any Error, table: String, policy: UndecodableRowPolicy) throws {
        let reason = RowDecoder.describe(error)
        switch policy.kind {
        case .fail:
            throw OfflineSyncError(
                .invalidValue, "item '\(id)' of table '\(table)' cannot be read as \(Model.self): \(reason)")
        case .skip(let report):
            report(UndecodableRow(table: table, id: id, reason: reason))
        }
    }

    /// Whether the model reads its own rows (``RowReadable``): checked by reading the rows of
    /// every probe both ways and comparing the `Codable` rows of the two models. Throws when
    /// they differ.
    private static func checkRowReading(rows: [Item], layout: RowLayout) throws -> Bool {
        guard let readable = Model.self as? any RowReadable.Type else { return false }
        let keys = readable.rowKeys
        let encoded = Set(layout.names + ["id"])
        let extra = keys.filter { !encoded.contains($0) }
        guard extra.isEmpty, Set(keys).count == keys.count else {
            throw schemaError(
                "\(Model.self).rowKeys (\(keys.joined(separator: ", "))) \(extra.isEmpty ? "repeats a key" : "has \(extra.map { "'\($0)'" }.joined(separator: ", ")), which its Codable form does not hold"); the RowReadable conformance must read exactly the keys init(from:) reads (a model with a custom init(from:) is better left to Codable)"
            )
        }
        func readBothWays<Readable: RowReadable>(_ type: Readable.Type) throws {
            for row in rows {
                let plan = RowReadingPlan(keys: keys, layout: row.layout, defaults: [:])
                let read: Readable
                do {
                    read = try plan.model(Readable.self, of: row)
                } catch {
                    throw schemaError(
                        "\(Model.self).init(row:) failed on a probe row: \(RowDecoder.describe(error))")
                }
                let decoded = try Readable(from: RowDecoder(item: row))
                let readRow = try RowEncoder.item(of: read, layout: layout)
                let decodedRow = try RowEncoder.item(of: decoded, layout: layout)
                guard readRow != decodedRow || readRow.id != decodedRow.id else { continue }
                let differing =
                    readRow.id != decodedRow.id ? "id" : (layout.names.first { readRow[$0] != decodedRow[$0] } ?? "?")
                throw schemaError(
                    "\(Model.self).init(row:) reads a model whose '\(differing)' is \(differing == "id" ? "'\(readRow.id)'" : "\(readRow[differing])") where init(from:) reads \(differing == "id" ? "'\(decodedRow.id)'" : "\(decodedRow[differing])") from the same row; the RowReadable conformance must read what init(from:) reads (each key of rowKeys into the property its CodingKeys name belongs to, in the order of rowKeys)"
                )
            }
        }
        try readBothWays(readable)
        return true
    }
}

/// A ``RowWritable`` model failed to write its row inside a chunked insert (which is then
/// rolled back and done the general way, to report it).
private struct RowWritingFailed: Error {}

/// The layouts built so far, by model type.
private let modelLayouts = Locked<[ObjectIdentifier: any Sendable]>([:])
