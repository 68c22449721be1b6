// The client of the crash suite (`scripts/crash-test`): a device that edits, pushes and pulls
// against an `offline-sync serve`, and is killed with SIGKILL at random points; after each kill
// the same program, in `verify` mode, reopens the store and checks what survived.
//
//   sync-crash-client work     --store URL --remote URL --journal FILE --seed N
//   sync-crash-client verify   --store URL --remote URL --journal FILE
//   sync-crash-client converge --store URL --remote URL --journal FILE
//
// `work` runs forever. Before each local edit it appends `E <seq> <kind> <id> <text>` to the
// journal and syncs it to disk; after the edit returns (is acknowledged) it appends `A <seq>`.
// So the journal lists every acknowledged edit, and at most its last line is an edit that may
// or may not have happened.
//
// `verify` (exit 1 and a line per violation when anything is wrong) checks, without pushing:
// - every acknowledged edit is in the store: each item is as its last acknowledged edit left
//   it (or as the one unacknowledged edit after it would);
// - every item whose local state differs from the server's has a queued operation;
// - the server holds no item that no edit of this device made, and no state no edit had;
// - the delta token is not ahead of the stored pages: every live server item at or before the
//   token is stored locally or has a queued operation.
// `converge` pushes (the local copy wins the conflicts of re-sent operations) and pulls, then
// checks that the queue and errors are empty and that store, server and journal agree.

import Foundation
import OfflineSync
import OfflineSyncHTTP
import OfflineSyncStores

#if canImport(Glibc)
    import Glibc
#endif

let table = TableSchema("crashitem", columns: [Column("text", .string)])
let queryId = "crash-all"

struct Arguments {
    var mode = ""
    var store = ""
    var remote = ""
    var journal = ""
    var seed: UInt64 = 1

    init(_ arguments: [String]) throws {
        guard let mode = arguments.first else { throw usage("no mode") }
        self.mode = mode
        var rest = arguments.dropFirst()
        while let name = rest.popFirst() {
            guard let value = rest.popFirst() else { throw usage("\(name) needs a value") }
            switch name {
            case "--store": store = value
            case "--remote": remote = value
            case "--journal": journal = value
            case "--seed":
                guard let number = UInt64(value) else { throw usage("--seed takes a number") }
                seed = number
            default: throw usage("unknown option \(name)")
            }
        }
        guard !store.isEmpty, !remote.isEmpty, !journal.isEmpty else { throw usage("--store, --remote and --journal are required") }
    }
}

func usage(_ problem: String) -> OfflineSyncError {
    OfflineSyncError(
        .configuration,
        "\(problem); usage: sync-crash-client work|verify|converge --store URL --remote URL --journal FILE [--seed N]")
}

/// The journal of edits, appended and synced line by line.
final class Journal {
    enum Kind: String { case insert, update, delete }
    struct Edit {
        let sequence: Int
        let kind: Kind
        let id: String
        let text: String
        var acknowledged: Bool
    }

    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OfflineSyncError(.configuration, "cannot open the journal \(path) (errno \(errno))")
        }
    }

    deinit { close(descriptor) }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
    }

    /// The edits of a journal, in order; a torn last line is ignored.
    static func read(_ path: String) throws -> [Edit] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var edits: [Edit] = []
        var positions: [Int: Int] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            if fields.first == "E", fields.count == 5, let sequence = Int(fields[1]), let kind = Kind(rawValue: fields[2]) {
                positions[sequence] = edits.count
                edits.append(Edit(sequence: sequence, kind: kind, id: fields[3], text: fields[4], acknowledged: false))
            } else if fields.first == "A", fields.count == 2, let sequence = Int(fields[1]),
                let position = positions[sequence]
            {
                edits[position].acknowledged = true
            }
        }
        return edits
    }
}

/// An item's state: its text, or `nil` when it does not exist.
typealias State = String?

/// What the journal allows for each id: the state after its last acknowledged edit, and the
/// state after a final unacknowledged edit when there is one.
func allowedStates(_ edits: [Journal.Edit]) -> [String: Set<State>] {
    var states: [String: State] = [:]
    var allowed: [String: Set<State>] = [:]
    for edit in edits {
        let after: State = edit.kind == .delete ? nil : edit.text
        if edit.acknowledged {
            states[edit.id] = after
            allowed[edit.id] = [after]
        } else {
            // Only the last line can be unacknowledged: either outcome is correct.
            allowed[edit.id, default: [states[edit.id] ?? nil]].insert(after)
        }
    }
    return allowed
}

/// Every state any edit gave an id.
func everyState(_ edits: [Journal.Edit]) -> [String: Set<State>] {
    var states: [String: Set<State>] = [:]
    for edit in edits { states[edit.id, default: [nil]].insert(edit.kind == .delete ? nil : edit.text) }
    return states
}

struct Device {
    let store: any LocalStore
    let remote: HTTPRemote
    let context: SyncContext

    init(_ arguments: Arguments) throws {
        BuiltInStores.register()
        let configuration = try StoreConfiguration(parsing: arguments.store)
        store = try StoreRegistry.shared.makeStore(configuration)
        var remoteConfiguration = HTTPRemote.Configuration(baseURL: arguments.remote)
        remoteConfiguration.connectTimeout = .seconds(2)
        remote = try HTTPRemote(configuration: remoteConfiguration)
        context = try SyncContext(
            store: store, remote: remote, tables: [table], pushHandler: ClientWinsPushHandler(maximumAttempts: 3))
    }

    func localItems() throws -> [String: String] {
        var items: [String: String] = [:]
        for item in try context.table(table.name).read().items {
            items[item.id] = item["text"].stringValue ?? ""
        }
        return items
    }

