/// Rows of values made the cheap way.
///
/// `Array(repeating:count:)` of values calls the standard library's unspecialized buffer
/// initializer, which looks up the generic metadata of the array's storage at run time on every
/// call: 13 % of an LMDB lookup by id went there (`perf record` of `offline-sync bench --stores
/// lmdb --scenarios lookup`), more when the metadata cache is cold. An empty array grown with
/// `reserveCapacity` and appends is specialized by the optimizer and allocates the same storage
/// without that lookup (half the time per row in a stand-alone measurement).
extension Array where Element == Value? {
    /// `count` slots without a value, for building an item's slots (see ``Item/init(id:layout:values:)``).
    package static func noValues(count: Int) -> [Value?] {
        var slots: [Value?] = []
        slots.reserveCapacity(count)
        for _ in 0..<count { slots.append(nil) }
        return slots
    }
}

extension Array where Element == Value {
    /// `count` nulls, for building a row of column values.
    package static func nulls(count: Int) -> [Value] {
        var row: [Value] = []
        row.reserveCapacity(count)
        for _ in 0..<count { row.append(.null) }
        return row
    }
}
