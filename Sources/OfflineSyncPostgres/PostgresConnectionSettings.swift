public import OfflineSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// Where a ``PostgresStore`` connects and which PostgreSQL schema holds its tables:
/// `postgres://USER@HOST:PORT/DATABASE?schema=NAME`.
///
/// The password is never part of the settings: libpq reads `PGPASSWORD` or `~/.pgpass` itself,
/// and ``passwordEnvironmentVariable`` names another variable to read it from. A URL with a
/// password in it (`user:secret@host`) is refused without repeating it. ``description`` is safe to
/// log. Parts left out fall back to libpq's defaults (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
/// the local socket, the operating-system user name).
public struct PostgresConnectionSettings: Sendable, Hashable, CustomStringConvertible {
    /// The host name, IP address, or socket directory (starting with `/`); `nil` for libpq's default.
    public var host: String?
    /// The port; `nil` for libpq's default (5432).
    public var port: Int?
    /// The user; `nil` for libpq's default.
    public var user: String?
    /// The database; `nil` for libpq's default (the user name).
    public var database: String?
    /// The PostgreSQL schema holding the store's tables (created on first open); `public` by default.
    public var schema: String
    /// The environment variable holding the password, or `nil` for libpq's own sources.
    public var passwordEnvironmentVariable: String?
    /// libpq's `sslmode` (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`), or `nil`
    /// for its default.
    public var sslMode: String?
    /// Seconds to wait for a connection.
    public var connectTimeoutSeconds: Int

    /// The `sslmode` values libpq accepts.
    public static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// Creates settings; see the properties.
    public init(
        host: String? = nil, port: Int? = nil, user: String? = nil, database: String? = nil,
        schema: String = "public", passwordEnvironmentVariable: String? = nil, sslMode: String? = nil,
        connectTimeoutSeconds: Int = 10
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.schema = schema
        self.passwordEnvironmentVariable = passwordEnvironmentVariable
        self.sslMode = sslMode
        self.connectTimeoutSeconds = connectTimeoutSeconds
    }

