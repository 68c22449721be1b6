import Foundation
public import OfflineSync
public import OfflineSyncSQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `LocalStore` in an SQLCipher-encrypted database file.
///
/// ```swift
/// let store = try SQLCipherStore(path: "/var/lib/app/data.sqlcipher", key: .raw(keyBytes))
/// try store.open(schema: schema)
/// ```
///
/// It is `SQLiteStore`'s engine (same SQL, same semantics, same storage rules) calling SQLCipher
/// through ``SQLCipherLibrary``, which is loaded at run time so that both stores work in one
/// process. Every open proves the encryption before the store is usable:
/// 1. the connection is keyed (`sqlite3_key`) and the key bytes are released;
/// 2. `PRAGMA cipher_version` must answer (the library really is SQLCipher);
/// 3. the first read must succeed, else ``SQLCipherError/Code/wrongKey`` ("wrong key or not an
///    encrypted OfflineSync store") instead of SQLite's "file is not a database";
/// 4. after the schema is written, the file must not start with the plaintext header
///    `SQLite format 3`.
/// If any check fails the store stays closed.
public final class SQLCipherStore: LocalStore, SQLEngineStore {
    package let engine: SQLTableStore
    private let keys: KeySource
    /// The SQLCipher library this store calls.
    public let library: SQLCipherLibrary

    /// Creates a closed store for the encrypted file at `path` with a fixed key.
    ///
    /// The store keeps the key (in memory that is zeroed when the store is released) so that it
    /// can be reopened; use ``init(path:options:libraryPath:keyProvider:)`` to hold it only
    /// while opening. Throws ``SQLCipherError/Code/libraryUnavailable`` when SQLCipher cannot be
    /// loaded from `libraryPath`.
    public convenience init(
        path: String, key: SQLCipherKey, options: SQLStoreOptions = SQLStoreOptions(),
        libraryPath: String = SQLCipherLibrary.defaultPath
    ) throws {
        try self.init(path: path, options: options, libraryPath: libraryPath, keySource: KeySource(fixed: key))
    }

    /// Creates a closed store that asks `keyProvider` for the key at every open (from a key file,
    /// a keychain, an environment variable …) and drops it right after keying the connection.
    public convenience init(
        path: String, options: SQLStoreOptions = SQLStoreOptions(),
        libraryPath: String = SQLCipherLibrary.defaultPath,
        keyProvider: @escaping @Sendable () throws -> SQLCipherKey
    ) throws {
        try self.init(
            path: path, options: options, libraryPath: libraryPath, keySource: KeySource(provider: keyProvider))
    }

    private init(path: String, options: SQLStoreOptions, libraryPath: String, keySource: KeySource) throws {
        let library = try SQLCipherLibrary.load(path: libraryPath)
        self.library = library
        keys = keySource
        let backend = SQLTableStore.Backend(
            name: "sqlcipher", api: library.api,
            didOpen: { connection in
                try library.applyKey(try keySource.current(), to: connection.handle)
                try SQLCipherStore.verifyKey(on: connection, library: library)
            },
            didInstall: { connection in try SQLCipherStore.verifyEncryptedHeader(of: connection) },
            properties: {
                [
                    StoreInfo.Property("SQLCipher version", library.cipherVersion),
                    StoreInfo.Property("library", library.path),
                ]
            })
        engine = SQLTableStore(path: path, options: options, backend: backend)
    }

    /// The database file.
    public var path: String { engine.path }

