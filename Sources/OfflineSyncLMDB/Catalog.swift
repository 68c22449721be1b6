import CLMDB
import Foundation
import OfflineSync
import Synchronization

/// The sub-databases of one declared index and the types of its columns.
struct IndexLayout: Sendable {
    let index: TableIndex
    let dbi: MDB_dbi
    let columns: [(name: String, type: ColumnType)]
    /// For each of ``columns``, its slot in the indexed values of a row (see
    /// ``TableLayout/indexSlots``), or `-1` for `id`.
    let slots: [Int]

    var firstColumn: (name: String, type: ColumnType) { columns[0] }

    init(index: TableIndex, dbi: MDB_dbi, columns: [(name: String, type: ColumnType)], schema: TableSchema) {
        self.index = index
        self.dbi = dbi
        self.columns = columns
        self.slots = columns.map {
            $0.name == "id" ? -1 : TableLayout.indexedColumns(of: schema).firstIndex(of: $0.name) ?? -1
        }
    }

    func key(for item: Item) -> [UInt8] {
        IndexKey.key(for: item, columns: columns)
    }

    /// Writes into `key` (replacing its bytes) the key of the row `id` whose indexed values,
    /// by slot, are `values`.
    func write(_ key: inout [UInt8], id: String, values: [Value]) {
        IndexKey.write(into: &key, id: id, columns: columns) { position in
            let slot = slots[position]
            return slot < 0 ? .string(id) : values[slot]
        }
    }
}

/// Where one table lives: its items sub-database, its indexes, and its column names by ordinal.
final class TableLayout: Sendable {
    let schema: TableSchema
    let items: MDB_dbi
    let indexes: [IndexLayout]
    let columnNames: [String]
    let ordinals: RecordCodec.ColumnOrdinals
    /// For each column ordinal, the slot its value takes among the indexed values of a row, or
    /// `-1` when no index reads the column: upserts and deletes keep just these values of the
    /// old and new row to compute index keys, instead of whole items.
    let indexSlots: [Int]
    /// The number of slots (columns read by at least one index, `id` excluded).
    let indexedColumnCount: Int

    init(schema: TableSchema, items: MDB_dbi, indexes: [IndexLayout]) {
        self.schema = schema
        self.items = items
        self.indexes = indexes
        self.columnNames = schema.columns.map(\.name)
        self.ordinals = RecordCodec.ColumnOrdinals(columnNames)
        let indexed = TableLayout.indexedColumns(of: schema)
        self.indexSlots = columnNames.map { indexed.firstIndex(of: $0) ?? -1 }
        self.indexedColumnCount = indexed.count
    }

    /// The declared columns that some index reads, in column order: slot `n` is the `n`th.
    static func indexedColumns(of schema: TableSchema) -> [String] {
        let read = Set(schema.indexes.flatMap(\.columns))
        return schema.columns.map(\.name).filter(read.contains)
    }

    /// The type of a column, `id` included.
    func type(of column: String) -> ColumnType? {
        column == "id" ? .string : schema.column(named: column)?.type
    }
}

/// The stored schema and the sub-database handles of every table: fixed from ``LMDBStore/open(schema:)``
/// to ``LMDBStore/close()``.
///
/// The layout of the environment (see the module article):
/// - `meta`: `format` → `1`; `schema` → the ``OfflineSync/StoreSchema`` as JSON.
/// - `items:<table>`: id (UTF-8) → record (``RecordCodec``).
/// - `index:<table>:<index>`: ``IndexKey`` → id (UTF-8).
final class Catalog: Sendable {
    let schema: StoreSchema
    private let tables: [String: TableLayout]
    /// The `meta` sub-database.
    private let meta: MDB_dbi
    /// The stored JSON text ``schema`` was read from or written as: another process (or store
    /// instance) that widens the schema stores other text (see ``isCurrent(in:)``).
    private let schemaText: Data

    private init(schema: StoreSchema, tables: [String: TableLayout], meta: MDB_dbi, schemaText: Data) {
        self.schema = schema
        self.tables = tables
        self.meta = meta
        self.schemaText = schemaText
    }

    /// `true` when the environment still stores the schema this catalog was built from, in the
    /// snapshot of `context`: `false` once another process or store instance declared or widened
    /// a table. One `mdb_get` of a small sub-database and a comparison of the text.
    func isCurrent(in context: TransactionContext) throws -> Bool {
        let stored = try Catalog.schemaKey.withUnsafeBytes { try context.get(meta, $0) }
        guard let stored else { return false }
        return schemaText.withUnsafeBytes { $0.elementsEqual(stored) }
    }

    /// This catalog when it is current in `context` (see ``isCurrent(in:)``), otherwise the
    /// catalog of the stored schema, read in `context` (whose commit keeps the handles of the
    /// sub-databases it opens).
    func current(in context: TransactionContext) throws -> Catalog {
        guard try !isCurrent(in: context) else { return self }
        return try Catalog.existing(declaring: StoreSchema([]), in: context) ?? self
    }

    /// The layout of a declared table, or the core's error for an undeclared one.
    func table(_ name: String) throws -> TableLayout {
        if let layout = tables[name] { return layout }
        _ = try schema.requireTable(name)
        throw OfflineSyncError(
            .unknownTable, "table '\(name)' is not declared; declare it in the schema before opening the store")
    }

    static let metaDatabase = "meta"
    private static let formatKey = Array("format".utf8)
    private static let schemaKey = Array("schema".utf8)
    private static let format = Array("1".utf8)

