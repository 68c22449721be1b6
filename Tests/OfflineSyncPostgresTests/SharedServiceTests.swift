import OfflineSyncTestSupport
import Foundation
import OfflineSync
import OfflineSyncService
import OfflineSyncPostgres
import Synchronization
import Testing

/// `TableService`'s guarantees when several services share one PostgreSQL schema, each with its own
/// store and connection: exactly what several `offline-sync serve` processes are, as PostgreSQL sees
/// them (each process has one service over one connection), without the HTTP in between.
@Suite struct SharedServiceTests {
    static let table = TableSchema("item", columns: [Column("text", .string), Column("writer", .integer)])

    /// A fresh schema with `table`, and `count` services over it, each on its own connection.
    private func services(
        _ count: Int, widens: Bool = false, pageSize: Int = 50
    ) throws -> (settings: PostgresConnectionSettings, services: [TableService]) {
        let settings = try PostgresTestServer.require().freshSettings()
        let setup = PostgresStore(settings: settings)
        try setup.open(schema: StoreSchema([TableService.served(Self.table)]))
        try setup.close()
        let services = try (0..<count).map { _ in
            let store = PostgresStore(settings: settings)
            try store.open(schema: StoreSchema([]))
            return try TableService(store: store, options: .init(maximumPageSize: pageSize, widensSchema: widens))
        }
        return (settings, services)
    }

    private func close(_ services: [TableService], _ settings: PostgresConnectionSettings) {
        for service in services { try? service.store.close() }
        try? PostgresStore.dropSchema(settings)
    }