    /// The server's items (deleted ones included), by id.
    func serverItems() async throws -> [String: Item] {
        var items: [String: Item] = [:]
        var skip = 0
        while true {
            let page = try await remote.readPage(
                Query(table: table.name, orderBy: [SortKey("id")], skip: skip, top: 50), includeDeleted: true)
            for item in page.items { items[item.id] = item }
            if page.items.isEmpty { return items }
            skip += page.items.count
        }
    }

    func close() async {
        try? context.close()
        try? await remote.shutdown()
    }
}

func work(_ arguments: Arguments) async throws {
    let device = try Device(arguments)
    let journal = try Journal(path: arguments.journal)
    let items = try device.context.table(table.name)
    var random = SplitMix(seed: arguments.seed)
    var sequence = (try Journal.read(arguments.journal).last?.sequence ?? 0) + 1
    var known = Set(try device.localItems().keys)
    while true {
        let roll = random.next() % 100
        if roll < 70 {
            let id: String
            let kind: Journal.Kind
            if known.isEmpty || roll < 30 {
                id = "item-\(arguments.seed)-\(sequence)"
                kind = .insert
            } else {
                id = known.sorted()[Int(random.next() % UInt64(known.count))]
                kind = roll < 60 ? .update : .delete
            }
            let text = "\(kind.rawValue)-\(sequence)"
            journal.append("E \(sequence) \(kind.rawValue) \(id) \(text)")
            switch kind {
            case .insert:
                _ = try items.insert(Item(id: id, values: ["text": .string(text)]))
                known.insert(id)
            case .update:
                guard var item = try items.lookup(id: id) else { throw OfflineSyncError(.invalidOperation, "\(id) vanished") }
                item["text"] = .string(text)
                try items.update(item)
            case .delete:
                try items.delete(id: id)
                known.remove(id)
            }
            journal.append("A \(sequence)")
            sequence += 1
        } else if roll < 85 {
            _ = try? await device.context.push()
        } else {
            _ = try? await items.pull(queryId: queryId)
        }
    }
}

func verify(_ arguments: Arguments, converging: Bool) async throws -> [String] {
    let device = try Device(arguments)
    var problems: [String] = []
    let edits = try Journal.read(arguments.journal)
    if converging {
        let push = try await device.context.push()
        if !push.errors.isEmpty { problems.append("the final push left errors: \(push.errors)") }
        _ = try await device.context.table(table.name).pull(queryId: queryId)
    }
    let local = try device.localItems()
    let allowed = allowedStates(edits)
    for (id, states) in allowed where !states.contains(local[id]) {
        problems.append("item \(id) is \(local[id] ?? "absent") locally; the journal allows \(states.map { $0 ?? "absent" })")
    }
    for id in local.keys where allowed[id] == nil {
        problems.append("item \(id) is stored locally but no edit made it")
    }
    let server: [String: Item]
    do {
        server = try await device.serverItems()
    } catch {
        problems.append("the server could not be read: \(error)")
        await device.close()
        return problems
    }
    let pending = try device.context.pendingOperations(table: table.name)
    let queued = Set(pending.map(\.itemId))
    let possible = everyState(edits)
    for (id, item) in server {
        let state: State = item.isDeleted ? nil : item["text"].stringValue
        guard let states = possible[id] else {
            problems.append("the server holds item \(id) that no edit made")
            continue
        }
        if !states.contains(state) { problems.append("the server holds item \(id) as \(state ?? "deleted"), which no edit made") }
    }
    for id in Set(local.keys).union(server.keys) {
        let serverState: State = server[id].flatMap { $0.isDeleted ? nil : $0["text"].stringValue }
        if local[id] != serverState && !queued.contains(id) {
            let errors = try device.context.operationErrors(table: table.name).filter { $0.itemId == id }
            if errors.isEmpty {
                problems.append(
                    "item \(id) is \(local[id] ?? "absent") locally and \(serverState ?? "absent") on the server, with no queued operation"
                )
            }
        }
    }
    if let token = try device.context.table(table.name).deltaToken(queryId: queryId) {
        for item in server.values where !item.isDeleted {
            guard let updatedAt = item["updatedAt"].dateValue else { continue }
            let atOrBefore = updatedAt < token.updatedAt || (updatedAt == token.updatedAt && item.id <= (token.itemId ?? ""))
            if atOrBefore && local[item.id] == nil && !queued.contains(item.id) {
                problems.append("the delta token \(token) is ahead of the stored pages: item \(item.id) is missing")
            }
        }
    }
    if converging {
        if !pending.isEmpty { problems.append("\(pending.count) operations are still queued after the final push") }
        let errors = try device.context.operationErrors()
        if !errors.isEmpty { problems.append("\(errors.count) operation errors remain after the final push") }
        for (id, states) in allowed {
            let serverState: State = server[id].flatMap { $0.isDeleted ? nil : $0["text"].stringValue }
            if !states.contains(serverState) {
                problems.append("after converging the server has \(id) as \(serverState ?? "absent")")
            }
        }
    }
    await device.close()
    return problems
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

do {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    switch arguments.mode {
    case "work":
        try await work(arguments)
    case "verify", "converge":
        let problems = try await verify(arguments, converging: arguments.mode == "converge")
        for problem in problems { print("VIOLATION: \(problem)") }
        print(problems.isEmpty ? "ok" : "\(problems.count) violations")
        exit(problems.isEmpty ? 0 : 1)
    default:
        throw usage("unknown mode '\(arguments.mode)'")
    }
} catch {
    FileHandle.standardError.write(Data("sync-crash-client: \(error)\n".utf8))
    exit(2)
}