    /// Opens the store, running the checks listed on the type.
    ///
    /// Two processes may create the same new file at once. SQLCipher keys a connection to an
    /// empty file with a fresh random salt and reads the salt from the file otherwise, so the
    /// process that keys the empty file second could not read the first page the other one
    /// wrote ("wrong key"). Creating a store is therefore serialised between processes: while the
    /// file is missing or empty, the open holds an exclusive `flock` on the file's directory (a
    /// directory lock leaves SQLite's own `fcntl` locks on the file alone), and the second
    /// process keys the file once the first one has written it.
    public func open(schema: StoreSchema) throws {
        guard SQLCipherStore.isMissingOrEmpty(path) else { return try engine.open(schema: schema) }
        let lock = DirectoryLock(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        defer { lock?.release() }
        try engine.open(schema: schema)
    }

    private static func isMissingOrEmpty(_ path: String) -> Bool {
        let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        return size == nil || size == 0
    }

    /// The version of the SQLite inside SQLCipher, e.g. `3.15.2`.
    public var sqliteVersion: String { library.sqliteVersion }

    /// Re-encrypts the open store with `newKey` (`sqlite3_rekey`). A store with a fixed key
    /// remembers the new key for later opens; with a key provider, make the provider answer the
    /// new key before the next open.
    public func rekey(to newKey: SQLCipherKey) throws {
        try newKey.validate()
        let library = library
        let keys = keys
        try engine.withConnection { connection in
            // SQLCipher 3 cannot rekey a database in WAL mode; it leaves WAL for the rekey.
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _ = try connection.singleText("PRAGMA journal_mode = DELETE")
            let code = newKey.withBytes { library.rekey(connection.handle, $0, $1) }
            _ = try connection.singleText("PRAGMA journal_mode = WAL")
            guard code == 0 else {
                throw connection.error(code: code, context: "changing the key of '\(connection.path)'")
            }
            // Before any read can open a read connection with the old key.
            keys.replace(with: newKey)
        }
    }

    /// Writes a plaintext copy of the open store to a new file at `plaintextPath` (SQLCipher's
    /// `sqlcipher_export`); `SQLiteStore` opens the copy.
    public func exportPlaintext(to plaintextPath: String) throws {
        try SQLCipherStore.requireAbsent(plaintextPath)
        try engine.withConnection { connection in
            try SQLCipherStore.export(from: connection, to: plaintextPath, key: nil)
        }
    }

    /// Writes an encrypted copy of the plaintext SQLite store at `plaintextPath` (closed) to a new
    /// file at `encryptedPath`, keyed with `key`; open it with an `SQLCipherStore` and that key.
    public static func importPlaintext(
        from plaintextPath: String, to encryptedPath: String, key: SQLCipherKey,
        libraryPath: String = SQLCipherLibrary.defaultPath
    ) throws {
        try key.validate()
        try requireAbsent(encryptedPath)
        guard FileManager.default.fileExists(atPath: plaintextPath) else {
            throw SQLCipherError(.sourceMissing, "there is no plaintext store at '\(plaintextPath)' to import")
        }
        try DatabaseFileCheck.check(path: plaintextPath, backend: "sqlite")
        let library = try SQLCipherLibrary.load(path: libraryPath)
        let connection = try Connection(api: library.api, path: plaintextPath, publishesArguments: false)
        defer { connection.close() }
        _ = try connection.singleText("SELECT count(*) FROM sqlite_master")
        try export(from: connection, to: encryptedPath, key: key)
    }

    /// Attaches `target` (keyed with `key`, or plaintext) and copies every table of `main` into it.
    private static func export(from connection: Connection, to target: String, key: SQLCipherKey?) throws {
        let attach = try connection.prepare("ATTACH DATABASE ?1 AS export_target KEY ?2")
        try attach.bind(.string(target), at: 1)
        if let key {
            try key.withBytes { bytes, count in try attach.bindKey(bytes, count, at: 2) }
        } else {
            try attach.bind(.string(""), at: 2)
        }
        _ = try attach.step()
        attach.clearBindings()
        do {
            _ = try connection.singleText("SELECT sqlcipher_export('export_target')")
            try connection.execute("DETACH DATABASE export_target")
        } catch {
            _ = try? connection.execute("DETACH DATABASE export_target")
            throw error
        }
        if key != nil {
            try verifyHeader(atPath: target)
        }
    }

    private static func requireAbsent(_ path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw SQLCipherError(
                .targetExists,
                "'\(path)' already exists; export and import write a new file, so remove it or choose another path")
        }
    }

