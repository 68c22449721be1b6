import CLMDB

/// The raw LMDB baseline: `mdb_put` / `mdb_get` / cursors with a hand-written binary record.
///
/// Layout: sub-database `item` keyed by id (value: five 8-byte integers, two flag bytes, then
/// length-prefixed title and version); `item_quantity` keyed by the order-preserving big-endian
/// quantity followed by the id (empty value) when indexed; `queue` keyed by the big-endian sequence.
final class RawLMDBBaseline: RawBaseline {
    private let path: String
    private let durability: RawDurability
    private var environment: OpaquePointer?
    private var items: MDB_dbi = 0
    private var index: MDB_dbi?
    private var queue: MDB_dbi = 0
    private var nextSequence: UInt64 = 1
    private var buffer: [UInt8] = []

    /// A baseline storing its environment in the directory `path` (created by the caller).
    init(path: String, durability: RawDurability) {
        self.path = path
        self.durability = durability
    }

    deinit {
        close()
    }

    func create(indexed: Bool) throws {
        try openEnvironment(create: true, indexed: indexed)
    }

    func open() throws {
        try openEnvironment(create: false, indexed: false)
        try withTransaction(readOnly: true) { transaction in
            var key = MDB_val(mv_size: 0, mv_data: nil)
            var value = MDB_val(mv_size: 0, mv_data: nil)
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(transaction, items, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            let code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            guard code == 0 || code == MDB_NOTFOUND else {
                try check(code, "mdb_cursor_get")
                return
            }
        }
    }

    func close() {
        if let environment {
            mdb_env_close(environment)
        }
        environment = nil
    }

    func insert(_ records: ArraySlice<BenchmarkRecord>, rowsPerTransaction: Int, queueRows: Bool) throws {
        var start = records.startIndex
        while start < records.endIndex {
            let end = min(start + max(rowsPerTransaction, 1), records.endIndex)
            try withTransaction(readOnly: false) { transaction in
                for record in records[start..<end] {
                    try put(record, in: transaction)
                    if queueRows {
                        try enqueue(record.id, in: transaction)
                    }
                }
            }
            start = end
        }
    }

    func drainQueue(_ records: [BenchmarkRecord]) throws {
        for record in records {
            try withTransaction(readOnly: false) { transaction in
                var cursor: OpaquePointer?
                try check(mdb_cursor_open(transaction, queue, &cursor), "mdb_cursor_open")
                defer { mdb_cursor_close(cursor) }
                var key = MDB_val(mv_size: 0, mv_data: nil)
                var value = MDB_val(mv_size: 0, mv_data: nil)
                guard mdb_cursor_get(cursor, &key, &value, MDB_FIRST) == 0 else {
                    throw RawBaselineError("lmdb: the queue is empty before '\(record.id)' was pushed")
                }
                try put(record, in: transaction)
                try check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
            }
        }
    }

    func lookup(id: String) throws -> BenchmarkRecord? {
        try withTransaction(readOnly: true) { transaction in
            try get(id, in: transaction)
        }
    }

    func queryTop() throws -> [BenchmarkRecord] {
        try withTransaction(readOnly: true) { transaction in
            index == nil ? try scanTop(in: transaction) : try indexedTop(in: transaction)
        }
    }

    func deleteAll() throws -> Int {
        try withTransaction(readOnly: false) { transaction in
            var stat = MDB_stat()
            try check(mdb_stat(transaction, items, &stat), "mdb_stat")
            try check(mdb_drop(transaction, items, 0), "mdb_drop")
            if let index {
                try check(mdb_drop(transaction, index, 0), "mdb_drop")
            }
            return stat.ms_entries
        }
    }

    // MARK: - Environment and transactions

    private func openEnvironment(create: Bool, indexed: Bool) throws {
        guard environment == nil else { return }
        var handle: OpaquePointer?
        try check(mdb_env_create(&handle), "mdb_env_create")
        environment = handle
        do {
            try check(mdb_env_set_maxdbs(handle, 8), "mdb_env_set_maxdbs")
            try check(mdb_env_set_mapsize(handle, 16 << 30), "mdb_env_set_mapsize")
            let flags = UInt32(MDB_NOTLS) | (durability == .full ? 0 : UInt32(MDB_NOSYNC))
            try check(mdb_env_open(handle, path, flags, 0o644), "mdb_env_open '\(path)'")
            try withTransaction(readOnly: false) { transaction in
                let createFlag = create ? UInt32(MDB_CREATE) : 0
                items = try openDatabase("item", flags: createFlag, in: transaction)
                queue = try openDatabase("queue", flags: createFlag, in: transaction)
                index = indexed ? try openDatabase("item_quantity", flags: createFlag, in: transaction) : nil
            }
        } catch {
            close()
            throw error
        }
    }

    private func openDatabase(_ name: String, flags: UInt32, in transaction: OpaquePointer?) throws -> MDB_dbi {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(transaction, name, flags, &dbi), "mdb_dbi_open \(name)")
        return dbi
    }

