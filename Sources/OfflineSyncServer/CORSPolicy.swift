/// Which browser origins may call the server (Cross-Origin Resource Sharing), off by default.
///
/// With no allowed origin, no CORS header is ever sent, so browsers refuse cross-origin calls
/// (the preflight `OPTIONS` is still answered, with `Allow`, and nothing else). An allowed origin
/// gets `Access-Control-Allow-Origin` on every answer, `ETag` exposed to scripts, and a
/// preflight answer allowing the table protocol's methods and the headers it asked for.
public struct CORSPolicy: Sendable, Hashable {
    /// The origins allowed, e.g. `https://app.example.com`, compared exactly (case-insensitively);
    /// `*` allows every origin.
    public var allowedOrigins: [String]

    /// Creates a policy; the default allows no origin.
    public init(allowedOrigins: [String] = []) {
        self.allowedOrigins = allowedOrigins
    }

    /// How long a browser may cache a preflight answer, in seconds.
    static let preflightMaxAge = 600

    /// The origin to name in `Access-Control-Allow-Origin`, or `nil` when `origin` is not allowed.
    func allowed(_ origin: String?) -> String? {
        guard let origin, !origin.isEmpty else { return nil }
        if allowedOrigins.contains("*") { return "*" }
        return allowedOrigins.contains { $0.lowercased() == origin.lowercased() } ? origin : nil
    }

    /// The headers every answer to a request from `origin` carries.
    func headers(origin: String?) -> [(String, String)] {
        guard let allowed = allowed(origin) else { return [] }
        var headers = [("Access-Control-Allow-Origin", allowed), ("Access-Control-Expose-Headers", "ETag")]
        if allowed != "*" { headers.append(("Vary", "Origin")) }
        return headers
    }

    /// The headers of a preflight answer (besides those of ``headers(origin:)``).
    func preflightHeaders(origin: String?, requestedHeaders: String?) -> [(String, String)] {
        guard allowed(origin) != nil else { return [] }
        let standard = "Content-Type, If-Match, ZUMO-API-VERSION, X-ZUMO-FEATURES, X-ZUMO-VERSION, X-ZUMO-AUTH"
        let requested = requestedHeaders.map { Self.tokens($0) }.flatMap { $0.isEmpty ? nil : $0 }
        return [
            ("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS"),
            ("Access-Control-Allow-Headers", requested ?? standard),
            ("Access-Control-Max-Age", String(Self.preflightMaxAge)),
        ]
    }

    /// The header names of an `Access-Control-Request-Headers` value that are plain tokens
    /// (anything else is dropped rather than echoed).
    private static func tokens(_ list: String) -> String {
        list.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
            .filter { name in
                !name.isEmpty && name.count <= 64
                    && name.unicodeScalars.allSatisfy {
                        ($0.value >= 48 && $0.value <= 57) || ($0.value >= 65 && $0.value <= 90)
                            || ($0.value >= 97 && $0.value <= 122) || $0 == "-" || $0 == "_"
                    }
            }
            .joined(separator: ", ")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        return String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