    /// Runs each body on a thread of its own (the services block), waits for all, rethrows the
    /// first failure.
    private func concurrently(_ bodies: [@Sendable () throws -> Void]) throws {
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do { try body() } catch { failures.update { $0.append("\(error)") } }
            }
            thread.start()
        }
        group.wait()
        if let first = failures.value.first { throw TestServerError(first) }
    }

    /// The keyset page after (`stamp`, `id`) in pull order, as an incremental pull reads it.
    static func page(after cursor: (stamp: Timestamp, id: String)?, size: Int) -> Query {
        let updatedAt = FilterExpression.column(SystemProperty.updatedAt.rawValue)
        let filter = cursor.map { cursor in
            FilterExpression.or(
                .comparison(updatedAt, .gt, .literal(.date(cursor.stamp))),
                .and(
                    .comparison(updatedAt, .eq, .literal(.date(cursor.stamp))),
                    .comparison(.column("id"), .gt, .literal(.string(cursor.id)))))
        }
        return Query(
            table: "item", filter: filter, orderBy: [SortKey(SystemProperty.updatedAt.rawValue), SortKey("id")],
            top: size)
    }

    /// The property a timestamp cursor needs: writers on four connections (four "processes")
    /// insert and update at once while a fifth pages through the table five rows at a time,
    /// following its cursor. Whatever committed behind the cursor would be lost to the puller for
    /// good; its final set must equal the table. (With the stamp taken before the write
    /// transaction instead of inside it, this fails: see docs/ARCHITECTURE.md.)
    @Test func aPullerPagingDuringConcurrentWritesNeverSkipsACommittedRecord() throws {
        let (settings, services) = try services(5)
        defer { close(services, settings) }
        let writers = Array(services.prefix(4))
        let puller = services[4]
        let done = Locked(0)
        let seen = Locked<[String: String]>([:])
        let pages = Locked(0)
        var bodies: [@Sendable () throws -> Void] = writers.enumerated().map { index, service in
            {
                defer { done.update { $0 += 1 } }
                for step in 0..<120 {
                    let id = "w\(index)-\(step % 40)"
                    if step < 40 {
                        try service.insert(
                            Item(id: id, values: ["text": .string("new"), "writer": .int(Int64(index))]), into: "item")
                    } else {
                        try service.update(
                            Item(id: id, values: ["text": .string("step \(step)"), "writer": .int(Int64(index))]),
                            in: "item", ifMatch: nil)
                    }
                }
            }
        }
        bodies.append {
            var cursor: (stamp: Timestamp, id: String)?
            var caughtUp = false
            while !caughtUp {
                let writing = done.value < writers.count
                let page = try puller.readPage(Self.page(after: cursor, size: 5), includeDeleted: true).items
                pages.update { $0 += 1 }
                seen.update { seen in for item in page { seen[item.id] = item.version ?? "" } }
                if let last = page.last, let stamp = last.updatedAt { cursor = (stamp, last.id) }
                caughtUp = !writing && page.count < 5
            }
        }
        try concurrently(bodies)
        let table = try puller.store.read(Query(table: "item")).items
        let expected = Dictionary(uniqueKeysWithValues: table.map { ($0.id, $0.version ?? "") })
        let pulled = seen.value
        #expect(table.count == 160)
        #expect(pages.value > 10, "the puller paged while the writers wrote")
        #expect(
            pulled == expected,
            "skipped or stale: \(expected.filter { pulled[$0.key] != $0.value }.keys.sorted().prefix(10))")
    }

    /// Stamps per table stay unique and increasing whichever service writes: a service's clock
    /// cache knows nothing of a stamp another service stored (here one far in the future, as a
    /// service running ahead of the clock leaves it), and must still stamp after it.
    @Test func aServiceStampsAfterEveryStampAnotherServiceStored() throws {
        let (settings, services) = try services(2)
        defer { close(services, settings) }
        let first = try services[0].insert(Item(id: "a", values: ["text": .string("a")]), into: "item")
        let ahead = Timestamp(millisecondsSince1970: Timestamp.now().millisecondsSince1970 + 3_600_000)
        var future = first
        future[SystemProperty.updatedAt.rawValue] = .date(ahead)
        try services[0].store.upsert([future], into: "item")
        let second = try services[1].insert(Item(id: "b", values: ["text": .string("b")]), into: "item")
        #expect((second.updatedAt?.millisecondsSince1970 ?? 0) > ahead.millisecondsSince1970)
        let third = try services[0].update(Item(id: "a", values: ["text": .string("a2")]), in: "item", ifMatch: nil)
        #expect((third.updatedAt?.millisecondsSince1970 ?? 0) > (second.updatedAt?.millisecondsSince1970 ?? 0))
    }

    /// If-Match across services: two services update the same row from the same version at once;
    /// exactly one wins, the other gets 412 carrying the winner's row.
    @Test func ifMatchIsDecidedOnTheCommittedRowAcrossServices() throws {
        let (settings, services) = try services(2)
        defer { close(services, settings) }
        for round in 0..<20 {
            let base = try services[0].insert(Item(id: "r\(round)", values: ["text": .string("base")]), into: "item")
            let outcomes = Locked<[String]>([])
            try concurrently(
                services.enumerated().map { index, service in
                    {
                        do {
                            _ = try service.update(
                                Item(id: base.id, values: ["text": .string("by \(index)")]), in: "item",
                                ifMatch: base.version)
                            outcomes.update { $0.append("won \(index)") }
                        } catch let error as RemoteError where error.status == 412 {
                            outcomes.update { $0.append("412 \(error.serverItem?["text"].stringValue ?? "")") }
                        }
                    }
                })
            let result = outcomes.value.sorted()
            #expect(result == ["412 by 0", "won 0"] || result == ["412 by 1", "won 1"], "\(result)")
        }
    }

    /// Widening across services: a column one service adds is returned by another's reads and
    /// lookups at once, the other writes it with its type, and a value of another type is a 400
    /// there too (not a failed ALTER TABLE).
    /// A table one service creates (a dynamic-schema write) is served by the others at once: the
    /// store's cached schema is brought up to date before each request, so none answers 404.
    @Test func aTableCreatedByOneServiceIsServedByTheOthers() throws {
        let (settings, services) = try services(2, widens: true)
        defer { close(services, settings) }
        #expect(try !services[1].hasTable("tags"))
        try services[0].insert(Item(id: "t", values: ["name": .string("x")]), into: "tags", creatingTable: true)
        #expect(try services[1].hasTable("tags"))
        #expect(try services[1].readPage(Query(table: "tags"), includeDeleted: false).items.map(\.id) == ["t"])
        #expect(try services[1].lookup(id: "t", in: "tags")?["name"] == .string("x"))
    }

    @Test func aColumnAddedByOneServiceIsSeenByTheOthers() throws {
        let (settings, services) = try services(2, widens: true)
        defer { close(services, settings) }
        try services[1].insert(Item(id: "before", values: ["text": .string("x")]), into: "item")
        try services[0].insert(Item(id: "a", values: ["text": .string("a"), "color": .string("red")]), into: "item")
        #expect(try services[1].lookup(id: "a", in: "item")?["color"] == .string("red"))
        let page = try services[1].readPage(Query(table: "item"), includeDeleted: false).items
        #expect(page.first { $0.id == "a" }?["color"] == .string("red"))
        try services[1].insert(Item(id: "b", values: ["text": .string("b"), "color": .string("blue")]), into: "item")
        #expect(try services[0].lookup(id: "b", in: "item")?["color"] == .string("blue"))
        #expect(throws: RemoteError.self) {
            try services[1].insert(Item(id: "c", values: ["color": .int(3)]), into: "item")
        }
        do {
            try services[1].insert(Item(id: "c", values: ["color": .int(3)]), into: "item")
        } catch let error as RemoteError {
            #expect(error.status == 400, "\(error)")
        }
        // The second service widens again: the first writes into that column without reopening by hand.
        try services[1].merge(Item(id: "a", values: ["size": .int(4)]), in: "item", ifMatch: nil)
        let merged = try services[0].merge(Item(id: "a", values: ["size": .int(5)]), in: "item", ifMatch: nil)
        #expect(merged["size"] == .int(5) && merged["color"] == .string("red"))
        #expect(try services[1].lookup(id: "a", in: "item")?["size"] == .int(5))
        // A service that has not read since another added a column, writing it with another type.
        try services[0].insert(Item(id: "d", values: ["weight": .string("heavy")]), into: "item")
        do {
            try services[1].insert(Item(id: "e", values: ["weight": .int(9)]), into: "item")
            Issue.record("a value of another type than the column another service added was accepted")
        } catch let error as RemoteError {
            #expect(error.status == 400, "\(error)")
        }
        #expect(try services[1].lookup(id: "d", in: "item")?["weight"] == .string("heavy"))
    }
}
