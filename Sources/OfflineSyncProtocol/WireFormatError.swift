/// A body of the table protocol that could not be read or written; the message names what was
/// wrong.
package struct WireFormatError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    package var message: String

    /// Creates an error.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
