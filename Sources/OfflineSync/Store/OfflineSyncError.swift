/// An error raised by OfflineSync's core or by a store, naming what was wrong and how to fix it.
///
/// The error is a struct wrapping a ``Code`` so that new cases can be added without breaking
/// callers that switch over them (the pattern of AsyncHTTPClient's `HTTPClientError`). The
/// ``message`` is written for a person: it names the table, column, id or option at fault.
public struct OfflineSyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of an ``OfflineSyncError``.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A table or column name breaks the identifier grammar.
        public static let invalidName = Code("invalidName")
        /// A table was used without being declared in the schema.
        public static let unknownTable = Code("unknownTable")
        /// A local write or a query named a column that the table does not declare.
        public static let unknownColumn = Code("unknownColumn")
        /// A value does not fit its column (wrong type, NaN, an id that is not a string …).
        public static let invalidValue = Code("invalidValue")
        /// A schema declaration is inconsistent (duplicate names, a changed column type …).
        public static let invalidSchema = Code("invalidSchema")
        /// A query is malformed or ill-typed (see the message for the position or operand).
        public static let invalidQuery = Code("invalidQuery")
        /// A text could not be parsed: an OData `$filter` / `$orderby` / `$select` (see
        /// ``OfflineSyncError/position``) or JSON bytes (the message names the byte offset).
        public static let syntax = Code("syntax")
        /// The store is not open, or was closed.
        public static let notOpen = Code("notOpen")
        /// A local insert used an id that already exists, or an update/delete a missing one.
        public static let conflict = Code("conflict")
        /// An operation on the queue is not allowed (for example, an update after a delete).
        public static let invalidOperation = Code("invalidOperation")
        /// The storage engine failed; the message carries the engine's own code and text.
        public static let storage = Code("storage")
        /// A configuration string or option is wrong.
        public static let configuration = Code("configuration")
        /// The feature is not available on this backend or platform.
        public static let unsupported = Code("unsupported")

        public var description: String { name }
    }

    /// The class of the error.
    public var code: Code
    /// A sentence naming what was wrong and, where possible, how to fix it.
    public var message: String
    /// For ``Code-swift.struct/syntax`` errors of ``ODataParser``: the 1-based column (character
    /// position) of the bad token in the parsed text; `nil` otherwise.
    public var position: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error that points at a column of a parsed text.
    public init(_ code: Code, _ message: String, position: Int) {
        self.code = code
        self.message = message
        self.position = position
    }

    public var description: String { message }
}
