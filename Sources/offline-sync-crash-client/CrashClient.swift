import ArgumentParser
import Foundation
import OfflineSync
import OfflineSyncHTTP
import OfflineSyncStores

#if canImport(Glibc)
    import Glibc
#endif

/// `offline-sync-crash-client`: the device of the client crash suite (`scripts/crash-test` and
/// `CrashSuiteTests`), a test device that is not part of the shipped tool.
/// It edits, pushes and pulls against an `offline-sync serve` and is killed with SIGKILL at random
/// points; after each kill the same command, in `verify` mode, reopens the store and checks what
/// survived.
///
/// `work` runs forever. Before each local edit it appends `E <seq> <kind> <id> <text>` to the
/// journal and syncs it to disk; after the edit returns (is acknowledged) it appends `A <seq>`.
/// So the journal lists every acknowledged edit, and at most its last line is an edit that may
/// or may not have happened.
///
/// `verify` (exit 1 and a line per violation when anything is wrong) checks, without pushing:
/// - every acknowledged edit is in the store: each item is as its last acknowledged edit left
///   it (or as the one unacknowledged edit after it would);
/// - every item whose local state differs from the server's has a queued operation;
/// - the server holds no item that no edit of this device made, and no state no edit had;
/// - the delta token is not ahead of the stored pages: every live server item at or before the
///   token is stored locally or has a queued operation.
///
/// `converge` pushes (the local copy wins the conflicts of re-sent operations) and pulls, then
/// checks that the queue and errors are empty and that store, server and journal agree.
@main
struct CrashClient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offline-sync-crash-client",
        abstract: "The device of the client crash suite (scripts/crash-test): work, verify or converge.",
        discussion: """
            'work' edits, pushes and pulls until it is killed, journaling every edit before and after it is \
            acknowledged; 'verify' reopens the store and checks it against the journal and the server (exit 1 \
            and one VIOLATION line per problem); 'converge' pushes and pulls, then checks that store, server \
            and journal agree.

            Example:
              offline-sync-crash-client verify --store sqlite:/tmp/device.sqlite --remote http://127.0.0.1:8080 \\
                --journal /tmp/journal
            """,
    )

    /// What the device does.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case work, verify, converge
    }

    @Argument(help: "work, verify or converge.")
    var mode: Mode

    @Option(help: "The device's store URL.")
    var store: String

    @Option(help: "The server's base URL.")
    var remote: String

    @Option(help: ArgumentHelp("The journal of edits, appended and synced line by line.", valueName: "file"))
    var journal: String

    @Option(help: "The seed of the edits 'work' makes.")
    var seed: UInt64 = 1

    func run() async throws {
        do {
            switch mode {
            case .work:
                try await work()
            case .verify, .converge:
                let problems = try await verify(converging: mode == .converge)
                for problem in problems { print("VIOLATION: \(problem)") }
                print(problems.isEmpty ? "ok" : "\(problems.count) violations")
                if !problems.isEmpty { throw ExitCode.failure }
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            FileHandle.standardError.write(Data("offline-sync-crash-client: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    static let table = TableSchema("crashitem", columns: [Column("text", .string)])
    static let queryId = "crash-all"

    private func work() async throws {
        let device = try CrashDevice(store: store, remote: remote)
        let journal = try CrashJournal(path: journal)
        let items = try device.context.table(Self.table.name)
        var random = SeededRandom(seed: seed)
        var sequence = (try CrashJournal.read(self.journal).last?.sequence ?? 0) + 1
        var known = Set(try device.localItems().keys)
        while true {
            let roll = random.next() % 100
            if roll < 2 {
                // A burst of inserts, so that the next push spans several chunks on their way
                // at once.
                for _ in 0..<(100 + Int(random.next() % 200)) {
                    let id = "item-\(seed)-\(sequence)"
                    let text = "insert-\(sequence)"
                    journal.append("E \(sequence) insert \(id) \(text)")
                    _ = try items.insert(Item(id: id, values: ["text": .string(text)]))
                    known.insert(id)
                    journal.append("A \(sequence)")
                    sequence += 1
                }
            } else if roll < 70 {
                let id: String
                let kind: CrashJournal.Kind
                if known.isEmpty || roll < 30 {
                    id = "item-\(seed)-\(sequence)"
                    kind = .insert
                } else {
                    id = random.pick(known.sorted())
                    kind = roll < 60 ? .update : .delete
                }
                let text = "\(kind.rawValue)-\(sequence)"
                journal.append("E \(sequence) \(kind.rawValue) \(id) \(text)")
                switch kind {
                case .insert:
                    _ = try items.insert(Item(id: id, values: ["text": .string(text)]))
                    known.insert(id)
                case .update:
                    guard var item = try items.lookup(id: id) else {
                        throw OfflineSyncError(.invalidOperation, "\(id) vanished")
                    }
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
                _ = try? await items.pull(queryId: Self.queryId)
            }
        }
    }

    private func verify(converging: Bool) async throws -> [String] {
        let device = try CrashDevice(store: store, remote: remote)
        var problems: [String] = []
        let edits = try CrashJournal.read(journal)
        if converging {
            let push = try await device.context.push()
            if !push.errors.isEmpty { problems.append("the final push left errors: \(push.errors)") }
            _ = try await device.context.table(Self.table.name).pull(queryId: Self.queryId)
        }
        let local = try device.localItems()
        let allowed = CrashJournal.allowedStates(edits)
        for (id, states) in allowed where !states.contains(local[id]) {
            problems.append(
                "item \(id) is \(local[id] ?? "absent") locally; the journal allows \(states.map { $0 ?? "absent" })")
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
        let pending = try device.context.pendingOperations(table: Self.table.name)
        let queued = Set(pending.map(\.itemId))
        let possible = CrashJournal.everyState(edits)
        for (id, item) in server {
            let state: String? = item.isDeleted ? nil : item["text"].stringValue
            guard let states = possible[id] else {
                problems.append("the server holds item \(id) that no edit made")
                continue
            }
            if !states.contains(state) {
                problems.append("the server holds item \(id) as \(state ?? "deleted"), which no edit made")
            }
        }
        for id in Set(local.keys).union(server.keys) {
            let serverState: String? = server[id].flatMap { $0.isDeleted ? nil : $0["text"].stringValue }
            if local[id] != serverState && !queued.contains(id) {
                let errors = try device.context.operationErrors(table: Self.table.name).filter { $0.itemId == id }
                if errors.isEmpty {
                    problems.append(
                        "item \(id) is \(local[id] ?? "absent") locally and \(serverState ?? "absent") on the server, with no queued operation"
                    )
                }
            }
        }
        if let token = try device.context.table(Self.table.name).deltaToken(queryId: Self.queryId) {
            for item in server.values where !item.isDeleted {
                guard let updatedAt = item["updatedAt"].dateValue else { continue }
                let atOrBefore =
                    updatedAt < token.updatedAt || (updatedAt == token.updatedAt && item.id <= (token.itemId ?? ""))
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
                let serverState: String? = server[id].flatMap { $0.isDeleted ? nil : $0["text"].stringValue }
                if !states.contains(serverState) {
                    problems.append("after converging the server has \(id) as \(serverState ?? "absent")")
                }
            }
        }
        await device.close()
        return problems
    }
}

/// The crash suite's journal of edits, appended and synced line by line.
final class CrashJournal {
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
            if fields.first == "E", fields.count == 5, let sequence = Int(fields[1]),
                let kind = Kind(rawValue: fields[2])
            {
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

    /// What the journal allows for each id: the state after its last acknowledged edit (its text, or
    /// `nil` when it does not exist), and the state after a final unacknowledged edit when there is one.
    static func allowedStates(_ edits: [Edit]) -> [String: Set<String?>] {
        var states: [String: String?] = [:]
        var allowed: [String: Set<String?>] = [:]
        for edit in edits {
            let after: String? = edit.kind == .delete ? nil : edit.text
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
    static func everyState(_ edits: [Edit]) -> [String: Set<String?>] {
        var states: [String: Set<String?>] = [:]
        for edit in edits { states[edit.id, default: [nil]].insert(edit.kind == .delete ? nil : edit.text) }
        return states
    }
}

/// The crash suite's device: its store, the server and a sync context over both.
struct CrashDevice {
    let store: any LocalStore
    let remote: HTTPRemote
    let context: SyncContext

    init(store url: String, remote baseURL: String) throws {
        BuiltInStores.register()
        store = try StoreRegistry.shared.makeStore(try StoreConfiguration(parsing: url))
        var remoteConfiguration = HTTPRemote.Configuration(baseURL: baseURL)
        remoteConfiguration.connectTimeout = .seconds(2)
        remote = try HTTPRemote(configuration: remoteConfiguration)
        context = try SyncContext(
            store: store, remote: remote, tables: [CrashClient.table],
            pushHandler: ClientWinsPushHandler(maximumAttempts: 3))
    }

    func localItems() throws -> [String: String] {
        var items: [String: String] = [:]
        for item in try context.table(CrashClient.table.name).read().items {
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
                Query(table: CrashClient.table.name, orderBy: [SortKey("id")], skip: skip, top: 50),
                includeDeleted: true)
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
