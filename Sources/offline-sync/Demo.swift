import ArgumentParser
import Logging
import OfflineSync

/// `offline-sync demo`: the offline tutorial of Azure Mobile Apps, narrated.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Walk through offline sync step by step, with an in-process or a real server.",
        discussion: """
            Declares a todoitem table and observes it with a live query (the observed list is \
            printed again after each pull, local edit and push that changed it), pulls from an \
            in-process server, goes offline, adds and completes items, closes and reopens the store, shows the pending queue, comes back \
            online, pushes, meets a conflict made by another device and resolves it, pulls, and \
            shows the final state on both sides. A last step runs two devices on one server, each kept \
            in sync by a Replicator with the server's change stream: an edit on one appears in the \
            other's observed list with no pull call, and the delay is printed.

            Without --store the demo uses a new store of the default backend ($OFFLINE_SYNC_STORE, \
            else SQLite) in a temporary directory and removes it at the end. With --store it keeps \
            the store; a store that already holds todoitem data is refused unless --reset purges it.

            With --remote the same steps run against a real server of the Azure Mobile Apps table \
            protocol 2.0.0 (such as 'offline-sync serve'): the three starter items are inserted into \
            its todoitem table where missing, going offline makes every request of this device fail \
            with a network error, and the other device edits over its own HTTP connection.

            Examples:
              offline-sync demo
              offline-sync demo --store sqlite:/tmp/demo.sqlite
              offline-sync demo --store "lmdb:/tmp/demo.lmdb?map-size=64MiB" --reset
              offline-sync demo --remote http://127.0.0.1:8080
              offline-sync demo --remote http://127.0.0.1:8080 \\
                --auth-secret-env AUTH_SECRET
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: StoreSelection
    @Flag(help: "Purge the todoitem table (items, queue, tokens) of an existing store first.") var reset = false
    @Option(help: ArgumentHelp("Sync with the server at this URL instead of an in-process one.", valueName: "url"))
    var remote: String?
    @Option(
        help: ArgumentHelp(
            "With --remote: sign in to a server started with --auth-secret-env VAR, minting the demo user's tokens with the same secret.",
            valueName: "VAR"))
    var authSecretEnv: String?

    /// The todoitem table, derived from ``TodoItem``.
    static func todoSchema() throws -> TableSchema { try TableSchema(TodoItem.self) }
    static let queryId = "allTodoItems"

    func run() async throws {
        let logger = global.start("demo")
        var configuration = try selection.configuration()
        var scratch: ScratchDirectory?
        if selection.store == nil, configuration.path != nil {
            let directory = try ScratchDirectory(near: nil, purpose: "demo")
            scratch = directory
            configuration = try directory.freshLocation(for: configuration)
        }
        defer { scratch?.remove() }
        guard authSecretEnv == nil || remote != nil else {
            throw ValidationError("--auth-secret-env signs in to a server: use it with --remote URL")
        }
        let signIn = try authSecretEnv.map { DemoServer.SignIn(secret: try Serve.secret(environment: $0)) }
        let server =
            if let remote {
                try await DemoServer.http(remote, signIn: signIn)
            } else {
                try await DemoServer.inProcess()
            }
        var script = DemoScript(configuration: configuration, reset: reset, keepsStore: scratch == nil, logger: logger)
        do {
            try await script.run(server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
        print("\n\(script.stepsTaken + 1). Two devices in real time: an edit on one appears in the other's observed list, no pull call")
        try await DemoRealtime(remoteURL: remote, authentication: signIn?.authentication).run { print("   " + $0) }
    }
}

/// One row of the demo's todoitem table, as the app sees it: a typed model, from which the
/// table's schema is derived (``Demo/todoSchema()``). `version` is a system property, read from
/// the store and never written. A row stored without `complete` (by another client of the
/// server) reads as not complete.
struct TodoItem: SyncModel, Hashable {
    static let tableName = "todoitem"
    static let schemaOptions: [ModelSchemaOption<TodoItem>] = [.default(\.complete, false)]

    var id: String
    var text: String
    var complete: Bool
    var version: String?
}

/// The steps of the demo, printed as they happen.
struct DemoScript {
    let configuration: StoreConfiguration
    let reset: Bool
    let keepsStore: Bool
    let logger: Logger
    private var step = 0
    /// The number of steps narrated so far.
    var stepsTaken: Int { step }
    /// The live query the demo watches after reopening: every todo item by text, then id.
    private var observed: ModelObservation<TodoItem>.Iterator?
    private var lastObserved: [TodoItem]?
    static let observedQuery = ModelQuery<TodoItem>.all.order(by: \.text).order(by: \.id)

    init(configuration: StoreConfiguration, reset: Bool, keepsStore: Bool, logger: Logger) {
        self.configuration = configuration
        self.reset = reset
        self.keepsStore = keepsStore
        self.logger = logger
    }

    mutating func run(_ server: DemoServer) async throws {
        let remote = server.device
        print("OfflineSync demo: the offline tutorial, step by step")
        say("local store:  \(configuration)\(keepsStore || configuration.path == nil ? "" : " (temporary)")")
        say("remote:       \(server.name) holding \(try await server.items().count) todo items")

        let store = try StoreAccess.open(configuration, schema: StoreSchema([]), logger: logger)
        try store.close()
        begin("Declare the todoitem table")
        var context = try SyncContext(store: store, remote: remote, tables: [Demo.todoSchema()])
        var todo = try context.table(TodoItem.self, undecodableRows: DemoScript.skipping)
        say(
            "columns: id, text (string), complete (bool), and the system columns createdAt, updatedAt, version, deleted"
        )
        say("backend: \(store.info.backend)" + (store.info.properties.first.map { ", \($0.name) \($0.value)" } ?? ""))
        try await clearEarlierRun(todo, context: context)

        begin("Observe the todo list (a live query: printed again below whenever a commit changed it)")
        observed = try todo.observe(DemoScript.observedQuery).makeAsyncIterator()
        try await printObserved(todo, after: "the first read")

        begin("Pull from the server (incremental, query id \"\(Demo.queryId)\")")
        let first = try await todo.pull(queryId: Demo.queryId)
        say(
            "received \(counted(first.received, "item")) in \(counted(first.requests, "request")); delta token now \(try todo.untyped.deltaToken(queryId: Demo.queryId)?.description ?? "none")"
        )
        show(DemoScript.ordered(try todo.read()))
        try await printObserved(todo, after: "the pull")

        begin("Go offline: from now on this device cannot reach the server")
        remote.setOffline(true)

        begin("Add two items and complete one, while offline")
        let added = try todo.insert([
            TodoItem(id: "", text: "Buy milk", complete: false),
            TodoItem(id: "", text: "Walk the dog", complete: false),
        ])
        say("+ \"Buy milk\" (id \(added[0].id.prefix(8))…), + \"Walk the dog\" (id \(added[1].id.prefix(8))…)")
        var callMom = try todo.lookup(id: "2") ?? TodoItem(id: "2", text: "Call mom", complete: false)
        callMom.complete = true
        try todo.update(callMom)
        say("✓ \"Call mom\"")
        say("local writes succeed at once; \(try context.pendingOperationCount()) operations are queued")
        try await printObserved(todo, after: "the local edits")
        do {
            try await context.push()
            say("push unexpectedly succeeded")
        } catch let failure as PushFailure {
            say("push → \(failure.status.rawValue): the queue is kept (\(try context.pendingOperationCount()) pending)")
        }

        begin("Close the store and reopen it, as after the app was killed")
        try context.close()
        let reopened = try reopen(store)
        context = try SyncContext(store: reopened, remote: remote, tables: [Demo.todoSchema()])
        todo = try context.table(TodoItem.self, undecodableRows: DemoScript.skipping)
        say(
            "reopened \(configuration.scheme): \(try todo.read().count) items, \(try context.pendingOperationCount()) pending operations"
        )
        observed = try todo.observe(DemoScript.observedQuery).makeAsyncIterator()
        lastObserved = nil
        try await printObserved(todo, after: "reopening")

        begin("The pending queue, in push order")
        showQueue(try context.pendingOperations())
        say("server still holds \(try await server.items().count) items: nothing left the device")

        begin("Back online: push")
        remote.setOffline(false)
        let pushed = try await context.push()
        say("\(pushed.completedCount) operations sent; the server now holds \(try await server.items().count) items")
        try await printObserved(todo, after: "the push (the server's versions arrived)")

        begin("Another device edits \"Buy milk\" on the server while we complete it here")
        let milkId = added[0].id
        try await server.changeFromAnotherDevice(id: milkId) { $0["text"] = "Buy milk (2 litres)" }
        say("other device: text → \"Buy milk (2 litres)\" (the server's version changes)")
        var milk = try todo.lookup(id: milkId) ?? TodoItem(id: milkId, text: "Buy milk", complete: false)
        milk.complete = true
        try todo.update(milk)
        say("this device:  complete → true (queued with the version it last saw)")
        try await printObserved(todo, after: "the local edit")
        let conflicted = try await pushCollectingErrors(context)
        guard let conflict = conflicted.first else {
            throw OfflineSyncError(
                .invalidOperation, "the demo expected a conflict on \"Buy milk\", but the push succeeded")
        }
        say(
            "push → conflict: \(conflict.kind.rawValue) of \(conflict.itemId.prefix(8))… answered HTTP \(conflict.status.map(String.init) ?? "?"); kept with the server's copy for the app to resolve"
        )
        say(
            "server copy: \(describe(try todo.models(from: conflict.serverItem.map { [$0] } ?? []).first)); local copy: \(describe(try todo.lookup(id: milkId)))"
        )

        begin("Resolve the conflict: keep the server's text, add our completion, retry with the server's version")
        guard var merged = conflict.serverItem else {
            throw OfflineSyncError(
                .invalidOperation, "the conflict on \"Buy milk\" carries no server copy to merge with")
        }
        merged["complete"] = true
        try context.resolve(conflict, .keepAndRetry(merged))
        let retried = try await context.push()
        say(
            "push → \(retried.completedCount) operation sent, \(retried.errors.count) refused; \(try context.operationErrors().count) conflicts left"
        )
        try await printObserved(todo, after: "the resolution and the push")

        begin("Pull again (incremental: only what changed since the delta token)")
        let second = try await todo.pull(queryId: Demo.queryId)
        say(
            "received \(second.received) changed items; delta token now \(try todo.untyped.deltaToken(queryId: Demo.queryId)?.description ?? "none")"
        )
        try await printObserved(todo, after: "the pull")

        begin("Final state on both sides")
        let local = DemoScript.ordered(try todo.read())
        let served = DemoScript.ordered(try todo.models(from: await server.items()))
        say("this device:")
        show(local)
        say("server:")
        show(served)
        let agree = local == served
        say(
            agree
                ? "local and server agree: \(local.count) items, \(try context.pendingOperationCount()) pending operations"
                : "local and server differ")
        try context.close()
        guard agree else {
            throw OfflineSyncError(.invalidOperation, "the demo ended with the local store and the server out of step")
        }
    }

    /// Rows another client stored in a shape the demo cannot read (no text, say) are left out of
    /// the lists and named, instead of ending the demo.
    static let skipping = UndecodableRowPolicy.skip { row in
        print("   (skipped \(row))")
    }

    /// Items by text, then id (a server used by earlier runs holds several items of one text).
    static func ordered(_ items: [TodoItem]) -> [TodoItem] {
        items.sorted { ($0.text, $0.id) < ($1.text, $1.id) }
    }

    private func clearEarlierRun(_ todo: ModelTable<TodoItem>, context: SyncContext) async throws {
        let earlier = try todo.read().count + context.pendingOperationCount(table: "todoitem")
        guard earlier > 0 else { return }
        guard reset else {
            try context.close()
            throw OfflineSyncError(
                .configuration,
                "\(configuration) already holds todoitem data or operations from an earlier run; pass --reset to purge them, or name a new store"
            )
        }
        let purged = try await todo.purge(force: true)
        try await todo.untyped.resetDeltaToken(queryId: Demo.queryId)
        say("--reset: purged \(purged) items and the pending operations of an earlier run")
    }

    /// A new store instance on the same data (the same instance for `memory:`, which keeps its
    /// data only while the instance lives).
    private func reopen(_ store: any LocalStore) throws -> any LocalStore {
        configuration.path == nil ? store : try StoreRegistry.shared.makeStore(configuration)
    }

    private func pushCollectingErrors(_ context: SyncContext) async throws -> [OperationError] {
        do {
            return try await context.push().errors
        } catch let failure as PushFailure where failure.status == .complete {
            return failure.result.errors
        }
    }

    /// Prints the results the live query yields until it shows what the table holds now (nothing
    /// when the list did not change since it was last printed: an observation yields only
    /// changed results).
    private mutating func printObserved(_ todo: ModelTable<TodoItem>, after event: String) async throws {
        guard var iterator = observed else { return }
        defer { observed = iterator }
        let current = try todo.read(DemoScript.observedQuery)
        guard current != lastObserved else {
            say("observed list: unchanged after \(event)")
            return
        }
        while let result = try await iterator.next() {
            lastObserved = result
            say("observed list after \(event): \(result.count) items")
            for item in result {
                say("  \(item.complete ? "[x]" : "[ ]") \(item.text)  (version \(item.version ?? "none"))")
            }
            if result == current { break }
        }
    }

    private mutating func begin(_ title: String) {
        step += 1
        print("\n\(step). \(title)")
    }

    private func say(_ text: String) {
        print("   " + text)
    }

    private func describe(_ item: TodoItem?) -> String {
        guard let item else { return "none" }
        return "text \"\(item.text)\", complete \(item.complete), version \(item.version ?? "none")"
    }

    private func show(_ items: [TodoItem]) {
        var table = TextTable(headers: ["text", "complete", "id", "version"])
        table.rows = items.map { [$0.text, $0.complete ? "true" : "false", String($0.id.prefix(8)), $0.version ?? ""] }
        print(table.rendered.split(separator: "\n").map { "     " + $0 }.joined(separator: "\n"))
    }

    private func showQueue(_ operations: [QueuedOperation]) {
        var table = TextTable(headers: ["#", "kind", "table", "item", "state"])
        table.rows = operations.map {
            [String($0.sequence), $0.kind.rawValue, $0.table, String($0.itemId.prefix(8)), $0.state.rawValue]
        }
        print(table.rendered.split(separator: "\n").map { "     " + $0 }.joined(separator: "\n"))
    }
}
