import OfflineSync
import Synchronization
import Testing

/// Pulls from servers that answer the protocol's paging a little differently from the Node
/// server: one that keeps finer timestamps than it sends (SQL Server's `datetimeoffset(7)`, as
/// the .NET backend does), one whose ids compare case-insensitively (SQL Server's default
/// collation), and one that drops `$orderby`. The first two must pull every record and stop; the
/// third must fail before its token passes records it has not sent.
@Suite struct MisbehavingServerPullTests {
    static let todo = TableSchema("todo", columns: [Column("text", .string)])

    /// A server of records each with a clock in microseconds, of which it sends the
    /// milliseconds only, and the filters a pull sends evaluated on its own terms.
    final class OddServer: RemoteService {
        struct Record {
            let id: String
            let micros: Int64
        }

        enum Behaviour {
            /// Compares `updatedAt` in microseconds (the token's millisecond is before every
            /// record in it) and orders by microseconds, then id.
            case finerTimestamps
            /// Compares and orders ids case-insensitively.
            case caseInsensitiveIds
            /// Honours `$filter`, `$skip` and `$top` but sends each page newest first.
            case ignoresOrderBy
        }

        let records: [Record]
        let behaviour: Behaviour
        let requests = Mutex(0)

        init(_ records: [Record], behaviour: Behaviour) {
            self.records = records
            self.behaviour = behaviour
        }

        /// The lower bound on `updatedAt` and the id tie-breaker of a pull's filter, read from
        /// the shapes the pull sends (`updatedAt ge T and (updatedAt gt T or id gt X)`, or
        /// `id gt X` for a full pull's keyset).
        static func bounds(_ filter: FilterExpression?) -> (since: Int64?, after: String?) {
            var since: Int64?
            var after: String?
            func walk(_ expression: FilterExpression) {
                switch expression {
                case .and(let left, let right), .or(let left, let right):
                    walk(left)
                    walk(right)
                case .comparison(.column("updatedAt"), .ge, .literal(.date(let stamp))):
                    since = stamp.millisecondsSince1970 * 1000
                case .comparison(.column("id"), .gt, .literal(.string(let id))):
                    after = id
                default:
                    break
                }
            }
            filter.map(walk)
            return (since, after)
        }

        func less(_ a: String, _ b: String) -> Bool {
            behaviour == .caseInsensitiveIds ? a.lowercased() < b.lowercased() : Array(a.utf8).lexicographicallyPrecedes(b.utf8)
        }

        func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
            let count = requests.withLock { count in
                count += 1
                return count
            }
            // A pull that goes round in circles fails here instead of hanging the test.
            guard count <= 500 else { throw RemoteError(.server, status: 500, message: "500 requests: the pull loops") }
            let (since, after) = Self.bounds(query.filter)
            var matching = records.filter { record in
                let sinceMillis = since.map { $0 / 1000 }
                switch behaviour {
                case .finerTimestamps:
                    guard let since else { return after.map { less($0, record.id) } ?? true }
                    return record.micros >= since && (record.micros > since || after.map { less($0, record.id) } ?? true)
                case .caseInsensitiveIds, .ignoresOrderBy:
                    let millis = record.micros / 1000
                    guard let sinceMillis else { return after.map { less($0, record.id) } ?? true }
                    return millis >= sinceMillis && (millis > sinceMillis || after.map { less($0, record.id) } ?? true)
                }
            }
            let byTime = query.orderBy.first?.column == "updatedAt"
            matching.sort { a, b in
                let (ta, tb) = behaviour == .finerTimestamps ? (a.micros, b.micros) : (a.micros / 1000, b.micros / 1000)
                if byTime, ta != tb { return ta < tb }
                return less(a.id, b.id)
            }
            var page = Array(matching.dropFirst(query.skip).prefix(query.top ?? 50))
            if behaviour == .ignoresOrderBy { page.reverse() }
            return QueryResult(
                items: page.map { record in
                    let stamp = Timestamp(millisecondsSince1970: record.micros / 1000)
                    return Item(
                        id: record.id,
                        values: [
                            "text": .string(record.id), "updatedAt": .date(stamp), "createdAt": .date(stamp),
                            "version": "v", "deleted": false,
                        ])
                })
        }

        func insert(_ item: Item, into table: String) async throws -> Item { item }
        func update(_ item: Item, in table: String, ifMatch version: String?) async throws -> Item { item }
        func delete(id: String, from table: String, ifMatch version: String?) async throws {}
        func lookup(id: String, in table: String) async throws -> Item? { nil }
    }

    static let millisecond: Int64 = 1_700_000_000_000 * 1000

    @Test func aServerWithFinerTimestampsIsPulledWhole() async throws {
        // Seven records in one millisecond, their microseconds in the reverse of their ids'
        // order, then two later ones: before, the token went back and forth and the pull never
        // ended.
        var records = (0..<7).map { OddServer.Record(id: "id\($0)", micros: Self.millisecond + Int64(900 - $0 * 100)) }
        records += [
            OddServer.Record(id: "late0", micros: Self.millisecond + 5_000_250),
            OddServer.Record(id: "late1", micros: Self.millisecond + 5_000_100),
        ]
        let server = OddServer(records, behaviour: .finerTimestamps)
        let context = try SyncContext(store: InMemoryStore(), remote: server, tables: [Self.todo])
        let table = try context.table("todo")
        let result = try await table.pull(queryId: "all", options: PullOptions(pageSize: 2))
        #expect(try context.store.count("todo") == 9)
        #expect(result.requests < 30, "\(result.requests) requests")
        let token = try #require(try table.deltaToken(queryId: "all"))
        #expect(token.updatedAt == Timestamp(millisecondsSince1970: Self.millisecond / 1000 + 5_000))
        // Nothing new: the next pull reads the last millisecond again and stops.
        let again = try await table.pull(queryId: "all", options: PullOptions(pageSize: 2))
        #expect(again.requests < 10, "\(again.requests) requests")
        #expect(try table.deltaToken(queryId: "all") == token, "the token never moves back")
    }

    @Test func aServerWhoseIdsCompareCaseInsensitivelyIsPulledWhole() async throws {
        let ids = ["a", "b", "C", "D", "e", "F", "g"]
        let server = OddServer(
            ids.map { OddServer.Record(id: $0, micros: Self.millisecond) }, behaviour: .caseInsensitiveIds)
        let context = try SyncContext(store: InMemoryStore(), remote: server, tables: [Self.todo])
        let table = try context.table("todo")
        // A full pull pages by `id gt last`, which this server answers in its own order.
        _ = try await table.pull(options: PullOptions(pageSize: 2))
        #expect(try context.store.count("todo") == ids.count)
        try context.store.delete(ids: ids, from: "todo")
        // So does an incremental pull's tie-breaker within one millisecond.
        _ = try await table.pull(queryId: "all", options: PullOptions(pageSize: 2))
        #expect(try context.store.count("todo") == ids.count)
    }

    @Test func aServerThatDropsOrderByFailsBeforeItsTokenPassesUnsentRecords() async throws {
        let records = (0..<6).map { OddServer.Record(id: "r\($0)", micros: Self.millisecond + Int64($0) * 1000_000) }
        let server = OddServer(records, behaviour: .ignoresOrderBy)
        let context = try SyncContext(store: InMemoryStore(), remote: server, tables: [Self.todo])
        let table = try context.table("todo")
        await #expect {
            try await table.pull(queryId: "all", options: PullOptions(pageSize: 3))
        } throws: { error in
            "\(error)".contains("does not honour $orderby")
        }
        #expect(try table.deltaToken(queryId: "all") == nil, "no token past records not received")
    }
}
