package import OfflineSync

/// A store that passes every call to ``inner``: a test's wrapper around a real store declares only
/// the calls it changes (a write that fails, a read that counts) and forwards the rest.
package protocol ForwardingStore: LocalStore {
    /// The store every call goes to.
    var inner: any LocalStore { get }
}

extension ForwardingStore {
    package var info: StoreInfo { inner.info }
    package var schema: StoreSchema { get throws { try inner.schema } }
    package func open(schema: StoreSchema) throws { try inner.open(schema: schema) }
    package func read(_ query: Query) throws -> QueryResult { try inner.read(query) }
    package func lookup(table: String, id: String) throws -> Item? { try inner.lookup(table: table, id: id) }
    package func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try inner.write(body)
    }
    package func close() throws { try inner.close() }
}
