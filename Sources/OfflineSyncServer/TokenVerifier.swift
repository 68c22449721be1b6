public import Foundation
package import JWTKit
import OfflineSync

/// Checks the JSON Web Tokens (JWT) that clients send, with jwt-kit: the signature (HS256 with a
/// shared secret, or RS256/ES256 with a public key or a JWKS), then the claims `exp`
/// (required), `nbf`, `iss`, `aud` and `sub` (required: it names the user).
///
/// The token's header must name an algorithm the configured key is for (`alg: none` or an HS256
/// token against a public key are refused before any signature check). Times are compared with
/// a clock-skew allowance (``Options/clockSkew``, 60 s by default) in the token's favour.
///
/// ```swift
/// let verifier = try await TokenVerifier.hmac(secret: Array(secret.utf8), options: .init(audience: "todo-app"))
/// switch await verifier.verify(token) {
/// case .success(let user): print(user.subject)
/// case .failure(let failure): print(failure.message)  // never contains the token
/// }
/// ```
public final class TokenVerifier: Sendable {
    /// The claims a token must carry besides a valid signature.
    public struct Options: Sendable, Hashable {
        /// The `iss` a token must name; `nil` accepts any issuer.
        public var issuer: String?
        /// The audience a token's `aud` must include; `nil` accepts any audience.
        public var audience: String?
        /// How far the server's clock may be behind or ahead of the issuer's: a token is
        /// accepted this long after its `exp` and this long before its `nbf`. Default 60 s.
        public var clockSkew: Duration

        /// Creates options.
        public init(issuer: String? = nil, audience: String? = nil, clockSkew: Duration = .seconds(60)) {
            self.issuer = issuer
            self.audience = audience
            self.clockSkew = clockSkew
        }
    }

    /// The fewest bytes an HS256 secret may have (RFC 7518 §3.2: at least the hash's size).
    public static let minimumSecretBytes = 32

    /// The options.
    public let options: Options
    /// The `alg` header values accepted (those of the configured keys).
    public let algorithms: Set<String>
    private let keys: JWTKeyCollection
    private let iteratesKeys: Bool

    private init(keys: JWTKeyCollection, algorithms: Set<String>, iteratesKeys: Bool, options: Options) {
        self.keys = keys
        self.algorithms = algorithms
        self.iteratesKeys = iteratesKeys
        self.options = options
    }

    /// A verifier of HS256 tokens signed with `secret` (at least ``minimumSecretBytes`` bytes).
    public static func hmac(secret: [UInt8], options: Options = Options()) async throws -> TokenVerifier {
        guard secret.count >= minimumSecretBytes else {
            throw OfflineSyncError(
                .configuration,
                "the HS256 secret has \(secret.count) bytes; it needs at least \(minimumSecretBytes) (make one with 'openssl rand -base64 48')"
            )
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return TokenVerifier(keys: keys, algorithms: ["HS256"], iteratesKeys: false, options: options)
    }

    /// A verifier of RS256 or ES256 tokens: `text` is a PEM public key (RSA, or EC P-256), a PEM
    /// certificate holding one, or a JWKS (`{"keys": [...]}`, as identity providers publish).
    public static func publicKey(_ text: String, options: Options = Options()) async throws -> TokenVerifier {
        let keys = JWTKeyCollection()
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            let jwks: JWKS
            do {
                jwks = try JSONDecoder().decode(JWKS.self, from: Data(trimmed.utf8))
            } catch {
                throw OfflineSyncError(
                    .configuration,
                    "the key file is JSON but not a JWKS ({\"keys\": [{\"kty\": ..., \"kid\": ...}]}): \(Self.describe(error))"
                )
            }
            guard !jwks.keys.isEmpty else { throw OfflineSyncError(.configuration, "the JWKS has no keys") }
            do {
                for key in jwks.keys { try await keys.add(jwk: key) }
            } catch {
                throw OfflineSyncError(.configuration, "a key of the JWKS cannot be used: \(error)")
            }
            let algorithms: Set<String> = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512"]
            return TokenVerifier(keys: keys, algorithms: algorithms, iteratesKeys: true, options: options)
        }
        guard trimmed.hasPrefix("-----BEGIN") else {
            throw OfflineSyncError(
                .configuration,
                "the key file is neither a PEM public key ('-----BEGIN PUBLIC KEY-----') nor a JWKS ({\"keys\": [...]})"
            )
        }
        if trimmed.contains("PRIVATE KEY") {
            throw OfflineSyncError(
                .configuration,
                "the key file holds a private key; give the server the public key only ('openssl pkey -in key.pem -pubout')"
            )
        }
        let isCertificate = trimmed.contains("BEGIN CERTIFICATE")
        if let rsa = try?
            (isCertificate
            ? Insecure.RSA.PublicKey(certificatePEM: trimmed) : Insecure.RSA.PublicKey(pem: trimmed))
        {
            await keys.add(rsa: rsa, digestAlgorithm: .sha256)
            return TokenVerifier(keys: keys, algorithms: ["RS256"], iteratesKeys: false, options: options)
        }
        if let ecdsa = try? (isCertificate ? ES256PublicKey(certificate: trimmed) : ES256PublicKey(pem: trimmed)) {
            await keys.add(ecdsa: ecdsa)
            return TokenVerifier(keys: keys, algorithms: ["ES256"], iteratesKeys: false, options: options)
        }
        throw OfflineSyncError(
            .configuration,
            "the PEM key is neither an RSA public key (2048 bits or more) nor an EC P-256 public key; RS256 and ES256 are supported"
        )
    }

