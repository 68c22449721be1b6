import ArgumentParser
import OfflineSync
import OfflineSyncHTTP

/// The check of a command-line option that names a server's base URL.
enum RemoteURLOption {
    /// Throws unless `url` begins with `http://` or `https://` (the scheme in any case, as
    /// `HTTPRemote` reads it). The message names the URL without its user part, which may hold a
    /// password.
    static func validate(_ url: String, option: String) throws {
        let scheme = url.prefix(8).lowercased()
        guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://") else {
            throw ValidationError("\(option) '\(HTTPRemote.withoutCredentials(url))' is not an http:// or https:// URL")
        }
    }

    /// The error to show instead of `error` when it says that the server at the https:// `url`
    /// did not answer TLS (a plain HTTP server on that port): one line saying so, with the
    /// http:// URL to use. `nil` for any other error.
    static func tlsMismatch(_ error: any Error, url: String) -> OfflineSyncError? {
        guard url.prefix(8).lowercased() == "https://", "\(error)".contains("the server did not answer TLS") else {
            return nil
        }
        let plain = HTTPRemote.withoutCredentials("http://" + url.dropFirst(8))
        return OfflineSyncError(
            .configuration,
            "the server at \(HTTPRemote.withoutCredentials(url)) did not answer TLS: it speaks plain HTTP on that port; did you mean \(plain)?"
        )
    }
}