    /// Steps 2 and 3 of the open checks.
    static func verifyKey(on connection: Connection, library: SQLCipherLibrary) throws {
        guard let version = try connection.singleText("PRAGMA cipher_version"), !version.isEmpty else {
            throw SQLCipherError(
                .notSQLCipher,
                "'\(library.path)' answered no PRAGMA cipher_version on '\(connection.path)', so the file would not be encrypted; refusing to open it"
            )
        }
        do {
            _ = try connection.singleText("SELECT count(*) FROM sqlite_master")
        } catch let error as SQLiteError where error.code == .notADatabase {
            throw SQLCipherError(
                .wrongKey,
                "wrong key or not an encrypted OfflineSync store: '\(connection.path)' cannot be read with this key; check the key, or, if the file is damaged, restore it from a backup or delete it and pull the data again"
            )
        }
    }

    /// Step 4 of the open checks, reading the file through the connection's own file handle
    /// (see `Connection.fileHeader(count:)`). In WAL mode a new file's first
    /// page may still be in the WAL: only then is it checkpointed first, so that an existing
    /// store opens (read-only work) on a full disk, where a checkpoint could not write.
    static func verifyEncryptedHeader(of connection: Connection) throws {
        if connection.fileHeader(count: plaintextHeader.count) == nil {
            try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        }
        guard let header = connection.fileHeader(count: plaintextHeader.count) else {
            throw SQLCipherError(
                .notEncrypted, "'\(connection.path)' cannot be read back to check that it is encrypted")
        }
        if Data(header) == plaintextHeader {
            throw SQLCipherError(
                .notEncrypted,
                "'\(connection.path)' starts with the plaintext SQLite header, so it is not encrypted; refusing to use it as an encrypted store"
            )
        }
    }

    private static let plaintextHeader = Data("SQLite format 3\u{0}".utf8)

    private static func header(atPath path: String) throws -> Data {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw SQLCipherError(.notEncrypted, "'\(path)' cannot be read back to check that it is encrypted")
        }
        defer { try? file.close() }
        return (try? file.read(upToCount: plaintextHeader.count)) ?? Data()
    }

    /// Checks the header of a file that no connection of this process has open (the detached
    /// export target): reading it through a new descriptor is safe only then.
    private static func verifyHeader(atPath path: String) throws {
        if try header(atPath: path) == plaintextHeader {
            throw SQLCipherError(
                .notEncrypted,
                "'\(path)' starts with the plaintext SQLite header, so it is not encrypted; refusing to use it as an encrypted store"
            )
        }
    }
}

/// An exclusive `flock` on a directory, held from creation until ``release()``.
private struct DirectoryLock {
    let descriptor: Int32

    /// Waits for the lock; `nil` when the directory cannot be opened (nothing to serialise on).
    init?(_ path: String) {
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Where an ``SQLCipherStore`` gets its key at each open.
final class KeySource: Sendable {
    private enum Source {
        case fixed(SQLCipherKey)
        case provider(@Sendable () throws -> SQLCipherKey)
    }

    private let source: Locked<Source>

    init(fixed key: SQLCipherKey) {
        source = Locked(.fixed(key))
    }

    init(provider: @escaping @Sendable () throws -> SQLCipherKey) {
        source = Locked(.provider(provider))
    }

    func current() throws -> SQLCipherKey {
        switch source.withLock({ $0 }) {
        case .fixed(let key): return key
        case .provider(let provider): return try provider()
        }
    }

    /// After a rekey: a fixed key is replaced; a provider is the caller's to update.
    func replace(with key: SQLCipherKey) {
        source.withLock { source in
            if case .fixed = source { source = .fixed(key) }
        }
    }
}
