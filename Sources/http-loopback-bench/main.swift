import Foundation
import OfflineSync
import OfflineSyncSQLite
import OfflineSyncServer

// Measures sync over loopback HTTP: a full pull and a push, with an SQLite server store and an
// SQLite or in-memory client store. Usage:
//   swift run -c release http-loopback-bench [records=100000] [operations=10000] [pageSize=1000] [pipelineDepth=32]
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let records = arguments.count > 0 ? arguments[0] : 100_000
let operations = arguments.count > 1 ? arguments[1] : 10_000
let pageSize = arguments.count > 2 ? arguments[2] : 1000
let depth = arguments.count > 3 ? arguments[3] : 32

let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "http-loopback-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
func sqlite(_ name: String) -> SQLiteStore {
    SQLiteStore(path: directory.appendingPathComponent(name + ".sqlite").path)
}

for client in ["memory", "sqlite"] {
    func clientStore(_ name: String) -> any LocalStore { client == "memory" ? InMemoryStore() : sqlite(name) }
    let pull = try await LoopbackBenchmark.pull(
        records: records, pageSize: pageSize,
        serverStore: sqlite("pull-server-\(client)"), clientStore: clientStore("pull-client"))
    print("pull  client=\(client) server=sqlite page=\(pageSize): \(pull)")
    let push = try await LoopbackBenchmark.push(
        operations: operations,
        serverStore: sqlite("push-server-\(client)"), clientStore: clientStore("push-client"))
    print("push  client=\(client) server=sqlite: \(push)")
    let pipelined = try await LoopbackBenchmark.push(
        operations: operations, pipelineDepth: depth,
        serverStore: sqlite("pipelined-server-\(client)"), clientStore: clientStore("pipelined-client"))
    print("push  client=\(client) server=sqlite pipelined=\(depth): \(pipelined)")
}
