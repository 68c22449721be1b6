import Foundation
import OfflineSync
import Testing

@Suite("Key sources and key material")
struct KeySourceTests {
    static let rawHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

    @Test func sixtyFourHexDigitsInTheEnvironmentAreARawKey() throws {
        let variable = "OFFLINE_SYNC_TEST_RAW_\(UInt32.random(in: 0...UInt32.max))"
        setenv(variable, KeySourceTests.rawHex, 1)
        defer { unsetenv(variable) }
        let key = try KeySource.environment(variable).load()
        #expect(key.kind == .raw)
        #expect(key.bytes == Array(0..<32))
        #expect(key.rawHex == KeySourceTests.rawHex)
    }

    @Test func otherTextIsAPassphrase() throws {
        let variable = "OFFLINE_SYNC_TEST_PASS_\(UInt32.random(in: 0...UInt32.max))"
        setenv(variable, "correct horse battery staple", 1)
        defer { unsetenv(variable) }
        let key = try KeySource.environment(variable).load()
        #expect(key.kind == .passphrase)
        #expect(key.bytes == Array("correct horse battery staple".utf8))
        #expect(key.rawHex == nil)
    }

    @Test func keyFileIgnoresTheFinalNewline() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString)").path
        try Data((KeySourceTests.rawHex + "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try KeySource.file(path).load().kind == .raw)
    }

    @Test func keyFileIgnoresAByteOrderMark() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString)").path
        try Data([0xEF, 0xBB, 0xBF] + Array((KeySourceTests.rawHex + "\r\n").utf8)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let key = try KeySource.file(path).load()
        #expect(key.kind == .raw && key.bytes == Array(0..<32))
    }

    @Test("a raw key with a digit missing or extra is refused, not taken as a passphrase", arguments: [63, 65, 62])
    func almostARawKeyIsRefused(digits: Int) throws {
        let variable = "OFFLINE_SYNC_TEST_NEAR_\(UInt32.random(in: 0...UInt32.max))"
        let text = String((KeySourceTests.rawHex + "abcd").prefix(digits))
        setenv(variable, text, 1)
        defer { unsetenv(variable) }
        let error = #expect(throws: OfflineSyncError.self) { try KeySource.environment(variable).load() }
        #expect(error?.message.contains("\(digits) hex digits") == true, "\(String(describing: error))")
        #expect(error?.message.contains(text) == false, "the key is never echoed")
    }

    @Test func unsetVariableIsNamedInTheError() {
        let error = #expect(throws: OfflineSyncError.self) {
            try KeySource.environment("OFFLINE_SYNC_TEST_UNSET_VARIABLE").load()
        }
        #expect(error?.message.contains("OFFLINE_SYNC_TEST_UNSET_VARIABLE") == true)
        #expect(error?.message.contains("not set") == true)
    }

    @Test func missingKeyFileIsNamedInTheError() {
        let error = #expect(throws: OfflineSyncError.self) {
            try KeySource.file("/nonexistent/offline-sync.key").load()
        }
        #expect(error?.message.contains("/nonexistent/offline-sync.key") == true)
    }

    @Test func emptyKeyIsRefused() {
        let variable = "OFFLINE_SYNC_TEST_EMPTY_\(UInt32.random(in: 0...UInt32.max))"
        setenv(variable, "  \n", 1)
        defer { unsetenv(variable) }
        #expect(throws: OfflineSyncError.self) { try KeySource.environment(variable).load() }
    }

    @Test func printingOrDumpingAKeyNeverShowsIt() {
        let key = StoreKey(passphrase: "hunter2")
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, String(reflecting: key), "\(key)", dumped] {
            #expect(!text.contains("hunter2"), "\(text)")
            #expect(!text.contains("104"), "the bytes of the passphrase must not appear: \(text)")
        }
    }
}
