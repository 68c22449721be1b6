package import OfflineSync

/// A store whose `LocalStore` requirements are all answered by the shared SQL engine, so
/// `SQLiteStore` and `SQLCipherStore` differ only in how they build it (which C library, which
/// checks at open) and never repeat the forwarding.
package protocol SQLEngineStore: LocalStore {
    /// The engine that stores the tables.
    var engine: SQLTableStore { get }
}

extension SQLEngineStore {
    public var info: StoreInfo { engine.info }

    /// `sqlite_`: SQLite keeps the names of its internal tables (`sqlite_master`, …) for itself.
    public var reservedNamePrefixes: [String] { SQLTableStore.reservedNamePrefixes }

    public var schema: StoreSchema {
        get throws { try engine.schema }
    }

    public func open(schema: StoreSchema) throws {
        try engine.open(schema: schema)
    }

    public func read(_ query: Query) throws -> QueryResult {
        try engine.read(query)
    }

    public func lookup(table: String, id: String) throws -> Item? {
        try engine.lookup(table: table, id: id)
    }

    public func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try engine.write(body)
    }

    public func close() throws {
        engine.close()
    }

    /// `true` when another connection or process changed the database's schema since this
    /// store opened (SQLite's schema cookie moved); see `LocalStore.storedSchemaChanged()`.
    public func storedSchemaChanged() throws -> Bool {
        try engine.storedSchemaChanged()
    }
}