    /// Checks `token` (the compact JWT, without `Bearer `) at the time `now`. The failure's
    /// message says what was wrong and never contains the token.
    public func verify(_ token: String, now: Date = Date()) async -> Result<AuthenticatedUser, AuthenticationFailure> {
        do {
            return .success(try await checked(token, now: now))
        } catch let failure as AuthenticationFailure {
            return .failure(failure)
        } catch {
            return .failure(AuthenticationFailure(.invalid, "the token could not be verified"))
        }
    }

    private func checked(_ token: String, now: Date) async throws -> AuthenticatedUser {
        guard token.utf8.count <= 16 * 1024 else {
            throw AuthenticationFailure(.malformed, "the token is longer than 16 KiB")
        }
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(Array(token.utf8), as: TokenClaims.self).header
        } catch {
            throw AuthenticationFailure(
                .malformed,
                Self.claimFault(token)
                    ?? "the token is not a JWT (three base64url parts: header, claims, signature, with JSON claims)")
        }
        guard let algorithm = header.alg, algorithms.contains(algorithm) else {
            let named = header.alg.map { "'\($0.prefix(20))'" } ?? "no algorithm"
            throw AuthenticationFailure(
                .badSignature,
                "the token names \(named); this server accepts \(algorithms.sorted().joined(separator: ", ")) tokens")
        }
        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self, iteratingKeys: iteratesKeys)
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed:
                throw AuthenticationFailure(
                    .badSignature, "the token's signature is not valid (forged, or signed with another key)")
            case .unknownKID, .noKeyProvided, .missingKIDHeader:
                throw AuthenticationFailure(.badSignature, "the token is signed with a key this server does not know")
            case .malformedToken:
                throw AuthenticationFailure(.malformed, "the token's claims could not be read")
            default:
                throw AuthenticationFailure(.badSignature, "the token's signature could not be verified")
            }
        } catch {
            throw AuthenticationFailure(.badSignature, "the token's signature could not be verified")
        }
        let skew = Double(options.clockSkew.components.seconds)
        guard let expiry = claims.exp?.value else {
            throw AuthenticationFailure(
                .invalid, "the token has no expiry time (exp); the server accepts only tokens that expire")
        }
        guard now.timeIntervalSince(expiry) < skew else {
            throw AuthenticationFailure(
                .expired,
                "the token expired at \(Self.format(expiry)) (server time \(Self.format(now))); get a new token")
        }
        if let notBefore = claims.nbf?.value, notBefore.timeIntervalSince(now) > skew {
            throw AuthenticationFailure(
                .notYetValid,
                "the token is not valid before \(Self.format(notBefore)) (server time \(Self.format(now)))")
        }
        if let issuer = options.issuer, claims.iss?.value != issuer {
            throw AuthenticationFailure(
                .wrongIssuer,
                "the token's issuer (iss) \(claims.iss.map { "'\($0.value.prefix(100))'" } ?? "is missing and") is not '\(issuer)', the one this server accepts"
            )
        }
        if let audience = options.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw AuthenticationFailure(
                .wrongAudience, "the token is not for this server: its audience (aud) does not include '\(audience)'")
        }
        guard let subject = claims.sub?.value, !subject.isEmpty else {
            throw AuthenticationFailure(.invalid, "the token has no subject (sub) naming the user")
        }
        guard subject.utf8.count <= 256 else {
            throw AuthenticationFailure(.invalid, "the token's subject (sub) is longer than 256 bytes")
        }
        return AuthenticatedUser(subject: subject)
    }

    /// What is wrong with a registered claim of a token whose claims are JSON but do not parse
    /// (`"exp": "tomorrow"`, `"sub": 5`); `nil` for any other fault. Names the claim, never its
    /// value.
    private static func claimFault(_ token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let claims = Data(base64Encoded: base64) else { return nil }
        do {
            _ = try DefaultJWTParser().jsonDecoder.decode(TokenClaims.self, from: claims)
            return nil
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            switch context.codingPath.first?.stringValue {
            case "exp": return "the token's exp claim must be a number (seconds since 1970)"
            case "nbf": return "the token's nbf claim must be a number (seconds since 1970)"
            case "sub": return "the token's sub claim must be a string"
            case "iss": return "the token's iss claim must be a string"
            case "aud": return "the token's aud claim must be a string or an array of strings"
            default: return nil
            }
        } catch {
            return nil
        }
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, _): return "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.debugDescription
        @unknown default: return "\(error)"
        }
    }
}

