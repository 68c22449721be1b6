import OfflineSync

/// A remote that notes, in the records it reads of one table, the columns the local table does not
/// declare: what `sync` needs to widen a table it declared from a sample of the server's first
/// records, whose later records may carry columns (or first non-null values) the sample did not.
///
/// Everything else is passed to the wrapped remote unchanged (its batched pushes too).
final class ColumnWatchingRemote: ForwardingRemote {
    let base: any RemoteService
    let table: String
    private let state: Locked<State>

    private struct State {
        var columns: LearnedColumns
        var reported: Set<String> = []
    }

    /// Watches the records of `table` read through `base`, against the columns of `declared`.
    init(_ base: any RemoteService, table: TableSchema) {
        self.base = base
        self.table = table.name
        state = Locked(State(columns: LearnedColumns(declared: table.columns.map(\.name))))
    }

    /// The columns seen in records read since the last call that the table did not declare,
    /// each with the type of its values (they count as declared from now on), and the names seen
    /// since the last call that no table can declare (see ``LearnedColumns``).
    func takeNewColumns() -> (columns: [Column], unstorable: [String]) {
        state.withLock { state in
            let unstorable = state.columns.unstorable.subtracting(state.reported)
            state.reported.formUnion(unstorable)
            return (state.columns.take(), unstorable.sorted())
        }
    }

    func readPage(_ query: Query, includeDeleted: Bool) async throws -> QueryResult {
        let page = try await base.readPage(query, includeDeleted: includeDeleted)
        if query.table == table {
            state.withLock { $0.columns.note(page.items) }
        }
        return page
    }
}

/// The columns records carry beyond those a table declares, as `sync` learns them.
///
/// A column seen only as `null` has no type and is left out (nothing of it would be lost);
/// integers and doubles in one column make it a double; otherwise the first type seen wins (a
/// later value of another type fails the pull, naming it). Names that no table can declare (not
/// an identifier, a reserved prefix, or the same as another but for letter case) are only
/// collected, so that `sync` can say which values it cannot keep.
struct LearnedColumns {
    /// The names already declared or learned, as they are and folded (names are compared
    /// case-insensitively).
    private var names: Set<String>
    private var folded: Set<String>
    private var types: [String: ColumnType] = [:]
    private(set) var unstorable: Set<String> = []

    /// Learns columns beyond `declared` (and the id and system properties, always there).
    init(declared: [String] = []) {
        names = Set(declared + ["id"] + SystemProperty.allCases.map(\.rawValue))
        folded = Set(names.map(Identifier.folded))
    }

    /// Notes the columns of `items`.
    mutating func note(_ items: [Item]) {
        for item in items {
            // By name, so that of two names differing in letter case the same one is declared
            // whatever the order of the record's fields.
            for (name, value) in item.values.sorted(by: { $0.key < $1.key }) {
                guard let type = value.type else { continue }
                if let learned = types[name] {
                    if (learned == .integer && type == .double) || (learned == .double && type == .integer) {
                        types[name] = .double
                    }
                    continue
                }
                guard !names.contains(name), !unstorable.contains(name) else { continue }
                guard !folded.contains(Identifier.folded(name)),
                    (try? Identifier.validate(
                        name, kind: "column", reservedPrefixes: Identifier.portablyReservedPrefixes)) != nil
                else {
                    unstorable.insert(name)
                    continue
                }
                names.insert(name)
                folded.insert(Identifier.folded(name))
                types[name] = type
            }
        }
    }

    /// The columns noted since the last call, by name.
    mutating func take() -> [Column] {
        defer { types = [:] }
        return types.keys.sorted().map { Column($0, types[$0]!) }
    }
}
