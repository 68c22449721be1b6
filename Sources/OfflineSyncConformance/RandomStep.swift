import OfflineSync

/// One step of a random sequence: run on the candidate store and on the reference, its outcomes
/// compared. A step carries everything it needs, so any subsequence of a failing sequence can be
/// run again (the shrinker removes steps, operations and rows).
enum RandomStep: Sendable, CustomStringConvertible {
    /// Closes both stores and opens them with `schema` (a widening, tables or columns left out,
    /// or a retyped column that both must reject; after a rejection both are opened with an empty
    /// schema). The stored schemas are compared afterwards.
    case reopen(StoreSchema)
    /// A read outside any transaction.
    case read(Query)
    /// A lookup outside any transaction.
    case lookup(table: String, id: String)
    /// A transaction of `operations`, each one's error caught by the closure; with `rollback`,
    /// the closure throws at its end.
    case write([RandomOperation], rollback: Bool)

    var description: String {
        switch self {
        case .reopen(let schema): return "reopen with " + RandomStep.describe(schema)
        case .read(let query): return "read " + RandomText.clipped(query.description)
        case .lookup(let table, let id): return "lookup(\(table), id '\(RandomText.short(id))')"
        case .write(let operations, let rollback):
            return "write {\n"
                + operations.map { "       " + $0.description }.joined(separator: "\n")
                + (rollback ? "\n       throw (roll back)" : "") + "\n     }"
        }
    }

    static func describe(_ schema: StoreSchema) -> String {
        if schema.tables.isEmpty { return "an empty schema" }
        return schema.tables.map { table in
            let columns = table.columns.filter { SystemProperty(rawValue: $0.name) == nil || !table.synced }
                .map { "\($0.name) \($0.type.rawValue)" }
            let indexes = table.indexes.map { "\($0.name)(\($0.columns.joined(separator: ",")))" }
            return "\(table.name)\(table.synced ? " synced" : "")(\(columns.joined(separator: ", ")))"
                + (indexes.isEmpty ? "" : " indexes \(indexes.joined(separator: ", "))")
        }.joined(separator: "; ")
    }
}

/// One operation inside a random transaction.
enum RandomOperation: Sendable, CustomStringConvertible {
    case upsert([Item], table: String, origin: WriteOrigin)
    case insertNew([Item], table: String, origin: WriteOrigin)
    case deleteIds([String], table: String)
    case deleteMatching(Query)
    case read(Query)
    case lookup(table: String, id: String)

    var description: String {
        switch self {
        case .upsert(let items, let table, let origin):
            return "upsert \(RandomOperation.describe(items)) into \(table) (\(origin))"
        case .insertNew(let items, let table, let origin):
            return "insertNew \(RandomOperation.describe(items)) into \(table) (\(origin))"
        case .deleteIds(let ids, let table):
            let shown = ids.prefix(6).map { "'\(RandomText.short($0))'" }.joined(separator: ", ")
            return "delete(ids: [\(shown)\(ids.count > 6 ? ", … \(ids.count) ids" : "")], from: \(table))"
        case .deleteMatching(let query): return "delete(matching: \(RandomText.clipped(query.description)))"
        case .read(let query): return "read " + RandomText.clipped(query.description)
        case .lookup(let table, let id): return "lookup(\(table), id '\(RandomText.short(id))')"
        }
    }

    static func describe(_ items: [Item]) -> String {
        let shown = items.prefix(4).map { item -> String in
            let fields = item.values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.shortDescription)" }
            return "{id: '\(RandomText.short(item.id))'\(fields.isEmpty ? "" : ", " + fields.joined(separator: ", "))}"
        }
        return "[" + shown.joined(separator: ", ") + (items.count > 4 ? ", … \(items.count) rows" : "") + "]"
    }

    /// The operation's name, e.g. `insertNew`.
    var kind: String {
        switch self {
        case .upsert: return "upsert"
        case .insertNew: return "insertNew"
        case .deleteIds: return "delete(ids:)"
        case .deleteMatching: return "delete(matching:)"
        case .read: return "read"
        case .lookup: return "lookup"
        }
    }

    /// Runs the operation in `transaction` and answers what it returned.
    func run(in transaction: any StoreTransaction) throws -> RandomOutcome {
        switch self {
        case .upsert(let items, let table, let origin):
            try transaction.upsert(items, into: table, origin: origin)
            return .done
        case .insertNew(let items, let table, let origin):
            return .ids(try transaction.insertNew(items, into: table, origin: origin))
        case .deleteIds(let ids, let table):
            try transaction.delete(ids: ids, from: table)
            return .done
        case .deleteMatching(let query): return .count(try transaction.delete(matching: query))
        case .read(let query): return .rows(try transaction.read(query))
        case .lookup(let table, let id): return .row(try transaction.lookup(table: table, id: id))
        }
    }
}

