import CLMDB

/// One live LMDB transaction and the byte-level operations on it.
///
/// A context is confined to the call that created it (never stored, never shared between
/// threads); the buffers it hands out point into the memory map and are valid only until the
/// transaction's next write or its end. A write context remembers whether any operation ran out
/// of map space, so the store can grow the map and retry even if the caller swallowed the error.
final class TransactionContext {
    let txn: OpaquePointer
    let path: String
    let isWritable: Bool
    /// Set when an operation failed with `MDB_MAP_FULL`.
    private(set) var ranOutOfSpace = false

    init(txn: OpaquePointer, path: String, isWritable: Bool) {
        self.txn = txn
        self.path = path
        self.isWritable = isWritable
    }

    /// Throws an ``LMDBError`` for a non-zero return code, noting `MDB_MAP_FULL`.
    func check(_ code: Int32, _ operation: @autoclosure () -> String) throws {
        guard code != 0 else { return }
        if code == MDB_MAP_FULL { ranOutOfSpace = true }
        throw LMDBError(code: code, operation: operation(), path: path)
    }

    /// The value stored under `key`, or `nil`.
    func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val()
        let code = mdb_get(txn, dbi, &keyValue, &data)
        if code == MDB_NOTFOUND { return nil }
        try check(code, "mdb_get")
        return UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
    }

    /// Stores `value` under `key`, replacing any previous value.
    func put(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
        if try append(dbi, key, value) { return }
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(txn, dbi, &keyValue, &data, 0), "mdb_put")
        placed(dbi, key)
    }

    /// Stores `value` under `key` unless the key is already there (`MDB_NOOVERWRITE`: one
    /// descent of the B-tree, where a get and a put take two); `false` when it was there.
    func putIfAbsent(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool {
        if try append(dbi, key, value) { return true }
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let code = mdb_put(txn, dbi, &keyValue, &data, UInt32(MDB_NOOVERWRITE))
        if code == MDB_KEYEXIST { return false }
        try check(code, "mdb_put")
        placed(dbi, key)
        return true
    }

    /// Deletes `key`; `false` when it was not there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> Bool {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        settle(dbi)
        let code = mdb_del(txn, dbi, &keyValue, nil)
        if code == MDB_NOTFOUND { return false }
        try check(code, "mdb_del")
        return true
    }

    // MARK: - Appending

    /// What a write transaction knows about the end of one sub-database it writes to.
    ///
    /// A put whose key sorts after every key already there (the queue's sequence index always,
    /// ids that grow with time, a bulk load in key order) can append: `mdb_cursor_put` with
    /// `MDB_APPEND` on a cursor kept for the purpose walks to the last leaf without comparing
    /// keys on the way, where `mdb_put` opens a cursor and binary-searches every page from the
    /// root. In C, 10,000 inserts of an item, its queue row and its sequence-index entry took
    /// 5.8 ms with `mdb_put` and 3.0 ms appended (`Benchmarks/C/lmdb-queue-puts.c`;
    /// BENCHMARKS.md, "The operation queue").
    private struct Tail {
        /// A key at least as great as every key of the sub-database, once ``isKnown``: learnt
        /// from the last key, then raised by every ordinary put (a delete leaves it an upper
        /// bound). While ``boundIsAtCursor``, the bound is the key under ``cursor`` instead (the
        /// sub-database's last key, just appended), and this copy is stale: a run of appends
        /// copies no key, and the last key is read back only when an ordinary write needs it.
        var bound: [UInt8] = []
        var isKnown = false
        /// Set by each append, cleared by ``TransactionContext/settle(_:)``.
        var boundIsAtCursor = false
        /// Puts seen while the bound is unknown: it is learnt (one descent) at the second, so
        /// a transaction that writes one row pays nothing.
        var puts = 0
        /// The cursor that made this transaction's last write to the sub-database, by appending;
        /// closed by any other write to it, so a cursor never appends from a stale position.
        /// Write-transaction cursors left open are freed by LMDB when the transaction ends.
        var cursor: OpaquePointer?

        mutating func closeCursor() {
            if let cursor { mdb_cursor_close(cursor) }
            cursor = nil
        }

        /// Makes `key` the bound (reusing the bound's storage).
        mutating func raise(to key: UnsafeRawBufferPointer) {
            bound.removeAll(keepingCapacity: true)
            bound.append(contentsOf: key)
        }

        /// Forgets the bound (to be learnt again from the last key).
        mutating func forget() {
            isKnown = false
            boundIsAtCursor = false
            puts = 0
        }
    }

    /// By sub-database handle (small integers), in write transactions only.
    @exclusivity(unchecked) private var tails: [Tail] = []

    /// Appends `key` and `value` when `key` sorts after every key of `dbi` (`MDB_APPEND`, which
    /// LMDB itself checks too); `false`, having written nothing, when the key may not be last.
    @inline(__always)
    private func append(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws
        -> Bool
    {
        guard isWritable, key.count > 0 else { return false }
        let slot = Int(dbi)
        if slot >= tails.count { tails.append(contentsOf: repeatElement(Tail(), count: slot + 1 - tails.count)) }
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        if tails[slot].boundIsAtCursor, let cursor = tails[slot].cursor {
            // The cursor made the last write, at the last key: LMDB compares the key with it
            // (the cursor is at the end already, no descent) and appends, or refuses.
            let code = mdb_cursor_put(cursor, &keyValue, &data, UInt32(MDB_APPEND))
            if code == 0 { return true }
            settle(dbi)
            if code == MDB_KEYEXIST { return false }
            try check(code, "mdb_cursor_put")
        }
        if !tails[slot].isKnown {
            tails[slot].puts += 1
            guard tails[slot].puts >= 2 else { return false }
            try learnBound(slot, dbi)
        }
        guard tails[slot].bound.withUnsafeBytes({ KeyRange.compare(key, $0) }) > 0 else { return false }
        let cursor = try appendingCursor(slot, dbi)
        let code = mdb_cursor_put(cursor, &keyValue, &data, UInt32(MDB_APPEND))
        if code == MDB_KEYEXIST {
            // Not after the last key after all (cannot happen while the bound holds): forget
            // the bound and let the caller put the ordinary way.
            tails[slot].closeCursor()
            tails[slot].forget()
            return false
        }
        try check(code, "mdb_cursor_put")
        tails[slot].boundIsAtCursor = true
        return true
    }

    /// Before a write other than an append to `dbi`: copies the bound from the appending
    /// cursor when it is there (its sub-database's last key), and closes the cursor.
    private func settle(_ dbi: MDB_dbi) {
        let slot = Int(dbi)
        guard slot < tails.count else { return }
        if tails[slot].boundIsAtCursor, let cursor = tails[slot].cursor {
            tails[slot].boundIsAtCursor = false
            var key = MDB_val()
            var data = MDB_val()
            if mdb_cursor_get(cursor, &key, &data, MDB_LAST) == 0 {
                tails[slot].raise(to: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
            } else {
                tails[slot].forget()
            }
        }
        tails[slot].closeCursor()
    }

    /// The tail's appending cursor, opened when it has none.
    private func appendingCursor(_ slot: Int, _ dbi: MDB_dbi) throws -> OpaquePointer? {
        if let cursor = tails[slot].cursor { return cursor }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        tails[slot].cursor = cursor
        return cursor
    }

    /// Reads the last key of `dbi` into its tail's bound.
    private func learnBound(_ slot: Int, _ dbi: MDB_dbi) throws {
        let cursor = try appendingCursor(slot, dbi)
        var key = MDB_val()
        var data = MDB_val()
        let code = mdb_cursor_get(cursor, &key, &data, MDB_LAST)
        if code == MDB_NOTFOUND {
            tails[slot].bound.removeAll(keepingCapacity: true)
        } else {
            try check(code, "mdb_cursor_get")
            tails[slot].raise(to: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
        }
        tails[slot].isKnown = true
    }

    /// Records an ordinary put of `key` into `dbi` (made after ``settle(_:)`` or with no bound
    /// at the cursor): the appending cursor no longer made the last write, and the bound rises
    /// to the key when the key is above it.
    @inline(__always)
    private func placed(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) {
        let slot = Int(dbi)
        guard slot < tails.count else { return }
        // (An empty key is put without settling: the bound left at the cursor is forgotten.)
        if tails[slot].boundIsAtCursor { tails[slot].forget() }
        tails[slot].closeCursor()
        if tails[slot].isKnown, tails[slot].bound.withUnsafeBytes({ KeyRange.compare(key, $0) }) > 0 {
            tails[slot].raise(to: key)
        }
    }

    /// The number of entries in a sub-database.
    func entryCount(_ dbi: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(txn, dbi, &stat), "mdb_stat")
        return stat.ms_entries
    }

    /// Opens the named sub-database, creating it when it does not exist.
    func openDatabase(_ name: String) throws -> MDB_dbi {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open('\(name)')")
        return dbi
    }

    /// Opens the named sub-database when it exists; `nil` when it does not.
    func openExistingDatabase(_ name: String) throws -> MDB_dbi? {
        var dbi: MDB_dbi = 0
        let code = mdb_dbi_open(txn, name, 0, &dbi)
        if code == MDB_NOTFOUND { return nil }
        try check(code, "mdb_dbi_open('\(name)')")
        return dbi
    }

    /// Deletes every entry of a sub-database, keeping it.
    func empty(_ dbi: MDB_dbi) throws {
        try check(mdb_drop(txn, dbi, 0), "mdb_drop")
        if Int(dbi) < tails.count {
            tails[Int(dbi)].closeCursor()
            tails[Int(dbi)].boundIsAtCursor = false
            tails[Int(dbi)].bound.removeAll(keepingCapacity: true)
        }
    }

    /// Walks the keys of `dbi` from `range`'s start towards its end (see ``KeyRange``), calling
    /// `body` with each key, its value and a verdict until it returns `false` or the range ends.
    /// With a `screen` (for a walk over records), the records it rejects are passed over here,
    /// without calling `body` (whose every call costs retains of what it captures), and `body`
    /// gets the verdict of the others, so no record is screened twice; without one the verdict is
    /// `.undecided`. Always inlined, so that each caller's body is called directly, not through a
    /// closure context, once per key.
    @inline(__always)
    func walk(
        _ dbi: MDB_dbi, _ range: KeyRange, descending: Bool,
        screen: UnsafeMutablePointer<RecordCodec.FieldTests.Screen>? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, RecordCodec.FieldTests.Verdict) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var code = try position(cursor, &key, &data, range, descending: descending)
        let step = descending ? MDB_PREV : MDB_NEXT
        while code == 0 {
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard range.contains(keyBytes, comingFromStart: !descending) else { return }
            let value = UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
            let verdict = screen.map { RecordCodec.FieldTests.verdict($0, value) } ?? .undecided
            if verdict == .rejected {
                code = mdb_cursor_get(cursor, &key, &data, step)
                continue
            }
            guard try body(keyBytes, value, verdict) else { return }
            code = mdb_cursor_get(cursor, &key, &data, step)
        }
        if code != MDB_NOTFOUND { try check(code, "mdb_cursor_get") }
    }

    private func position(
        _ cursor: OpaquePointer?, _ key: inout MDB_val, _ data: inout MDB_val,
        _ range: KeyRange, descending: Bool
    ) throws -> Int32 {
        if !descending {
            guard let lower = range.lower, !lower.isEmpty else { return mdb_cursor_get(cursor, &key, &data, MDB_FIRST) }
            return lower.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
        }
        guard let after = range.upper.flatMap(KeyRange.successor) else {
            return mdb_cursor_get(cursor, &key, &data, MDB_LAST)
        }
        let code = after.withUnsafeBytes { bytes in
            key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
        }
        if code == MDB_NOTFOUND { return mdb_cursor_get(cursor, &key, &data, MDB_LAST) }
        if code != 0 { return code }
        return mdb_cursor_get(cursor, &key, &data, MDB_PREV)
    }
}

/// A range of keys for a cursor walk: from `lower` (inclusive) to every key whose first
/// `upper.count` bytes are at most `upper` (a prefix-inclusive end), either bound open when `nil`.
///
/// Prefix-inclusive ends make truncated bounds safe: a bound cut to the key-size limit still
/// includes every key it should (the query evaluator removes the extra ones afterwards).
struct KeyRange {
    var lower: [UInt8]?
    var upper: [UInt8]?

    static let all = KeyRange(lower: nil, upper: nil)

    /// `true` while a walk has not passed the end it is moving towards.
    func contains(_ key: UnsafeRawBufferPointer, comingFromStart: Bool) -> Bool {
        if comingFromStart {
            guard let upper else { return true }
            return KeyRange.compare(UnsafeRawBufferPointer(rebasing: key.prefix(upper.count)), upper) <= 0
        }
        guard let lower else { return true }
        return KeyRange.compare(key, lower) >= 0
    }

    /// The smallest key greater than every key starting with `prefix`, or `nil` if none exists.
    static func successor(_ prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    /// Lexicographic byte comparison (LMDB's default key order).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { compare(a, $0) }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
