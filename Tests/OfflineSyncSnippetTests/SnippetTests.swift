import Foundation
import Testing

/// The documents' Swift snippets are compiled by this target (Snippets/, written by
/// scripts/extract-snippets); this checks that the compiled copies are the documents' snippets
/// as they are now, so that a document edited without running the script fails here.
@Suite struct SnippetTests {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theCompiledSnippetsAreTheDocumentsSnippets() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.root.appendingPathComponent("scripts/extract-snippets").path, "--check"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
    }
}