/// What a step or an operation answered.
enum RandomOutcome: Sendable {
    case done
    case rows(QueryResult)
    case row(Item?)
    case ids([String])
    case count(Int)
    case failed(String, OfflineSyncError.Code?)

    /// The outcome of `body`, its error included.
    static func of(_ body: () throws -> RandomOutcome) -> RandomOutcome {
        do {
            return try body()
        } catch let error as OfflineSyncError {
            return .failed("\(error.code): \(error.message)", error.code)
        } catch {
            return .failed(String(describing: error), nil)
        }
    }

    /// How `candidate` differs from `reference`, or `nil` when they agree: rows row for row (ids
    /// and values byte for byte, `-0.0` apart from `0.0`), counts, ids, and errors (an error on
    /// one side only, or another ``OfflineSyncError`` code).
    static func difference(candidate: RandomOutcome, reference: RandomOutcome) -> String? {
        switch (candidate, reference) {
        case (.done, .done): return nil
        case (.rows(let got), .rows(let expected)):
            if got.totalCount != expected.totalCount {
                return
                    "total count \(got.totalCount.map(String.init) ?? "none"), expected \(expected.totalCount.map(String.init) ?? "none")"
            }
            for (position, (row, wanted)) in zip(got.items, expected.items).enumerated() where row != wanted {
                return "row \(position): got \(describe(row)), expected \(describe(wanted))"
            }
            if got.items.count != expected.items.count {
                let extra = got.items.count > expected.items.count
                let first = extra ? got.items[expected.items.count] : expected.items[got.items.count]
                return
                    "\(got.items.count) rows, expected \(expected.items.count) (first \(extra ? "extra" : "missing") row: \(describe(first)))"
            }
            return nil
        case (.row(let got), .row(let expected)):
            if got == expected { return nil }
            return "got \(got.map(describe) ?? "nil"), expected \(expected.map(describe) ?? "nil")"
        case (.ids(let got), .ids(let expected)):
            if got.count == expected.count, zip(got, expected).allSatisfy({ $0.utf8.elementsEqual($1.utf8) }) {
                return nil
            }
            return
                "ids \(got.map { "'\(RandomText.short($0))'" }), expected \(expected.map { "'\(RandomText.short($0))'" })"
        case (.count(let got), .count(let expected)):
            return got == expected ? nil : "count \(got), expected \(expected)"
        case (.failed(let got, let code), .failed(_, let expected)):
            guard let code, let expected, code != expected else { return nil }
            return "threw \(got), expected a \(expected) error"
        case (.failed(let message, _), _):
            return "threw \(message), where the reference answered \(reference.summary)"
        case (_, .failed(let message, _)):
            return "answered \(candidate.summary), where the reference threw \(message)"
        default:
            return "answered \(candidate.summary), expected \(reference.summary)"
        }
    }

    /// How two differing outcomes differ, in a word or two: `threw`, `did not throw`, `rows`,
    /// `error code` …
    static func kind(candidate: RandomOutcome, reference: RandomOutcome) -> String {
        switch (candidate, reference) {
        case (.failed(_, let got), .failed(_, let expected)):
            return "error code \(got.map { "\($0)" } ?? "-") for \(expected.map { "\($0)" } ?? "-")"
        // The code the candidate threw belongs to the kind: a shrink that turns a full disk into
        // a refused column is another failure.
        case (.failed(_, let code), _): return "threw \(code.map { "\($0)" } ?? "-")"
        case (_, .failed): return "did not throw"
        case (.rows(let got), .rows(let expected)):
            return got.totalCount != expected.totalCount
                ? "total count" : got.items.count != expected.items.count ? "row count" : "rows"
        case (.row, .row): return "row"
        case (.ids, .ids): return "ids"
        case (.count, .count): return "count"
        default: return "outcome"
        }
    }

    var summary: String {
        switch self {
        case .done: return "success"
        case .rows(let result): return "\(result.items.count) rows"
        case .row(let item): return item.map(RandomOutcome.describe) ?? "nil"
        case .ids(let ids): return "\(ids.count) ids"
        case .count(let count): return "count \(count)"
        case .failed(let message, _): return "an error (\(message))"
        }
    }

    static func describe(_ item: Item) -> String { String(RandomOperation.describe([item]).dropFirst().dropLast()) }
}
