/// The text form of an item kept inside the system tables (a deleted item in the queue, the local
/// and server copies in an operation error): the table protocol's JSON (``JSONCodec``).
///
/// JSON does not tell a date from a string or an integral double from an integer, so reading
/// passes the item through its table's ``TableSchema/normalize(_:origin:)``, which restores the
/// declared types exactly (and drops columns the table does not declare).
enum ItemJSON {
    static func encode(_ item: Item) throws -> Value {
        .json(String(decoding: try JSONCodec.encode(item), as: UTF8.self))
    }

    static func decode(_ value: Value, table: String, schema: StoreSchema) throws -> Item? {
        guard case .json(let text) = value else { return nil }
        let item = try JSONCodec.decodeItem(Array(text.utf8))
        return try schema.table(named: table)?.normalize(item, origin: .server) ?? item
    }
}
