import CSQLite
package import OfflineSync

/// A prepared statement of one ``Connection``: bound by position, stepped, reset, and finalised in
/// `deinit` (so a cached statement lives exactly as long as its cache entry).
///
/// Not thread-safe: it is used only while its connection's store holds its lock.
package final class Statement {
    /// The SQL text, without values.
    package let sql: String
    let handle: OpaquePointer
    unowned let connection: Connection
    private let api: SQLiteAPI

    /// The text of the row bound last by ``bindRow(id:values:)``, kept here so SQLite reads it in
    /// place (`SQLITE_STATIC`) instead of copying every string it is given.
    private var rowText: UnsafeMutableRawPointer
    private var rowTextCapacity = 256

    init(handle: OpaquePointer, sql: String, connection: Connection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
        self.api = connection.api
        self.rowText = UnsafeMutableRawPointer.allocate(byteCount: rowTextCapacity, alignment: 1)
    }

    deinit {
        _ = api.finalize(handle)
        rowText.deallocate()
    }

    /// Binds `id` to parameter 1 and `values` to the parameters after it, like
    /// ``bind(_:at:)``, with the row's text copied once into a buffer the statement owns and
    /// bound without SQLite copying it again. The bindings stay valid until the next call.
    package func bindRow(id: String, values: [Value]) throws {
        var needed = id.utf8.count
        for value in values {
            switch value {
            case .string(let text), .json(let text): needed += text.utf8.count
            default: break
            }
        }
        if needed > rowTextCapacity {
            // SQLite still points into the old buffer until every parameter is bound again.
            clearBindings()
            rowText.deallocate()
            rowTextCapacity = max(needed, rowTextCapacity * 2)
            rowText = UnsafeMutableRawPointer.allocate(byteCount: rowTextCapacity, alignment: 1)
        }
        var offset = 0
        func bindText(_ text: String, at index: Int32) -> Int32 {
            var text = text
            let count = text.withUTF8 { bytes in
                if let base = bytes.baseAddress { (rowText + offset).copyMemory(from: base, byteCount: bytes.count) }
                return bytes.count
            }
            let start = (rowText + offset).assumingMemoryBound(to: CChar.self)
            offset += count
            return api.bind_text(handle, index, start, Int32(count), nil)
        }
        try check(bindText(id, at: 1), at: 1)
        for (position, value) in values.enumerated() {
            let index = Int32(position + 2)
            switch value {
            case .string(let text), .json(let text): try check(bindText(text, at: index), at: index)
            default: try bind(value, at: index)
            }
        }
    }

    private func check(_ code: Int32, at index: Int32) throws {
        guard code == SQLITE_OK else {
            throw connection.error(code: code, context: "binding parameter \(index)", sql: sql)
        }
    }

    /// Binds `value` to the 1-based parameter `index` with OfflineSync's storage rules: booleans as
    /// 0/1, dates as milliseconds since 1970, JSON as text.
    package func bind(_ value: Value, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = api.bind_null(handle, index)
        case .bool(let flag): code = api.bind_int64(handle, index, flag ? 1 : 0)
        case .int(let number): code = api.bind_int64(handle, index, number)
        case .double(let number): code = api.bind_double(handle, index, number)
        case .date(let date): code = api.bind_int64(handle, index, date.millisecondsSince1970)
        case .string(let text), .json(let text): code = bind(text, at: index)
        }
        try check(code, at: index)
    }

    private func bind(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            // An empty buffer may have no base address, and a NULL pointer would bind SQL NULL.
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return api.bind_text(handle, index, "", 0, SQLiteAPI.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                api.bind_text(handle, index, $0, Int32(bytes.count), SQLiteAPI.transient)
            }
        }
    }

    /// Binds `count` bytes at `bytes` as text without making a Swift value of them (for key
    /// material, which must not outlive its zeroed buffer). SQLite copies the bytes; call
    /// ``clearBindings()`` after the statement ran.
    package func bindKey(_ bytes: UnsafeRawPointer, _ count: Int32, at index: Int32) throws {
        let code = api.bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self), count, SQLiteAPI.transient)
        guard code == SQLITE_OK else {
            throw connection.error(code: code, context: "binding parameter \(index)", sql: sql)
        }
    }

    /// Sets every parameter back to NULL, releasing SQLite's copies of bound values.
    package func clearBindings() {
        _ = api.clear_bindings(handle)
    }

    /// Binds every value in order, from parameter 1.
    package func bind(_ values: [Value]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Runs one step: `true` when a row is available, `false` when the statement is done.
    /// On failure the statement is reset and the error names the SQL (values redacted unless the
    /// store publishes them, see ``SQLiteError/arguments``).
    package func step(arguments: @autoclosure () -> [Value] = []) throws -> Bool {
        let code = api.step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            _ = api.reset(handle)
            throw connection.error(
                code: code, context: "running a statement on '\(connection.path)'", sql: sql,
                arguments: arguments())
        }
    }

    /// Steps an INSERT: `true` when the row was inserted, `false` when its primary key already
    /// exists (the statement is then reset); any other failure throws.
    package func stepInsert(arguments: @autoclosure () -> [Value]) throws -> Bool {
        let code = api.step(handle)
        if code == SQLITE_DONE { return true }
        _ = api.reset(handle)
        if code == Statement.primaryKeyConflict { return false }
        throw connection.error(
            code: code, context: "running a statement on '\(connection.path)'", sql: sql,
            arguments: arguments())
    }

    /// `SQLITE_CONSTRAINT_PRIMARYKEY`.
    private static let primaryKeyConflict: Int32 = SQLITE_CONSTRAINT | (6 << 8)

    /// Rewinds the statement so that it can be bound and stepped again (bindings are kept).
    package func reset() {
        _ = api.reset(handle)
    }

    /// Binds `arguments`, steps to the end, and resets.
    package func run(_ arguments: [Value] = []) throws {
        defer { reset() }
        try bind(arguments)
        while try step(arguments: arguments) {}
    }

    /// `true` when the column of the current row is SQL NULL.
    package func isNull(_ column: Int32) -> Bool {
        api.column_type(handle, column) == SQLITE_NULL
    }

    /// The column of the current row as a 64-bit integer.
    package func int64(_ column: Int32) -> Int64 {
        api.column_int64(handle, column)
    }

    /// The column of the current row as a double.
    package func double(_ column: Int32) -> Double {
        api.column_double(handle, column)
    }

    /// The column of the current row as text (every byte, U+0000 included).
    package func text(_ column: Int32) -> String {
        guard let bytes = api.column_text(handle, column) else { return "" }
        let count = Int(api.column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column of the current row read as a value of `type` (`null` for SQL NULL).
    package func value(_ column: Int32, as type: ColumnType) -> Value {
        if isNull(column) { return .null }
        switch type {
        case .bool: return .bool(int64(column) != 0)
        case .integer: return .int(int64(column))
        case .double: return .double(double(column))
        case .string: return .string(text(column))
        case .date: return .date(Timestamp(millisecondsSince1970: int64(column)))
        case .json: return .json(text(column))
        }
    }
}
