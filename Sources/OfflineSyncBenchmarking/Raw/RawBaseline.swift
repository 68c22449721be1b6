/// The storage work of each scenario done directly on a C API, the yardstick for the ratios.
///
/// A raw baseline stores ``BenchmarkRecord`` fields with no value model, no schema checks and no
/// sync logic: what a programmer writing against the C library by hand would do. Every backend's
/// figure is divided by its baseline's figure for the same work in the same run.
protocol RawBaseline: AnyObject {
    /// Creates an empty store (item table, operation-queue table, and the index on `quantity`
    /// when `indexed`) and leaves it open.
    func create(indexed: Bool) throws

    /// Inserts or replaces the records, committing every `rowsPerTransaction` rows. With
    /// `queueRows`, each record also gets an operation-queue row in the same transaction.
    func insert(_ records: ArraySlice<BenchmarkRecord>, rowsPerTransaction: Int, queueRows: Bool) throws

    /// What a push does to storage: for each queued record in order, one transaction that
    /// replaces the item with the server's copy and deletes its queue row.
    func drainQueue(_ records: [BenchmarkRecord]) throws

    /// The record with this id, decoded, or `nil`.
    func lookup(id: String) throws -> BenchmarkRecord?

    /// The query scenario: `quantity >= threshold and done == false`, ordered by `quantity` then
    /// `id`, first ``BenchmarkData/queryLimit`` rows, decoded.
    func queryTop() throws -> [BenchmarkRecord]

    /// Deletes every item (a purge) and returns how many there were.
    func deleteAll() throws -> Int

    /// Opens the existing store and reads from it once (the cold-open scenario).
    func open() throws

    /// Closes the store; closing a closed store does nothing.
    func close()
}

/// How hard a store flushes a commit to disk, matched between a backend and its baseline.
public enum RawDurability: String, Sendable, Hashable {
    /// A commit survives a crash of the process but does not wait for the disk: SQLite WAL with
    /// `synchronous=NORMAL` (the SQL stores' default), LMDB with `MDB_NOSYNC` (`LMDBStore`'s
    /// `noSync`; a process crash loses nothing in any LMDB mode).
    case normal
    /// A commit waits for the disk and survives a power loss: SQLite `synchronous=FULL`, LMDB's
    /// default fsync per commit.
    case full
}

/// Which key the SQLCipher baseline opens with.
enum RawSQLCipherKey: Sendable, Hashable {
    /// A passphrase, stretched by SQLCipher's PBKDF2 at every open.
    case passphrase(String)
    /// A raw 256-bit key as 64 hex digits (no key derivation).
    case raw(hex: String)

    /// The passphrase used by the benchmarks.
    static let benchmarkPassphrase = RawSQLCipherKey.passphrase(benchmarkPassphraseText)

    /// The text of ``benchmarkPassphrase``.
    static let benchmarkPassphraseText = "benchmark passphrase"
    /// The raw key used by the benchmarks.
    static let benchmarkRawKey = RawSQLCipherKey.raw(
        hex: benchmarkRawKeyBytes.map {
            ($0 < 16 ? "0" : "") + String($0, radix: 16)
        }.joined())

    /// The bytes of ``benchmarkRawKey``.
    static let benchmarkRawKeyBytes: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
}

/// A failure of a raw baseline (a C call that returned an error), with the call and message.
struct RawBaselineError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
