import ArgumentParser
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
}