    /// Reads a `postgres:` configuration: the path is `[USER@]HOST[:PORT]/DATABASE` (after `//`),
    /// the options `schema`, `password-env`, `sslmode` and `connect-timeout`. Throws
    /// `OfflineSyncError.Code.configuration` naming what is wrong.
    public init(_ configuration: StoreConfiguration) throws {
        self.init()
        var rest = configuration.path ?? ""
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            if userInfo.contains(":") {
                throw OfflineSyncError(
                    .configuration,
                    "the postgres: store URL carries a password after the user name; store URLs end up in logs and shell history, so remove it and set PGPASSWORD, write password-env=VAR, or use ~/.pgpass"
                )
            }
            user = userInfo.isEmpty ? nil : String(userInfo)
            rest = String(rest[rest.index(after: at)...])
        }
        let hostPort: Substring
        if rest.hasPrefix("/") {
            // A socket directory: the database is the last path component.
            let slash = rest.lastIndex(of: "/")!
            hostPort = rest[..<slash]
            database = String(rest[rest.index(after: slash)...])
        } else if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            database = String(rest[rest.index(after: slash)...])
        } else {
            hostPort = Substring(rest)
        }
        if database?.isEmpty == true { database = nil }
        if let database, database.contains("/") {
            throw OfflineSyncError(
                .configuration,
                "the postgres: store URL names the database '\(database.prefix(63))', which contains '/'; write postgres://USER@HOST:PORT/DATABASE?schema=NAME"
            )
        }
        var hostText = hostPort
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            hostText = hostPort[hostPort.index(after: close)...]
            if !hostText.isEmpty, !hostText.hasPrefix(":") {
                throw OfflineSyncError(
                    .configuration, "the postgres: store URL has text after the IPv6 address ']'; write [ADDRESS]:PORT")
            }
            if hostText.hasPrefix(":") { try readPort(hostText.dropFirst()) }
        } else if !hostPort.hasPrefix("/"), let colon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<colon])
            try readPort(hostPort[hostPort.index(after: colon)...])
        } else {
            host = String(hostPort)
        }
        if host?.isEmpty == true { host = nil }
        for option in configuration.options {
            switch option.name {
            case "schema":
                schema = option.value
            case "password-env":
                guard !option.value.isEmpty else {
                    throw OfflineSyncError(
                        .configuration, "password-env= is empty; name the environment variable holding the password")
                }
                passwordEnvironmentVariable = option.value
            case "sslmode":
                sslMode = option.value
            case "connect-timeout":
                guard let seconds = Int(option.value), seconds > 0 else {
                    throw OfflineSyncError(
                        .configuration,
                        "connect-timeout='\(option.value.prefix(20))' is not a positive number of seconds")
                }
                connectTimeoutSeconds = seconds
            default:
                break
            }
        }
        try validate()
    }

    private mutating func readPort(_ text: Substring) throws {
        guard let number = Int(text), (1...65_535).contains(number) else {
            throw OfflineSyncError(
                .configuration, "the postgres: store URL's port '\(text.prefix(20))' is not a number from 1 to 65535")
        }
        port = number
    }

    /// Throws unless the schema name is usable (OfflineSync's identifier grammar, at most 63
    /// characters, not `pg_…`) and the SSL mode is one libpq knows.
    public func validate() throws {
        do {
            try Identifier.validate(schema, kind: "schema")
        } catch let error as OfflineSyncError {
            throw OfflineSyncError(.configuration, "the postgres: store's \(error.message)")
        }
        guard schema.utf8.count <= PostgresTableLayout.maximumNameLength else {
            throw OfflineSyncError(
                .configuration,
                "the postgres: store's schema name '\(schema.prefix(40))…' is \(schema.utf8.count) characters long; PostgreSQL's limit is 63"
            )
        }
        guard !schema.lowercased().hasPrefix("pg_") else {
            throw OfflineSyncError(
                .configuration,
                "the postgres: store's schema name '\(schema)' starts with 'pg_', which PostgreSQL reserves; choose another name"
            )
        }
        if let sslMode, !PostgresConnectionSettings.sslModes.contains(sslMode) {
            throw OfflineSyncError(
                .configuration,
                "sslmode='\(sslMode.prefix(20))' is not a libpq SSL mode; use one of \(PostgresConnectionSettings.sslModes.joined(separator: ", "))"
            )
        }
    }

    /// libpq's keyword/value connection parameters, the password read from
    /// ``passwordEnvironmentVariable`` when one is named.
    package func connectionParameters() throws -> [(String, String)] {
        var parameters: [(String, String)] = []
        if let host { parameters.append(("host", host)) }
        if let port { parameters.append(("port", String(port))) }
        if let user { parameters.append(("user", user)) }
        if let database { parameters.append(("dbname", database)) }
        if let sslMode { parameters.append(("sslmode", sslMode)) }
        if let variable = passwordEnvironmentVariable {
            guard let password = getenv(variable) else {
                throw OfflineSyncError(
                    .configuration,
                    "the environment variable \(variable) named by password-env is not set; export it with the PostgreSQL password"
                )
            }
            parameters.append(("password", String(cString: password)))
        }
        parameters.append(("connect_timeout", String(connectTimeoutSeconds)))
        parameters.append(("application_name", "offline-sync"))
        parameters.append(("client_encoding", "UTF8"))
        parameters.append(("options", "-c standard_conforming_strings=on"))
        return parameters
    }

    /// `postgres://USER@HOST:PORT/DATABASE?schema=NAME` (never a password).
    public var description: String {
        var text = "postgres://"
        if let user { text += user + "@" }
        if let host { text += host.contains(":") ? "[\(host)]" : host }
        if let port { text += ":\(port)" }
        text += "/" + (database ?? "")
        var options = ["schema=\(schema)"]
        if let passwordEnvironmentVariable { options.append("password-env=\(passwordEnvironmentVariable)") }
        if let sslMode { options.append("sslmode=\(sslMode)") }
        return text + "?" + options.joined(separator: "&")
    }
}
