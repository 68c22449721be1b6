/// Reads and writes items as UTF-8 JSON, the body format of the table protocol, in one pass over
/// the bytes (no `JSONSerialization`, no intermediate tree).
///
/// Reading:
/// - A number without fraction or exponent that fits `Int64` becomes ``Value/int(_:)``; any other
///   number becomes the correctly rounded ``Value/double(_:)`` (a number beyond the range of a
///   double is an error).
/// - Strings stay ``Value/string(_:)``, except an item's `createdAt` and `updatedAt`, which become
///   ``Value/date(_:)`` when they read as ISO 8601 (see ``Timestamp/init(iso8601:)``).
/// - Arrays and objects inside an item become ``Value/json(_:)`` holding their compact text: no
///   whitespace outside strings, strings escaped as the writer escapes them, numbers as written.
/// - An item is an object with a string `id`; a member name may appear only once; `null` members
///   are kept as ``Value/null``.
/// - Any JSON (RFC 8259) is accepted: every string escape including surrogate pairs, a leading
///   byte order mark. Malformed input — invalid UTF-8, truncation, bad escapes, nesting deeper than
///   512 levels — throws ``OfflineSyncError/Code-swift.struct/syntax``; well-formed JSON of the
///   wrong shape (an item without a string `id`, a duplicated member) throws
///   ``OfflineSyncError/Code-swift.struct/invalidValue``. Both messages name the byte offset.
///
/// Writing produces compact JSON: an item as `{"id":…}` followed by its other members in ascending
/// name order; doubles in the shortest form that reads back to the same bits (`0.1`, `-0.0`,
/// `5e-324`); dates as `"2026-01-02T03:04:05.678Z"`; ``Value/json(_:)`` values as their compact
/// text; strings with `"`, `\` and control characters escaped and everything else as UTF-8.
/// NaN, infinities, dates outside the years 1–9999 and JSON text that is not an array or object
/// throw ``OfflineSyncError/Code-swift.struct/invalidValue``.
///
/// Round trip: reading what was written gives the same items back, bit for bit (JSON text exactly
/// when it was compact to begin with, as read values always are).
public enum JSONCodec {
    // MARK: - Reading

    /// Reads one JSON value; an array or object becomes ``Value/json(_:)``.
    public static func decodeValue(_ bytes: some Collection<UInt8>) throws -> Value {
        try read(bytes) { try $0.readValue() }
    }

    /// Reads one item (a JSON object with a string `id`).
    public static func decodeItem(_ bytes: some Collection<UInt8>) throws -> Item {
        try read(bytes) { try $0.readItem() }
    }

    /// Reads a JSON array of items.
    public static func decodeItems(_ bytes: some Collection<UInt8>) throws -> [Item] {
        try read(bytes) { try $0.readItems() }
    }

    /// Reads a page of a table read: either an array of items, or the object
    /// `{"results": [...], "count": N}` that `$inlinecount=allpages` asks for (``QueryResult/totalCount``
    /// is then `N`; other members are ignored).
    public static func decodeResult(_ bytes: some Collection<UInt8>) throws -> QueryResult {
        try read(bytes) { try $0.readResult() }
    }

    /// Checks that `bytes` are one JSON value, building nothing; throws what the decoding
    /// methods would for text that is not JSON (the message names the byte offset).
    package static func validate(_ bytes: some Collection<UInt8>) throws {
        try read(bytes) { try $0.skipValue() }
    }

    // MARK: - Writing

    /// Writes one value; an array or object in ``Value/json(_:)`` is written as its compact text.
    public static func encode(_ value: Value) throws -> [UInt8] {
        var writer = JSONWriter()
        try writer.write(value, context: "the value")
        return writer.bytes
    }

    /// Writes one item as a JSON object.
    public static func encode(_ item: Item) throws -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(64 + item.slots.count * 24)
        try writer.write(item)
        return writer.bytes
    }

    /// Writes one item as a JSON object with only the non-null members `includes` accepts (in
    /// ascending name order after the id), and no `id` member when the id is empty.
    package static func encode(_ item: Item, nonNullMembersWhere includes: (String) -> Bool) throws -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(64 + item.slots.count * 24)
        try writer.write(item, nonNullMembersWhere: includes)
        return writer.bytes
    }

    /// Appends `text` as a JSON string (in double quotes, escaped as ``encode(_:)-(Value)`` escapes it).
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        JSONWriter.appendString(text, to: &bytes)
    }

    /// Writes items as a JSON array.
    public static func encode(_ items: [Item]) throws -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(2 + items.count * (64 + (items.first?.slots.count ?? 0) * 24))
        try writer.write(items)
        return writer.bytes
    }

    /// Writes a page: a JSON array of items, or `{"results":[…],"count":N}` when the result carries
    /// a total count.
    public static func encode(_ result: QueryResult) throws -> [UInt8] {
        guard let count = result.totalCount else { return try encode(result.items) }
        var writer = JSONWriter()
        writer.bytes.append(contentsOf: #"{"results":"#.utf8)
        try writer.write(result.items)
        writer.bytes.append(contentsOf: #","count":"#.utf8)
        JSONWriter.appendInteger(Int64(count), to: &writer.bytes)
        writer.bytes.append(UInt8(ascii: "}"))
        return writer.bytes
    }

    // MARK: - Plumbing

    private static func read<T>(_ bytes: some Collection<UInt8>, _ body: (inout JSONReader) throws -> T) throws -> T {
        try withContiguousBytes(bytes) { buffer in
            var reader = JSONReader(buffer)
            let result = try body(&reader)
            try reader.finish()
            return result
        }
    }

    /// Calls `body` with the bytes in contiguous memory, copying them only when they are not.
    static func withContiguousBytes<T>(
        _ bytes: some Collection<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> T
    ) throws -> T {
        if let result = try bytes.withContiguousStorageIfAvailable(body) { return result }
        return try Array(bytes).withUnsafeBufferPointer(body)
    }
}
