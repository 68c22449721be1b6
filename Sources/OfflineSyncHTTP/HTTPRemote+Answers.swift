import NIOHTTP1
import OfflineSync
import OfflineSyncProtocol

/// Requests for writes, and answers read as results or ``OfflineSync/RemoteError``s (the table in
/// ``HTTPRemote``'s documentation).
extension HTTPRemote {
    /// The request of a write; an item that cannot be written as JSON fails with `.server`.
    func request(for write: RemoteWrite) throws(RemoteError) -> TableRequest {
        let version = configuration.clientVersion
        switch write.kind {
        case .insert:
            return try writable(write.item, in: write.table) {
                try TableRequest.insert(write.item, into: write.table, clientVersion: version)
            }
        case .update:
            return try writable(write.item, in: write.table) {
                try TableRequest.update(write.item, in: write.table, ifMatch: write.ifMatch, clientVersion: version)
            }
        case .delete:
            return TableRequest.delete(
                id: write.item.id, from: write.table, ifMatch: write.ifMatch, clientVersion: version)
        }
    }

    /// The server's copy in the answer to a write (`nil` after a delete), or the failure it says.
    func answer(to write: RemoteWrite, _ request: TableRequest, _ response: WireResponse) throws(RemoteError)
        -> Item?
    {
        switch write.kind {
        case .insert, .update:
            guard response.status == 200 || response.status == 201 else {
                throw failure(request, response, itemId: write.item.id)
            }
            return try serverItem(request, response)
        case .delete:
            // Any success status: a delete answers no item to read (200 and 204 are what the
            // protocol's servers send; a 201 or 202 from another server still says it deleted).
            guard (200..<300).contains(response.status) else {
                throw failure(request, response, itemId: write.item.id)
            }
            return nil
        }
    }

    /// Builds a write request; an item that cannot be written as JSON is a `.server` failure of
    /// that operation (recorded, the push goes on).
    func writable(_ item: Item, in table: String, _ build: () throws -> TableRequest) throws(RemoteError)
        -> TableRequest
    {
        do {
            return try build()
        } catch {
            throw RemoteError(.server, message: "item '\(item.id)' of '\(table)' cannot be sent: \(error)")
        }
    }

    /// The item of a successful answer, with the version from a strong `ETag` when present.
    func serverItem(_ request: TableRequest, _ response: WireResponse) throws(RemoteError) -> Item {
        var item: Item
        do {
            item = try WireJSON.decodeItem(response.body)
        } catch {
            throw unreadable(request, response, error)
        }
        if let tag = response.etag, let version = ETag.version(fromStrong: tag) {
            item[SystemProperty.version.rawValue] = .string(version)
        }
        return item
    }

    /// The error for a non-success status. `itemId`, the id of the item a write was about (empty
    /// when the server assigns it), keeps a conflict answer carrying another item from passing
    /// that item off as the server's copy, which a push handler would take or resolve against.
    func failure(_ request: TableRequest, _ response: WireResponse, itemId: String = "") -> RemoteError {
        let what = "\(request.method.rawValue) \(request.target)"
        switch response.status {
        case 409, 412:
            var item = try? WireJSON.decodeItem(response.body)
            var missing = item == nil ? "; the answer carried no readable server item" : ""
            if let other = item?.id, !itemId.isEmpty, other != itemId {
                item = nil
                missing = "; the answer carried item '\(other)', not the server's copy of '\(itemId)'"
            }
            let reason =
                response.status == 412
                ? "the server's version differs from If-Match" : "the item already exists on the server"
            return RemoteError(
                .conflict, status: response.status, serverItem: item, message: "\(what): conflict, \(reason)\(missing)")
        case 401:
            return RemoteError(
                .authentication, status: 401,
                message:
                    "\(what): the server refused the credentials\(response.summary.map { " (\($0))" } ?? ""); sign in again"
            )
        case 404:
            return RemoteError(
                .notFound, status: 404, message: "\(what): the item or table does not exist on the server")
        case 301, 302, 303, 307, 308:
            let location = response.headers.first(name: "Location").map {
                " to '\(HTTPRemote.withoutCredentials($0))'"
            }
            return RemoteError(
                .server, status: response.status,
                message:
                    "\(what): the server redirected the request\(location ?? " without a Location"); redirects are not followed, since they would carry the request and its credential elsewhere: set the base URL to the address the table service answers at"
            )
        case 200..<300:
            // A success status the protocol does not answer this request with (an insert or update
            // answered 202 or 204, without the item): a write may well have been applied.
            let consequence =
                request.method == .get
                ? "a read is answered 200 with JSON"
                : "a write is answered 200 or 201 with the item; the write may have been applied, so check the server's copy before sending it again"
            return RemoteError(
                .server, status: response.status,
                message:
                    "\(what): the server answered \(response.status), a success status the table protocol does not use here (\(consequence))"
            )
        default:
            let retry = response.headers.first(name: "Retry-After").map { "; it asks to be retried after '\($0)'" }
            return RemoteError(
                .server, status: response.status,
                message: "\(what) failed\(response.summary.map { ": \($0)" } ?? "")\(retry ?? "")",
                retryAfter: Self.retryAfter(response))
        }
    }

    /// The error for a success status whose body is not what the protocol promises.
    func unreadable(_ request: TableRequest, _ response: WireResponse, _ error: WireFormatError) -> RemoteError {
        let what = "\(request.method.rawValue) \(request.target)"
        if response.isHTML {
            return RemoteError(
                .server, status: response.status,
                message:
                    "\(what): the server answered with an HTML page\(response.summary.map { " (\($0))" } ?? "") instead of JSON; check that the base URL points at an Azure Mobile Apps back end"
            )
        }
        return RemoteError(
            .server, status: response.status, message: "\(what): the answer could not be read: \(error.message)")
    }
}
