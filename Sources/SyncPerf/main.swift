import OfflineSync
import Synchronization

let todo = TableSchema("todo", columns: [Column("text", .string), Column("complete", .bool), Column("priority", .integer)])
import Glibc
func cpu() -> Double { var t = timespec(); clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9 }
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    let c0 = cpu()
    try await body()
    let d = ContinuousClock.now - start
    let wall = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    let used = cpu() - c0
    print("  [wall \(Int(wall * 1000)) ms, cpu \(Int(used * 1000)) ms]", terminator: " ")
    return used
}
let n = Int(CommandLine.arguments.dropFirst().first ?? "10000") ?? 10000
let remote = try InMemoryRemote(tables: [todo], options: TableService.Options(maximumPageSize: 1000))
let context = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todo])
let table = try context.table("todo")
let items = (0..<n).map { Item(id: "item\($0)", values: ["text": .string("text \($0)"), "complete": false, "priority": .int(Int64($0))]) }
var t = try await seconds { for chunk in stride(from: 0, to: n, by: 1000) { try table.insert(Array(items[chunk..<min(n, chunk + 1000)])) } }
print("enqueue batched(1000): \(Int(Double(n) / t)) ops/s")
t = try await seconds { try await context.push() }
print("push: \(Int(Double(n) / t)) ops/s")
let single = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todo]).table("todo")
t = try await seconds { for item in items.prefix(2000) { try single.insert(item) } }
print("enqueue single (2000 into growing queue): \(Int(2000 / t)) ops/s")
let big = Int(CommandLine.arguments.dropFirst(2).first ?? "100000") ?? 100000
let stamp = Timestamp(year: 2024, month: 1, day: 1)!
let seeded = (0..<big).map { Item(id: "s\($0)", values: ["text": .string("server \($0)"), "complete": false, "priority": .int(Int64($0)), "createdAt": .date(stamp), "updatedAt": .date(Timestamp(millisecondsSince1970: stamp.millisecondsSince1970 + Int64($0 / 10))), "version": "v", "deleted": false]) }
try remote.service.store.upsert(seeded, into: "todo")
let puller = try SyncContext(store: InMemoryStore(), remote: remote, tables: [todo]).table("todo")
var received = 0
t = try await seconds { received = try await puller.pull(queryId: "all", options: PullOptions(pageSize: 1000)).received }
print("incremental pull: \(received) records, \(Int(Double(received) / t)) records/s")
final class Timed: RemoteService {
    let base: InMemoryRemote
    let spent = Mutex<Duration>(.zero)
    init(_ base: InMemoryRemote) { self.base = base }
    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        let start = ContinuousClock.now
        defer { let d = ContinuousClock.now - start; spent.withLock { $0 += d } }
        return try await base.readPage(query, includeDeleted: includeDeleted)
    }
    func insert(_ item: Item, into table: String) async throws -> Item { try await base.insert(item, into: table) }
    func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item { try await base.update(item, in: table, ifMatch: version) }
    func delete(id: String, from table: String, ifMatch version: String?) async throws { try await base.delete(id: id, from: table, ifMatch: version) }
    func lookup(id: String, in table: String) async throws -> Item? { try await base.lookup(id: id, in: table) }
}
let timed = Timed(remote)
let puller2 = try SyncContext(store: InMemoryStore(), remote: timed, tables: [todo]).table("todo")
t = try await seconds { received = try await puller2.pull(queryId: "all", options: PullOptions(pageSize: 1000)).received }
let server = timed.spent.withLock { $0 }
print("incremental pull again: \(received) records, cpu \(t)s, wall in server \(server)")
