import ArgumentParser
import Logging
import OfflineSync
import OfflineSyncPostgres
import OfflineSyncStores
import Synchronization

/// Options every subcommand takes: logging.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log each step on standard error (never item contents or keys).")
    var verbose = false

    /// Sets up logging (once per process) and the store registry, and returns the command's logger.
    func start(_ command: String) -> Logger {
        GlobalOptions.bootstrap.withLock { done in
            guard !done else { return }
            done = true
            let level: Logger.Level = verbose ? .debug : .warning
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            BuiltInStores.register()
            PostgresStore.register()
        }
        return Logger(label: "offline-sync.\(command)")
    }

    private static let bootstrap = Locked(false)
}
