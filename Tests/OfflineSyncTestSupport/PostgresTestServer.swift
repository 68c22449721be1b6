import Foundation
import OfflineSync
package import OfflineSyncPostgres

/// A PostgreSQL cluster owned by this test process: `initdb` into a temporary directory, the
/// server on a free loopback port, stopped (`pg_ctl stop -m immediate`) and deleted when the
/// process exits. Started once, on first use; every test store gets its own PostgreSQL schema in
/// it, so tests run in parallel.
///
/// PostgreSQL refuses to run as root: when the tests run as root (as in CI), the server binaries
/// run as the `postgres` system user of the Debian package (`runuser -u postgres --`), in a
/// directory owned by it. Durability is off (`fsync=off`): the cluster is thrown away.
package final class PostgresTestServer: Sendable {
    /// The cluster of this process, or the reason it could not start.
    package static let shared: Result<PostgresTestServer, any Error> = Result { try PostgresTestServer() }

    /// The server, or an error saying why there is none.
    package static func require() throws -> PostgresTestServer {
        try shared.get()
    }

    package let port: Int
    package let directory: String

    private init() throws {
        let binaries = try PostgresTestServer.binaryDirectory()
        directory = try PostgresTestServer.makeDirectory()
        let data = directory + "/data"
        try PostgresTestServer.run(
            binaries + "/initdb",
            ["-D", data, "-A", "trust", "-U", "postgres", "--encoding=UTF8", "--locale=C", "--no-sync"])
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try PostgresTestServer.freePort()
            do {
                try PostgresTestServer.run(
                    binaries + "/pg_ctl",
                    [
                        "-D", data, "-l", directory + "/server.log", "-w", "-t", "60", "-o",
                        "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400",
                        "start",
                    ])
                self.port = port
                PostgresTestServer.stopCommand = [binaries + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"]
                PostgresTestServer.removedDirectory = directory
                atexit {
                    if let command = PostgresTestServer.stopCommand {
                        try? PostgresTestServer.run(command[0], Array(command.dropFirst()))
                    }
                    if let directory = PostgresTestServer.removedDirectory {
                        try? FileManager.default.removeItem(atPath: directory)
                    }
                }
                return
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw lastError!
    }

    nonisolated(unsafe) private static var stopCommand: [String]?
    nonisolated(unsafe) private static var removedDirectory: String?

    /// Settings for a store in a new, empty PostgreSQL schema.
    package func freshSettings() -> PostgresConnectionSettings {
        settings(schema: "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
    }

    /// Settings for a store in `schema`.
    package func settings(schema: String) -> PostgresConnectionSettings {
        PostgresConnectionSettings(
            host: "127.0.0.1", port: port, user: "postgres", database: "postgres", schema: schema)
    }

    /// The store URL of a new, empty PostgreSQL schema.
    package func freshURL() -> String {
        "postgres://postgres@127.0.0.1:\(port)/postgres?schema=" + freshSettings().schema
    }

    private static func binaryDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let candidate = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: candidate + "/initdb") { return candidate }
        }
        throw TestServerError(
            "no PostgreSQL server binaries under \(root)/*/bin; install them with apt-get install -y postgresql (scripts/install-deps does)"
        )
    }

    private static var isRoot: Bool { getuid() == 0 }

    /// The directory to make the cluster in: the temporary directory, or `/tmp` when this
    /// process is root and the `postgres` user could not reach the temporary directory (a
    /// `mktemp -d` directory is mode 0700, as `scripts/test` makes TMPDIR).
    private static func baseDirectory() -> String {
        let temporary = NSTemporaryDirectory()
        guard isRoot else { return temporary }
        var path = URL(fileURLWithPath: temporary).standardizedFileURL.path
        while path != "/" && !path.isEmpty {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IXOTH != 0 else { return "/tmp/" }
            path = (path as NSString).deletingLastPathComponent
        }
        return temporary
    }

    private static func makeDirectory() throws -> String {
        let path = baseDirectory() + "offline-sync-postgres-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if isRoot {
            try run("/bin/chown", ["postgres:postgres", path], asServerUser: false)
        }
        return path
    }

    /// Runs a program to its end (as the `postgres` user when this process is root) and throws
    /// with its output when it fails. `posix_spawn` and `waitpid` rather than Foundation's
    /// `Process`, whose exit monitoring missed the end of `runuser` here; the output goes to a file,
    /// not a pipe, because the server started by `pg_ctl start` inherits it and keeps it open.
    package static func run(_ program: String, _ arguments: [String], asServerUser: Bool = true) throws {
        let command =
            asServerUser && isRoot
            ? ["/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let outputPath = NSTemporaryDirectory() + "offline-sync-postgres-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestServerError("cannot start \(command[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestServerError("waitpid for \(program) failed: errno \(errno)") }
        }
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw TestServerError("\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }

    /// A loopback port that was free a moment ago (bound to port 0, read back, released when the
    /// reservation goes at the end of this call).
    private static func freePort() throws -> Int {
        try RefusingPort().port
    }
}

/// Why the test server could not start or stop.
package struct TestServerError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
