import Foundation
import OfflineSync
import OfflineSyncTestSupport
import OfflineSyncHTTP
import Synchronization
import Testing

/// A server that redirects ``HTTPRemote`` is not followed: a redirect would carry the credential
/// (a header other than `Authorization`, such as `X-ZUMO-AUTH`, even from https to http) and the
/// request, a write included, to another address. The 3xx answer fails naming its `Location`.
@Suite("HTTPRemote does not follow redirects")
struct RedirectTests {
    @Test(
        "a redirect to another address is not followed: no request and no credential reach it, and the error names it",
        arguments: [301, 302, 307, 308])
    func redirectsAreNotFollowed(_ status: Int) async throws {
        let elsewhere = RequestLog()
        try await withLoopbackServer({ request in
            elsewhere.append(request)
            return ScriptedResponse.emptyPage
        }) { otherPort in
            let location = "http://127.0.0.1:\(otherPort)/tables/todoitem"
            try await withLoopbackServer({ _ in ScriptedResponse(status: status, headers: [("Location", location)]) }) {
                port in
                let remote = try ScriptedServerRemote.remote(port: port)
                let read = await ScriptedServerRemote.failure {
                    _ = try await remote.readPage(Query(table: "todoitem"), includeDeleted: false)
                }
                #expect(read?.kind == .server && read?.status == status, "\(String(describing: read))")
                #expect(
                    read?.message.contains("redirected the request to '\(location)'") == true,
                    "\(String(describing: read))")
                let write = await ScriptedServerRemote.failure { _ = try await remote.insert(Item(id: "a"), into: "todoitem") }
                #expect(write?.kind == .server, "\(String(describing: write))")
                #expect("\(String(describing: read))\(String(describing: write))".contains("secret-token") == false)
                try await remote.shutdown()
            }
        }
        #expect(
            elsewhere.all.isEmpty,
            "requests followed the redirect: \(elsewhere.all.map { ($0.method, $0.header("X-ZUMO-AUTH")) })")
    }
}