    private func withTransaction<T>(readOnly: Bool, _ body: (OpaquePointer?) throws -> T) throws -> T {
        guard let environment else { throw RawBaselineError("lmdb: the raw baseline at '\(path)' is not open") }
        var transaction: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &transaction), "mdb_txn_begin")
        do {
            let result = try body(transaction)
            try check(mdb_txn_commit(transaction), "mdb_txn_commit")
            return result
        } catch {
            mdb_txn_abort(transaction)
            throw error
        }
    }

    private func check(_ code: Int32, _ call: String) throws {
        guard code == 0 else {
            throw RawBaselineError("lmdb: \(call) failed: \(String(cString: mdb_strerror(code)))")
        }
    }

    // MARK: - Records

    private func put(_ record: BenchmarkRecord, in transaction: OpaquePointer?) throws {
        if let index {
            if let previous = try get(record.id, in: transaction) {
                try withIndexKey(previous.quantity, previous.id) { key in
                    let code = mdb_del(transaction, index, &key, nil)
                    guard code == 0 || code == MDB_NOTFOUND else {
                        try check(code, "mdb_del")
                        return
                    }
                }
            }
            try withIndexKey(record.quantity, record.id) { key in
                var empty = MDB_val(mv_size: 0, mv_data: nil)
                try check(mdb_put(transaction, index, &key, &empty, 0), "mdb_put index")
            }
        }
        encode(record)
        var id = record.id
        try id.withUTF8 { idBytes in
            try buffer.withUnsafeMutableBytes { bytes in
                var key = MDB_val(
                    mv_size: idBytes.count, mv_data: UnsafeMutableRawPointer(mutating: idBytes.baseAddress))
                var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                try check(mdb_put(transaction, items, &key, &value, 0), "mdb_put")
            }
        }
    }

    private func enqueue(_ id: String, in transaction: OpaquePointer?) throws {
        var sequence = nextSequence.bigEndian
        nextSequence += 1
        var idCopy = id
        try idCopy.withUTF8 { idBytes in
            try withUnsafeMutableBytes(of: &sequence) { sequenceBytes in
                var key = MDB_val(mv_size: 8, mv_data: sequenceBytes.baseAddress)
                var value = MDB_val(
                    mv_size: idBytes.count, mv_data: UnsafeMutableRawPointer(mutating: idBytes.baseAddress))
                try check(mdb_put(transaction, queue, &key, &value, UInt32(MDB_APPEND)), "mdb_put queue")
            }
        }
    }

    private func get(_ id: String, in transaction: OpaquePointer?) throws -> BenchmarkRecord? {
        var idCopy = id
        return try idCopy.withUTF8 { idBytes in
            var key = MDB_val(mv_size: idBytes.count, mv_data: UnsafeMutableRawPointer(mutating: idBytes.baseAddress))
            var value = MDB_val(mv_size: 0, mv_data: nil)
            let code = mdb_get(transaction, items, &key, &value)
            if code == MDB_NOTFOUND { return nil }
            try check(code, "mdb_get")
            return decode(id: id, UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
        }
    }

    private func scanTop(in transaction: OpaquePointer?) throws -> [BenchmarkRecord] {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction, items, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(mv_size: 0, mv_data: nil)
        var value = MDB_val(mv_size: 0, mv_data: nil)
        var top: [BenchmarkRecord] = []
        var operation = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, operation) == 0 {
            operation = MDB_NEXT
            let bytes = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            let quantity = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self))
            guard quantity >= BenchmarkData.queryThreshold, bytes[40] == 0 else { continue }
            let id = String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self)
            if top.count == BenchmarkData.queryLimit, let last = top.last, !Self.precedes(quantity, id, last) {
                continue
            }
            let record = decode(id: id, bytes)
            let position = top.firstIndex { Self.precedes(quantity, id, $0) } ?? top.endIndex
            top.insert(record, at: position)
            if top.count > BenchmarkData.queryLimit { top.removeLast() }
        }
        return top
    }

    private static func precedes(_ quantity: Int64, _ id: String, _ other: BenchmarkRecord) -> Bool {
        quantity != other.quantity ? quantity < other.quantity : id.utf8.lexicographicallyPrecedes(other.id.utf8)
    }

    private func indexedTop(in transaction: OpaquePointer?) throws -> [BenchmarkRecord] {
        guard let index else { return [] }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction, index, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var result: [BenchmarkRecord] = []
        var value = MDB_val(mv_size: 0, mv_data: nil)
        let start = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        defer { start.deallocate() }
        start.pointee = UInt64(bitPattern: BenchmarkData.queryThreshold ^ Int64.min).bigEndian
        var key = MDB_val(mv_size: 8, mv_data: UnsafeMutableRawPointer(start))
        var code = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
        while code == 0, result.count < BenchmarkData.queryLimit {
            let id = String(
                decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size).dropFirst(8), as: UTF8.self)
            if let record = try get(id, in: transaction), !record.done {
                result.append(record)
            }
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        guard code == 0 || code == MDB_NOTFOUND else {
            try check(code, "mdb_cursor_get")
            return result
        }
        return result
    }

    private func withIndexKey(_ quantity: Int64, _ id: String, _ body: (inout MDB_val) throws -> Void) throws {
        var bytes = withUnsafeBytes(of: UInt64(bitPattern: quantity ^ Int64.min).bigEndian) { Array($0) }
        bytes.append(contentsOf: id.utf8)
        try bytes.withUnsafeMutableBytes { raw in
            var key = MDB_val(mv_size: raw.count, mv_data: raw.baseAddress)
            try body(&key)
        }
    }

    private func encode(_ record: BenchmarkRecord) {
        buffer.removeAll(keepingCapacity: true)
        func append(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
        func append(_ text: String) {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: text.utf8)
        }
        append(record.quantity)
        append(Int64(bitPattern: record.price.bitPattern))
        append(record.due)
        append(record.createdAt)
        append(record.updatedAt)
        buffer.append(record.done ? 1 : 0)
        buffer.append(record.deleted ? 1 : 0)
        append(record.title)
        append(record.version)
    }

    private func decode(id: String, _ bytes: UnsafeRawBufferPointer) -> BenchmarkRecord {
        func integer(_ offset: Int) -> Int64 {
            Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
        }
        func text(_ offset: Int) -> (String, Int) {
            let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let start = offset + 4
            return (
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]), as: UTF8.self),
                start + count
            )
        }
        let (title, next) = text(42)
        let (version, _) = text(next)
        return BenchmarkRecord(
            id: id, title: title, quantity: integer(0), price: Double(bitPattern: UInt64(bitPattern: integer(8))),
            done: bytes[40] != 0, due: integer(16), createdAt: integer(24), updatedAt: integer(32),
            version: version, deleted: bytes[41] != 0)
    }
}
