import OfflineSync

/// One item as one line of JSON, the format of `import` and `export`, written and read by the
/// core's `JSONCodec` (the table protocol's body format).
///
/// A line is `{"id":…}` followed by the other columns in name order, null values left out, dates
/// as ISO 8601 strings in UTC with milliseconds, `json` columns as compact nested JSON. The same
/// items therefore export to the same bytes on every backend. On import, numbers without a
/// fraction are integers (they fill `double` columns too), and ISO 8601 strings fill `date`
/// columns.
enum JSONLine {
    /// The line of an item (without the newline).
    static func encode(_ item: Item) throws -> String {
        String(decoding: try JSONCodec.encode(item), as: UTF8.self)
    }

    /// The item of a line; throws the codec's error, which names the byte offset.
    static func decode(_ line: some Collection<UInt8>) throws -> Item {
        try JSONCodec.decodeItem(line)
    }
}
