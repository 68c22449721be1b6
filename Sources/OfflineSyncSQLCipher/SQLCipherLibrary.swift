import OfflineSync
package import OfflineSyncSQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// The SQLCipher library, loaded at run time and called through a function table.
///
/// SQLCipher exports the same `sqlite3_*` symbols as the system SQLite that `SQLiteStore` links.
/// Linking both makes one of them win every call: with libsqlite3 first, `PRAGMA key` is
/// silently ignored and "encrypted" files are plaintext. So this module never links SQLCipher:
/// it opens the library with `dlopen` and resolves each function with `dlsym`. On Linux the flags
/// are `RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND` (DEEPBIND makes SQLCipher's internal calls bind to
/// its own functions; plain `RTLD_LOCAL` crashes); on Apple platforms `RTLD_NOW | RTLD_LOCAL`,
/// since the two-level namespace of Mach-O already binds a library's calls to its own functions.
/// Loading also proves that the library encrypts: `PRAGMA cipher_version` must answer.
public final class SQLCipherLibrary: Sendable {
    /// The library file tried when no path is given: `$OFFLINE_SYNC_SQLCIPHER_LIBRARY`, else
    /// ``platformLibraryName``.
    public static var defaultPath: String {
        getenv("OFFLINE_SYNC_SQLCIPHER_LIBRARY").map { String(cString: $0) } ?? platformLibraryName
    }

    /// The platform's usual name of the SQLCipher library, found by the dynamic linker:
    /// `libsqlcipher.so.0` on Linux (Debian's package libsqlcipher0), `libsqlcipher.dylib` on
    /// macOS (Homebrew's `sqlcipher`), and the framework of SQLCipher's Swift package
    /// (`@rpath/SQLCipher.framework/SQLCipher`) on iOS, tvOS, watchOS and visionOS.
    public static var platformLibraryName: String {
        #if os(Linux)
            "libsqlcipher.so.0"
        #elseif os(macOS)
            "libsqlcipher.dylib"
        #else
            "@rpath/SQLCipher.framework/SQLCipher"
        #endif
    }

    /// How the library is opened: its symbols stay private to it (`RTLD_LOCAL`), and on Linux its
    /// own calls bind to its own functions first (`RTLD_DEEPBIND`), not to the linked SQLite's.
    private static var openFlags: Int32 {
        #if os(Linux)
            RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND
        #else
            RTLD_NOW | RTLD_LOCAL
        #endif
    }

    /// The path the library was loaded from, as given.
    public let path: String
    /// SQLCipher's version (`PRAGMA cipher_version`), e.g. `3.4.1`.
    public let cipherVersion: String
    /// The version of the SQLite inside SQLCipher, e.g. `3.15.2`.
    public var sqliteVersion: String { api.version }

    /// The SQLite functions of this library.
    package let api: SQLiteAPI
    let key: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32
    let rekey: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32

    private static let loaded = Locked<[String: SQLCipherLibrary]>([:])

    /// The sanitizer runtime linked into this process (`AddressSanitizer`, `ThreadSanitizer`), if
    /// any, found by its entry point in the global scope (`RTLD_DEFAULT`, a null handle).
    package static let activeSanitizer: String? = {
        let runtimes = [("__asan_init", "AddressSanitizer"), ("__tsan_init", "ThreadSanitizer")]
        return runtimes.first { dlsym(nil, $0.0) != nil }?.1
    }()

    /// Loads SQLCipher from `path` once per process (later calls return the same library).
    /// Throws ``SQLCipherError/Code/libraryUnavailable`` naming the path when it cannot be loaded,
    /// and ``SQLCipherError/Code/notSQLCipher`` when the library does not encrypt.
    public static func load(path: String = defaultPath) throws -> SQLCipherLibrary {
        try loaded.withLock { libraries in
            if let library = libraries[path] { return library }
            let library = try SQLCipherLibrary(path: path)
            libraries[path] = library
            return library
        }
    }

    private init(path: String) throws {
        // AddressSanitizer and ThreadSanitizer abort the process on a dlopen with RTLD_DEEPBIND.
        #if os(Linux)
            try Self.refuseUnderSanitizer()
        #endif
        // The handle is never closed: statements and connections may use the library until exit.
        guard let handle = dlopen(path, Self.openFlags) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw SQLCipherError(
                .libraryUnavailable,
                "SQLCipher could not be loaded from '\(path)' (\(reason)); install it (Debian/Ubuntu: apt-get install libsqlcipher0; macOS: brew install sqlcipher; iOS, tvOS, watchOS, visionOS: add SQLCipher's Swift package to the app) or pass the library file's path (libraryPath, or the OFFLINE_SYNC_SQLCIPHER_LIBRARY environment variable)"
            )
        }
        func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
            guard let address = dlsym(handle, name) else {
                throw SQLCipherError(
                    .libraryUnavailable,
                    "the library '\(path)' has no function \(name); it is not a usable SQLCipher build")
            }
            return address
        }
        self.path = path
        api = try SQLiteAPI(resolving: symbol)
        key = unsafeBitCast(
            try symbol("sqlite3_key"), to: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32).self)
        rekey = unsafeBitCast(
            try symbol("sqlite3_rekey"), to: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32).self)
        let probe = try Connection(api: api, path: ":memory:", publishesArguments: false)
        defer { probe.close() }
        guard let version = try probe.singleText("PRAGMA cipher_version"), !version.isEmpty else {
            throw SQLCipherError(
                .notSQLCipher,
                "the library '\(path)' answers no PRAGMA cipher_version, so it would not encrypt; point libraryPath at the SQLCipher library"
            )
        }
        cipherVersion = version
    }

    /// Throws when a sanitizer runtime is linked: on Linux, AddressSanitizer and ThreadSanitizer
    /// abort the process on a `dlopen` with `RTLD_DEEPBIND`.
    private static func refuseUnderSanitizer() throws {
        if let sanitizer = activeSanitizer {
            throw SQLCipherError(
                .libraryUnavailable,
                "SQLCipher is not loaded in a process built with \(sanitizer): it needs dlopen with RTLD_DEEPBIND, which the sanitizer runtime does not support; use a build without the sanitizer for encrypted stores"
            )
        }
    }

    /// Keys an open, unused connection handle (`sqlite3_key`). The key bytes are not copied here.
    package func applyKey(_ key: SQLCipherKey, to handle: OpaquePointer) throws {
        try key.validate()
        let code = key.withBytes { self.key(handle, $0, $1) }
        guard code == 0 else {
            throw SQLCipherError(.wrongKey, "SQLCipher refused the key (sqlite3_key returned \(code))")
        }
    }
}
