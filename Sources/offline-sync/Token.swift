import ArgumentParser
import Foundation
import JWTKit
import OfflineSync
import OfflineSyncServer

/// `offline-sync token`: mints an HS256 test token for `serve --auth-secret-env` or
/// `--auth-secret-file`, so a person can try an authenticated server with curl.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint an HS256 test token (JWT) for a server started with --auth-secret-env or --auth-secret-file.",
        discussion: """
            The token is printed on standard output; the secret is read from the environment variable \
            or file (never from the command line) and is never printed. Use the same secret, issuer and \
            audience as the server.

            Examples:
              export AUTH_SECRET=$(openssl rand -base64 48)
              TOKEN=$(offline-sync token --secret-env AUTH_SECRET --subject alice \\
                --expires-in 1h)
              curl -H "Authorization: Bearer $TOKEN" -H 'ZUMO-API-VERSION: 2.0.0' \\
                http://127.0.0.1:8080/tables/todoitem
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The environment variable holding the HS256 secret.", valueName: "VAR"))
    var secretEnv: String?

    @Option(help: ArgumentHelp("A file holding the HS256 secret (surrounding whitespace ignored).", valueName: "path"))
    var secretFile: String?

    @Option(help: ArgumentHelp("The user the token names (its sub claim).", valueName: "id"))
    var subject: String

    @Option(help: ArgumentHelp("How long the token is valid: 90s, 30m, 1h, 7d.", valueName: "duration"))
    var expiresIn = "1h"

    @Option(help: ArgumentHelp("The issuer (iss claim), for a server started with --auth-issuer.", valueName: "issuer"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "The audience (aud claim), for a server started with --auth-audience.", valueName: "audience"))
    var audience: String?

    func validate() throws {
        guard (secretEnv == nil) != (secretFile == nil) else {
            throw ValidationError("give the secret with one of --secret-env VAR and --secret-file PATH")
        }
        guard !subject.isEmpty, subject.utf8.count <= 256 else {
            throw ValidationError("--subject must be 1 to 256 bytes")
        }
        _ = try Self.seconds(expiresIn)
    }

    func run() async throws {
        _ = global.start("token")
        let secret = try secretEnv.map { try Serve.secret(environment: $0) } ?? Serve.secret(file: secretFile ?? "")
        guard secret.count >= TokenVerifier.minimumSecretBytes else {
            throw OfflineSyncError(
                .configuration,
                "the secret has \(secret.count) bytes; HS256 needs at least \(TokenVerifier.minimumSecretBytes) (make one with 'openssl rand -base64 48')"
            )
        }
        let token = try await TestToken.hs256(
            secret: secret, subject: subject, lifetime: try Self.seconds(expiresIn), issuer: issuer, audience: audience)
        var output = StandardOutput()
        output.write(token + "\n")
        output.flush()
    }

    /// The seconds of a duration written `90s`, `30m`, `1h`, `7d` or as plain seconds.
    static func seconds(_ text: String) throws -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let unit = trimmed.last.flatMap { units[$0] }
        let number = unit == nil ? trimmed : String(trimmed.dropLast())
        guard let value = Int(number), value > 0, value <= 366 * 86400 / (unit ?? 1) else {
            throw ValidationError(
                "--expires-in '\(text)' is not a duration from 1s to 366d; write it like 90s, 30m, 1h or 7d")
        }
        return value * (unit ?? 1)
    }
}

/// Signs HS256 tokens (with jwt-kit) carrying the claims `serve` checks.
enum TestToken {
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var iss: IssuerClaim?
        var aud: AudienceClaim?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A token for `subject`, valid for `lifetime` seconds from `now`.
    static func hs256(
        secret: [UInt8], subject: String, lifetime: Int, issuer: String? = nil, audience: String? = nil,
        now: Date = Date()
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let claims = Claims(
            sub: SubjectClaim(value: subject), iat: IssuedAtClaim(value: now),
            exp: ExpirationClaim(value: now.addingTimeInterval(TimeInterval(lifetime))),
            iss: issuer.map { IssuerClaim(value: $0) }, aud: audience.map { AudienceClaim(value: [$0]) })
        return try await keys.sign(claims)
    }
}