/// The user a verified token names.
public struct AuthenticatedUser: Sendable, Hashable {
    /// The token's subject (`sub`), the user's id.
    public var subject: String

    /// Creates a user.
    public init(subject: String) {
        self.subject = subject
    }
}

/// Why a request's credential was refused (answered 401). Its ``message`` never contains the
/// token.
public struct AuthenticationFailure: Error, Sendable, Hashable {
    /// The kind of failure.
    public enum Reason: String, Sendable, Hashable {
        /// No token was sent.
        case missing
        /// The token is not a JWT.
        case malformed
        /// The signature is wrong, made with another key, or with an algorithm not accepted.
        case badSignature
        /// `exp` has passed.
        case expired
        /// `nbf` is still ahead.
        case notYetValid
        /// `iss` is not the configured issuer.
        case wrongIssuer
        /// `aud` does not include the configured audience.
        case wrongAudience
        /// Another fault of the claims (no `exp`, no `sub`).
        case invalid
    }

    /// The kind of failure.
    public var reason: Reason
    /// What was wrong and what to do, for the 401 answer.
    public var message: String

    /// Creates a failure.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}

/// The registered claims the server reads (the tests sign tokens with them too, any of them
/// missing or wrong).
package struct TokenClaims: JWTPayload {
    package var sub: SubjectClaim?
    package var exp: ExpirationClaim?
    package var nbf: NotBeforeClaim?
    package var iss: IssuerClaim?
    package var aud: AudienceClaim?

    /// Claims with these values; `nil` leaves a claim out.
    package init(
        sub: SubjectClaim?, exp: ExpirationClaim?, nbf: NotBeforeClaim? = nil, iss: IssuerClaim? = nil,
        aud: AudienceClaim? = nil
    ) {
        self.sub = sub
        self.exp = exp
        self.nbf = nbf
        self.iss = iss
        self.aud = aud
    }

    /// Claims are checked by ``TokenVerifier`` (with the skew allowance and clear messages).
    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}
