/// The headers of the table protocol that clients send and servers read, or servers send and
/// clients read, with the values both sides agree on.
package enum WireHeader {
    /// The version of the protocol a request speaks; every request carries it.
    package static let apiVersion = "ZUMO-API-VERSION"
    /// The protocol version this package speaks, sent in ``apiVersion``.
    package static let apiVersionValue = "2.0.0"
    /// The identity of the client (`X-ZUMO-VERSION`), for the server's logs.
    package static let clientVersion = "X-ZUMO-VERSION"
    /// The telemetry codes of a request (`X-ZUMO-FEATURES`), comma-separated; see ``Feature``.
    package static let features = "X-ZUMO-FEATURES"
    /// The item version an update or delete expects, as an entity tag (see ``ETag``).
    package static let ifMatch = "If-Match"
    /// The version of the item in an answer, as a strong entity tag (see ``ETag``).
    package static let etag = "ETag"

    /// `true` when a request's ``apiVersion`` value names a protocol version this package
    /// speaks: `2.0.x`, with a numeric patch version.
    package static func isSupportedAPIVersion(_ value: String) -> Bool {
        if value == "2.0.0" { return true }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "2" && parts[1] == "0" && !parts[2].isEmpty
            && parts[2].allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The codes of the `X-ZUMO-FEATURES` telemetry header, as the Azure Mobile Apps clients
    /// define them. Servers log them; none changes an answer.
    package enum Feature: String, Sendable {
        /// Table operations performed as part of offline sync (push and pull).
        case offlineSync = "OL"
        /// Table reads performed as part of an incremental pull.
        case incrementalPull = "IP"
        /// Table reads given as a query string built by the caller.
        case tableReadRaw = "TR"
        /// Requests with query parameters beyond OData (`__includeDeleted`).
        case additionalQueryParameters = "QS"
        /// Updates and deletes sent with `If-Match` (optimistic concurrency).
        case optimisticConcurrency = "OC"
    }
}
