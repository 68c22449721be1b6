import OfflineSync

/// A candidate store and the reference (``OfflineSync/InMemoryStore``, whose reads are
/// ``OfflineSync/QueryEvaluator``'s) run step by step side by side: each ``RandomStep`` runs on both
/// and their outcomes are compared.
final class RandomPair {
    let candidate: any LocalStore
    let reference = InMemoryStore()

    init(candidate: any LocalStore) {
        self.candidate = candidate
    }

    /// Closes both stores (errors ignored: the pair is done).
    func close() {
        try? candidate.close()
        try? reference.close()
    }

    /// How a step's answer on the candidate differed from the reference's: the message, and its
    /// kind (the step or operation, and how the answers differed), which a shrunk sequence must
    /// keep, so that shrinking does not wander off to another difference.
    struct Difference {
        var kind: String
        var message: String
    }

    /// Runs `step` on both stores; answers how the candidate differed from the reference, or `nil`.
    func run(_ step: RandomStep) -> Difference? {
        switch step {
        case .reopen(let schema): return reopen(schema)
        case .read(let query):
            return Self.compare(
                "read", RandomOutcome.of { .rows(try candidate.read(query)) },
                RandomOutcome.of { .rows(try reference.read(query)) })
        case .lookup(let table, let id):
            return Self.compare(
                "lookup", RandomOutcome.of { .row(try candidate.lookup(table: table, id: id)) },
                RandomOutcome.of { .row(try reference.lookup(table: table, id: id)) })
        case .write(let operations, let rollback):
            return write(operations, rollback: rollback)
        }
    }

    /// `what` and `prefix` are built only for a difference: describing an operation costs more than
    /// running it on the in-memory reference.
    private static func compare(
        _ what: @autoclosure () -> String, _ got: RandomOutcome, _ expected: RandomOutcome,
        prefix: @autoclosure () -> String = ""
    ) -> Difference? {
        guard let message = RandomOutcome.difference(candidate: got, reference: expected) else { return nil }
        return Difference(
            kind: "\(what()) \(RandomOutcome.kind(candidate: got, reference: expected))", message: prefix() + message)
    }

    private func reopen(_ schema: StoreSchema) -> Difference? {
        do {
            try candidate.close()
        } catch {
            return Difference(kind: "close threw", message: "close() threw \(CaseContext.describe(error))")
        }
        try? reference.close()
        let opened = RandomOutcome.of {
            try candidate.open(schema: schema)
            return .done
        }
        let expected = RandomOutcome.of {
            try reference.open(schema: schema)
            return .done
        }
        if let difference = Self.compare("open", opened, expected, prefix: "open(schema:) ") {
            return difference
        }
        if case .failed = expected {
            // A rejected reopen: both read their stored schema again, which must be unchanged.
            try? candidate.close()
            if let difference = Self.compare(
                "open after a rejection",
                RandomOutcome.of {
                    try candidate.open(schema: StoreSchema([]))
                    return .done
                },
                RandomOutcome.of {
                    try reference.open(schema: StoreSchema([]))
                    return .done
                }, prefix: "open(schema:) with an empty schema after the rejected one ")
            {
                return difference
            }
        }
        do {
            if let difference = Self.difference(try candidate.schema, try reference.schema) {
                return Difference(kind: "schema", message: "schema after the open: " + difference)
            }
            if try candidate.storedSchemaChanged() {
                return Difference(
                    kind: "storedSchemaChanged",
                    message: "storedSchemaChanged() answered true after the instance's own open")
            }
        } catch {
            return Difference(
                kind: "schema threw", message: "schema after the open threw \(CaseContext.describe(error))")
        }
        return nil
    }

    /// The error a rolled-back random transaction's closure throws.
    struct Rollback: Error {}

    private func write(_ operations: [RandomOperation], rollback: Bool) -> Difference? {
        var got: [RandomOutcome] = []
        var expected: [RandomOutcome] = []
        let ended = Self.end {
            try candidate.write { transaction in
                for operation in operations { got.append(RandomOutcome.of { try operation.run(in: transaction) }) }
                if rollback { throw Rollback() }
            }
        }
        let expectedEnd = Self.end {
            try reference.write { transaction in
                for operation in operations {
                    expected.append(RandomOutcome.of { try operation.run(in: transaction) })
                }
                if rollback { throw Rollback() }
            }
        }
        for (position, (outcome, wanted)) in zip(got, expected).enumerated() {
            if let difference = Self.compare(
                "transaction \(operations[position].kind)", outcome, wanted,
                prefix: "operation \(position + 1) inside the transaction (\(operations[position])): ")
            {
                return difference
            }
        }
        if ended != expectedEnd {
            return Difference(kind: "write end", message: "write(_:) \(ended), expected it to \(expectedEnd)")
        }
        return nil
    }

    /// How a `write` call ended, as a failure message says it.
    private static func end(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "returned"
        } catch is Rollback {
            return "rethrow the closure's error"
        } catch let error as OfflineSyncError {
            return "throw \(error.code)"
        } catch {
            return "throw \(type(of: error))"
        }
    }

    /// How two stored schemas differ (tables, their `synced` flag, columns and indexes compared
    /// as sets), or `nil`.
    static func difference(_ got: StoreSchema, _ expected: StoreSchema) -> String? {
        let gotNames = Set(got.tables.map(\.name))
        let expectedNames = Set(expected.tables.map(\.name))
        if gotNames != expectedNames {
            return "tables \(gotNames.sorted()), expected \(expectedNames.sorted())"
        }
        for table in expected.tables {
            guard let other = got.table(named: table.name) else { continue }
            if other.synced != table.synced {
                return "table \(table.name) synced \(other.synced), expected \(table.synced)"
            }
            if Set(other.columns) != Set(table.columns) {
                let describe = { (columns: [Column]) in columns.map { "\($0.name) \($0.type.rawValue)" }.sorted() }
                return "table \(table.name) columns \(describe(other.columns)), expected \(describe(table.columns))"
            }
            if Set(other.indexes) != Set(table.indexes) {
                let describe = { (indexes: [TableIndex]) in
                    indexes.map { "\($0.name)(\($0.columns.joined(separator: ",")))" }.sorted()
                }
                return "table \(table.name) indexes \(describe(other.indexes)), expected \(describe(table.indexes))"
            }
        }
        return nil
    }
}
