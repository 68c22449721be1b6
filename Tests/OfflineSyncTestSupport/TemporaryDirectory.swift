package import Foundation

/// A directory under the system's temporary directory, removed with everything in it when the
/// value is released.
package final class TemporaryDirectory: Sendable {
    let url: URL

    package init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-sync-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file in the directory.
    package func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