    /// Reads the stored schema, widens it with `declared`, creates the sub-databases of new tables
    /// and indexes (filling new indexes from the existing rows) and stores the widened schema.
    /// Runs inside one write transaction.
    static func declare(_ declared: StoreSchema, in context: TransactionContext) throws -> Catalog {
        let meta = try context.openDatabase(metaDatabase)
        let storedRecord = try storedSchema(meta: meta, in: context)
        let stored = storedRecord?.schema
        let merged = try (stored ?? StoreSchema([])).merged(with: declared)
        try merged.validate()
        var tables: [String: TableLayout] = [:]
        for table in merged.tables {
            let items = try context.openDatabase("items:\(table.name)")
            var indexes: [IndexLayout] = []
            for index in table.indexes {
                let isNew = stored?.table(named: table.name)?.indexes.contains { $0.name == index.name } != true
                let dbi = try context.openDatabase("index:\(table.name):\(index.name)")
                let columns = index.columns.map { name in
                    (name: name, type: name == "id" ? ColumnType.string : table.column(named: name)?.type ?? .string)
                }
                let layout = IndexLayout(index: index, dbi: dbi, columns: columns, schema: table)
                indexes.append(layout)
                if isNew {
                    try fill(
                        layout, from: items, rowLayout: table.rowLayout, table: table.name, in: context)
                }
            }
            tables[table.name] = TableLayout(schema: table, items: items, indexes: indexes)
        }
        var text = storedRecord?.text ?? Data()
        if stored != merged {
            text = try JSONEncoder().encode(merged)
            try schemaKey.withUnsafeBytes { key in
                try text.withUnsafeBytes { try context.put(meta, key, $0) }
            }
            try formatKey.withUnsafeBytes { key in
                try format.withUnsafeBytes { try context.put(meta, key, $0) }
            }
        }
        return Catalog(schema: merged, tables: tables, meta: meta, schemaText: text)
    }

    /// The catalog of an environment that already holds everything `declared` names (tables,
    /// columns, indexes and their sub-databases), read in a read-only transaction, which the
    /// caller commits so the sub-database handles stay open; `nil` when the declaration adds
    /// something, which ``declare(_:in:)`` then writes. Throws what `declare` throws for a
    /// declaration that conflicts with the stored schema.
    static func existing(declaring declared: StoreSchema, in context: TransactionContext) throws -> Catalog? {
        guard let meta = try context.openExistingDatabase(metaDatabase),
            let (stored, text) = try storedSchema(meta: meta, in: context)
        else { return nil }
        guard try stored.merged(with: declared) == stored else { return nil }
        var tables: [String: TableLayout] = [:]
        for table in stored.tables {
            guard let items = try context.openExistingDatabase("items:\(table.name)") else { return nil }
            var indexes: [IndexLayout] = []
            for index in table.indexes {
                guard let dbi = try context.openExistingDatabase("index:\(table.name):\(index.name)") else {
                    return nil
                }
                let columns = index.columns.map { name in
                    (name: name, type: name == "id" ? ColumnType.string : table.column(named: name)?.type ?? .string)
                }
                indexes.append(IndexLayout(index: index, dbi: dbi, columns: columns, schema: table))
            }
            tables[table.name] = TableLayout(schema: table, items: items, indexes: indexes)
        }
        return Catalog(schema: stored, tables: tables, meta: meta, schemaText: text)
    }

    /// Schemas decoded from their stored JSON, by its bytes: reopening a store decodes its
    /// schema once per process, not at every open.
    private static let decodedSchemas = Locked<[Data: StoreSchema]>([:])

    /// The stored schema and its JSON text, or `nil` in a new environment.
    private static func storedSchema(meta: MDB_dbi, in context: TransactionContext) throws -> (
        schema: StoreSchema, text: Data
    )? {
        let version = try formatKey.withUnsafeBytes { try context.get(meta, $0).map { Array($0) } }
        guard let version else { return nil }
        guard version == format else {
            throw LMDBError(
                .notAnEnvironment, code: 0,
                reason:
                    "the store format is '\(String.quotedForError(version))', this version reads format 1",
                operation: "reading the stored schema", path: context.path,
                advice: "open it with the OfflineSync version that wrote it")
        }
        guard let text = try schemaKey.withUnsafeBytes({ try context.get(meta, $0).map { Data($0) } }) else {
            return nil
        }
        if let known = decodedSchemas.withLock({ $0[text] }) { return (known, text) }
        do {
            let schema = try JSONDecoder().decode(StoreSchema.self, from: text)
            decodedSchemas.withLock { known in
                if known.count >= 16 { known.removeAll() }
                known[text] = schema
            }
            return (schema, text)
        } catch {
            throw LMDBError(
                .corruptRecord, code: 0, reason: "the stored schema cannot be decoded (\(error))",
                operation: "reading the stored schema", path: context.path,
                advice:
                    "the environment was written by another program or is damaged; restore the directory from a backup, or delete it and pull the data again"
            )
        }
    }

    /// Writes the keys of every existing row into a newly declared index.
    private static func fill(
        _ index: IndexLayout, from items: MDB_dbi, rowLayout: RowLayout, table: String,
        in context: TransactionContext
    ) throws {
        try context.empty(index.dbi)
        var rows: [Item] = []
        try context.walk(items, .all, descending: false) { key, value, _ in
            let id = String(decoding: key, as: UTF8.self)
            guard let item = RecordCodec.decode(value, id: id, layout: rowLayout) else {
                throw LMDBError.corrupt(
                    "the record of id '\(String.quotedForError(key))' is malformed", table: table, path: context.path)
            }
            rows.append(item)
            return true
        }
        for item in rows {
            let key = index.key(for: item)
            try key.withUnsafeBytes { key in
                try Array(item.id.utf8).withUnsafeBytes { try context.put(index.dbi, key, $0) }
            }
        }
    }
}
