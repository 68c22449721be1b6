/// Writes values and items as compact UTF-8 JSON (the rules are on ``JSONCodec``).
struct JSONWriter {
    var bytes: [UInt8] = []
    /// The layout of the last item written and its positions in ascending name order: the items
    /// of a page share one layout, so its names are sorted once, not once per item.
    private var orderedLayout: RowLayout?
    private var orderedPositions: [Int] = []

    // MARK: - Items

    /// Writes `{"id":…,…}` with the other members in ascending name order.
    mutating func write(_ item: Item) throws {
        try writeObject(item, writingId: true) { key, _ in
            guard key != "id" else {
                throw OfflineSyncError(
                    .invalidValue, "item '\(item.id)' holds a value named 'id' besides its id; set Item.id instead")
            }
            return true
        }
    }

    /// Writes `{"id":…,…}` with the non-null members `includes` accepts in ascending name order;
    /// without an `id` member when the id is empty.
    mutating func write(_ item: Item, nonNullMembersWhere includes: (String) -> Bool) throws {
        try writeObject(item, writingId: !item.id.isEmpty) { key, value in
            !value.isNull && key != "id" && includes(key)
        }
    }

    /// Writes the item as an object: `"id"` first when `writingId`, then the members `includes`
    /// accepts (it may throw to refuse the item), in ascending name order.
    private mutating func writeObject(
        _ item: Item, writingId: Bool, _ includes: (_ name: String, _ value: Value) throws -> Bool
    ) throws {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        func name(_ name: String) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.appendString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        if writingId {
            name("id")
            JSONWriter.appendString(item.id, to: &bytes)
        }
        let names = item.layout.names
        for position in positionsByName(of: item) {
            guard position < item.slots.count, let value = item.slots[position] else { continue }
            let key = names[position]
            guard try includes(key, value) else { continue }
            name(key)
            try write(value, context: "column '\(key)' of item '\(item.id)'")
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The positions of the item's layout in ascending name order, sorted once per layout.
    private mutating func positionsByName(of item: Item) -> [Int] {
        if let orderedLayout, orderedLayout === item.layout { return orderedPositions }
        let names = item.layout.names
        orderedPositions = names.indices.sorted { names[$0] < names[$1] }
        orderedLayout = item.layout
        return orderedPositions
    }

    mutating func write(_ items: [Item]) throws {
        bytes.append(UInt8(ascii: "["))
        for (position, item) in items.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            try write(item)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    // MARK: - Values

    /// Writes one value; `context` names it in errors ("column 'x' of item 'y'").
    mutating func write(_ value: Value, context: @autoclosure () -> String) throws {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let flag):
            bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .int(let number):
            JSONWriter.appendInteger(number, to: &bytes)
        case .double(let number):
            guard number.isFinite else {
                throw OfflineSyncError(
                    .invalidValue, "\(context()) holds \(number); JSON cannot carry NaN or infinities")
            }
            bytes.append(contentsOf: number.description.utf8)
        case .string(let text):
            JSONWriter.appendString(text, to: &bytes)
        case .date(let date):
            guard date >= Timestamp.minimum, date <= Timestamp.maximum else {
                throw OfflineSyncError(
                    .invalidValue,
                    "\(context()) holds the date \(date), outside the years 1–9999 that ISO 8601 text can carry")
            }
            bytes.append(UInt8(ascii: "\""))
            date.appendISO8601(to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .json(let text):
            do {
                try JSONWriter.appendContainer(text, to: &bytes)
            } catch let error as OfflineSyncError {
                throw OfflineSyncError(
                    .invalidValue, "\(context()) holds JSON text that is not a valid array or object: \(error.message)")
            }
        }
    }

    /// Appends the compact form of `text`, which must be one JSON array or object (whitespace
    /// around it allowed); throws the syntax error otherwise. The one rule for ``Value/json(_:)``
    /// text: stores check it on write (``TableSchema/normalize(_:origin:)``) with the same call.
    static func appendContainer(_ text: String, to bytes: inout [UInt8]) throws {
        try JSONCodec.withContiguousBytes(text.utf8) { buffer in
            var reader = JSONReader(buffer)
            guard let first = reader.peek(), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
                throw reader.expected("a JSON array or object")
            }
            try reader.appendCompact(to: &bytes, depth: 0)
            try reader.finish()
        }
    }

    static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    // MARK: - Strings

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends a string in double quotes, escaping `"`, `\` and the control characters U+0000–U+001F
    /// (as `\n`, `\t` … or `\u00XX`); everything else is copied as UTF-8.
    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendString(utf8: $0, to: &bytes) }
    }

    static func appendString(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in utf8.indices {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            runStart = index + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            default:
                bytes.append(contentsOf: "u00".utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        bytes.append(UInt8(ascii: "\""))
    }
}
