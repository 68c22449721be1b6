import ArgumentParser

/// The `offline-sync` command: one subcommand per file in this directory.
@main
struct OfflineSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offline-sync",
        abstract:
            "Work with OfflineSync stores: demo, conformance, inspect, query, import, export, migrate, rekey, serve, sync, token.",
        discussion: """
            A store is named by a URL-like string:
              memory:                                      an in-memory store
              sqlite:PATH[?sync=full|normal]               an SQLite file
              sqlcipher:PATH?key-env=VAR | key-file=PATH   an encrypted SQLite file
              lmdb:PATH[?map-size=1GiB&max-map-size=16GiB&sync=full|meta|none]
            Keys are never written in the URL: key-env names an environment variable and key-file a \
            file that holds 64 hex digits (a raw key) or a passphrase. \
            Without --store, OFFLINE_SYNC_STORE is used, then \(StoreSelection.builtInDefault).

            Examples:
              offline-sync demo --store sqlite:/tmp/demo.sqlite
              offline-sync inspect --store lmdb:./data/store.lmdb
              offline-sync query --store sqlite:./app.sqlite --table todoitem \\
                --filter "complete eq false"
            """,
        subcommands: [
            Demo.self, Conformance.self, Inspect.self, QueryCommand.self, Import.self, Export.self,
            Migrate.self, Rekey.self, Bench.self, Serve.self, Sync.self, BenchServe.self, Token.self, CrashClient.self,
        ]
    )
}
