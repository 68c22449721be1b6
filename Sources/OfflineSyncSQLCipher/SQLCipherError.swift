/// A failure specific to encryption: the SQLCipher library, the key, or the proof that a file is
/// encrypted. Storage failures of the library itself are `SQLiteError`s.
///
/// Messages name the file or library path and how to fix the problem. They never contain key
/// material.
public struct SQLCipherError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of an ``SQLCipherError``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// `libsqlcipher.so.0` could not be loaded, or lacks a needed function.
        public static let libraryUnavailable = Code("libraryUnavailable")
        /// The loaded library does not encrypt (`PRAGMA cipher_version` gave no answer).
        public static let notSQLCipher = Code("notSQLCipher")
        /// The key does not open the file, or the file is not an encrypted OfflineSync store.
        public static let wrongKey = Code("wrongKey")
        /// A file that should be encrypted starts with the plaintext SQLite header.
        public static let notEncrypted = Code("notEncrypted")
        /// The key is malformed (a raw key that is not 32 bytes, an empty passphrase).
        public static let invalidKey = Code("invalidKey")
        /// An export or import target already exists.
        public static let targetExists = Code("targetExists")
        /// The plaintext store to import does not exist.
        public static let sourceMissing = Code("sourceMissing")

        public var description: String { name }
    }

    /// The class of the error.
    public var code: Code
    /// A sentence naming what was wrong and how to fix it.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
