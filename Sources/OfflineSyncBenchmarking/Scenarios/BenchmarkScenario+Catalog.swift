/// The scenarios in report order.
extension BenchmarkScenario {
    /// Every scenario, in the order of the report's rows.
    public static var all: [BenchmarkScenario] {
        [
            enqueueBatch, enqueueDurable, push, bulkUpsert, pullFull(pageSize: 50), pullFull(pageSize: 1_000),
            pullObserved(pageSize: 50), pullIncremental, query(indexed: false), query(indexed: true), lookup, purge, coldOpen(passphrase: false),
            coldOpen(passphrase: true),
        ] + typed
    }

    /// The scenarios of `known` whose identifiers are listed, in report order; unknown
    /// identifiers throw, naming the known ones.
    package static func named(_ identifiers: [String], among known: [BenchmarkScenario] = all) throws
        -> [BenchmarkScenario]
    {
        for identifier in identifiers where !known.contains(where: { $0.id == identifier }) {
            throw BenchmarkError(
                "unknown scenario '\(identifier)'; known scenarios: \(known.map(\.id).joined(separator: ", "))")
        }
        return known.filter { identifiers.contains($0.id) }
    }
}
