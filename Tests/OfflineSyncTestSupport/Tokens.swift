package import Foundation
package import JWTKit
package import OfflineSync
package import OfflineSyncHTTP
package import OfflineSyncServer
package import Synchronization

/// Tokens for the authentication tests, signed with jwt-kit (or forged by hand).
package enum Tokens {
    /// The HS256 secret of the test servers (48 bytes).
    package static let secret = Array("test-secret-0123456789-abcdefghijklmnopqrstuvwxyz".utf8)
    /// Another secret: tokens signed with it must be refused.
    package static let otherSecret = Array("other-secret-0123456789-abcdefghijklmnopqrstuvwx".utf8)

    /// The claims the server reads.
    package typealias Claims = TokenClaims

    /// Claims for `subject`, expiring `lifetime` seconds from now (negative: already expired).
    package static func claims(
        _ subject: String?, lifetime: TimeInterval = 3600, notBefore: TimeInterval? = nil, issuer: String? = nil,
        audience: String? = nil
    ) -> Claims {
        let now = Date()
        return Claims(
            sub: subject.map { SubjectClaim(value: $0) }, exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)),
            nbf: notBefore.map { NotBeforeClaim(value: now.addingTimeInterval($0)) },
            iss: issuer.map { IssuerClaim(value: $0) }, aud: audience.map { AudienceClaim(value: [$0]) })
    }

    /// An HS256 token.
    package static func hs256(_ claims: Claims, secret: [UInt8] = Tokens.secret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// An HS256 token for `subject`, valid for an hour.
    package static func hs256(_ subject: String) async throws -> String {
        try await hs256(claims(subject))
    }

    /// A token signed by `key` (ES256).
    package static func es256(_ claims: Claims, key: ES256PrivateKey, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: kid.map { JWKIdentifier(string: $0) })
        return try await keys.sign(claims, kid: kid.map { JWKIdentifier(string: $0) })
    }

    /// A token signed by the RSA key in PEM `privateKey` (RS256).
    package static func rs256(_ claims: Claims, privateKey: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: privateKey), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// `token` with its claims replaced by `claims`, the signature kept: a forgery.
    package static func forged(_ token: String, claims: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return [String(parts[0]), base64URL(Array(claims.utf8)), String(parts[2])].joined(separator: ".")
    }

    /// An unsigned token (`alg: none`).
    package static func unsigned(claims: String) -> String {
        base64URL(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + base64URL(Array(claims.utf8)) + "."
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The HS256 verifier of the test servers.
    package static func verifier(issuer: String? = nil, audience: String? = nil) async throws -> TokenVerifier {
        try await TokenVerifier.hmac(secret: secret, options: .init(issuer: issuer, audience: audience))
    }

    /// A bearer hook sending a token minted for `subject`.
    package static func bearer(_ subject: String) -> HTTPAuthentication {
        .bearer(token: { try await hs256(subject) })
    }

    /// An RSA key pair in PEM made with the `openssl` tool: (private, public).
    package static func rsaKeyPair(in directory: TemporaryDirectory) throws -> (String, String) {
        try openssl([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", directory.path("rsa.pem"),
        ])
        try openssl(["pkey", "-in", directory.path("rsa.pem"), "-pubout", "-out", directory.path("rsa.pub.pem")])
        return (
            try String(contentsOfFile: directory.path("rsa.pem"), encoding: .utf8),
            try String(contentsOfFile: directory.path("rsa.pub.pem"), encoding: .utf8)
        )
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OfflineSyncError(.configuration, "openssl \(arguments[0]) failed; install the openssl package")
        }
    }
}

/// A token source whose token the test can swap, counting the refreshes the client asks for.
package final class TokenSource: Sendable {
    private struct State {
        var token: String
        var requests = 0
        var refreshes = 0
        var expireAfter: Int?
        var expired: String?
    }

    private let state: Locked<State>
    let subject: String

    package init(subject: String) async throws {
        self.subject = subject
        state = Locked(State(token: try await Tokens.hs256(subject)))
    }

    /// From the `count`-th request on, the token is `expired` until a refresh.
    package func expire(after count: Int, with expired: String) {
        state.withLock {
            $0.expireAfter = count
            $0.expired = expired
        }
    }

    package var refreshes: Int { state.withLock { $0.refreshes } }

    package var authentication: HTTPAuthentication {
        .bearer(
            token: {
                self.state.withLock { state in
                    state.requests += 1
                    if let limit = state.expireAfter, state.requests >= limit, let expired = state.expired {
                        state.token = expired
                        state.expireAfter = nil
                    }
                    return state.token
                }
            },
            refresh: {
                let token = try await Tokens.hs256(self.subject)
                self.state.withLock {
                    $0.refreshes += 1
                    $0.token = token
                }
                return token
            })
    }
}
