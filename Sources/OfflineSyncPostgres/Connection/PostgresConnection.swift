import CLibPQ
import OfflineSync

/// One libpq connection (`PGconn`) and its cache of server-side prepared statements.
///
/// Not thread-safe: ``PostgresStore`` confines it behind a lock. Every statement with values is
/// prepared once (`PQprepare`, named `s1`, `s2`, … per connection) and executed with
/// `PQexecPrepared`, values bound in binary format and results read in binary format, so no value
/// is ever spliced into SQL and no text conversion can change a double or a date. `package`
/// so the raw libpq baseline of `offline-sync bench` runs on the same connection code.
package final class PostgresConnection {
    /// The prepared statements kept per connection before the cache is emptied
    /// (`DEALLOCATE ALL`), so a stream of distinct queries cannot grow the server's memory.
    static let statementCacheLimit = 512

    private(set) var handle: OpaquePointer?
    /// The prepared statements by SQL text.
    private var statements: [String: String] = [:]
    private var nextStatement = 1
    /// Where the connection goes, for messages (never a password).
    let location: String

    /// Connects with libpq keyword/value parameters (a password among them is never kept or
    /// shown). Throws ``PostgresError`` with libpq's message when the connection fails.
    package init(parameters: [(String, String)], location: String) throws {
        self.location = location
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
        guard let connection else {
            throw PostgresError(message: "out of memory", context: "connecting to \(location)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresConnection.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(
                message: message,
                context:
                    "connecting to \(location) (check that the server runs and accepts this user; a password comes from PGPASSWORD, password-env=VAR or ~/.pgpass)"
            )
        }
        // NOTICE messages (e.g. "relation already exists, skipping") would go to stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        close()
    }

    /// Closes the connection; further calls throw.
    package func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements = [:]
    }

    /// A server parameter reported at connection start, e.g. `server_encoding` or `server_version`.
    func serverParameter(_ name: String) -> String? {
        guard let handle, let value = PQparameterStatus(handle, name) else { return nil }
        return String(cString: value)
    }

    /// The server's version number, e.g. 150018 for 15.18.
    var serverVersion: Int {
        handle.map { Int(PQserverVersion($0)) } ?? 0
    }

    /// `true` inside a transaction block (also when it failed and awaits its rollback).
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// `true` when a transaction block failed and only a rollback is accepted.
    var isInFailedTransaction: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_INERROR
    }

    /// `true` when libpq has noticed that the connection is lost.
    var isBroken: Bool {
        guard let handle else { return false }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Re-establishes a connection that the server or the network dropped (outside a transaction
    /// only: a broken transaction is lost with its connection). Prepared statements die with the
    /// old session, so the cache is emptied.
    func reconnectIfBroken() throws {
        let handle = try requireHandle()
        guard PQstatus(handle) != CONNECTION_OK else { return }
        statements = [:]
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(
                message: PostgresConnection.trimmed(PQerrorMessage(handle)),
                context: "reconnecting to \(location) after the connection was lost")
        }
    }

    /// Runs SQL without values (one or more statements, the simple query protocol) and returns the
    /// command tag of the last one, e.g. `COMMIT` or `ROLLBACK`.
    @discardableResult
    package func execute(_ sql: String) throws -> String {
        let handle = try requireHandle()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql, doing: "running a statement on \(location)")
        return String(cString: PQcmdStatus(result))
    }

    /// Runs SQL without values (one or more statements, the simple query protocol) and returns the
    /// first column of the first row of the last statement's result, as text (`nil` for no row or
    /// a null).
    func executeReturningValue(_ sql: String) throws -> String? {
        let handle = try requireHandle()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql, doing: "running a statement on \(location)")
        guard PQntuples(result) > 0, PQnfields(result) > 0, PQgetisnull(result, 0, 0) == 0 else { return nil }
        return String(cString: PQgetvalue(result, 0, 0))
    }

    /// Runs a prepared statement with bound values, calls `body` for each row of its result, and
    /// returns the number of rows the statement affected (for `INSERT`, `UPDATE`, `DELETE`).
    @discardableResult
    package func run(
        _ sql: String, _ parameters: [PostgresParameter] = [], forEachRow body: (PostgresRow) throws -> Void = { _ in }
    )
        throws -> Int
    {
        let handle = try requireHandle()
        let name = try prepared(sql, parameters, handle)
        let result = PostgresParameter.withBuffers(parameters) { values, lengths, formats in
            PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        defer { PQclear(result) }
        try check(result, sql: sql, doing: "running a statement on \(location)")
        let rows = PQntuples(result)
        for row in 0..<rows {
            try body(PostgresRow(result: result!, row: row))
        }
        let affected = String(cString: PQcmdTuples(result))
        return Int(affected) ?? Int(rows)
    }

    /// Runs `COPY … FROM STDIN` (text format) with `data` as its input and returns the number
    /// of rows copied.
    @discardableResult
    package func copy(_ sql: String, data: [UInt8]) throws -> Int {
        let handle = try requireHandle()
        let start = PQexec(handle, sql)
        let startStatus = start.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if startStatus != PGRES_COPY_IN {
            defer { PQclear(start) }
            try check(start, sql: sql, doing: "starting COPY on \(location)")
            throw PostgresError(message: "the server did not enter COPY mode", context: "COPY on \(location)", sql: sql)
        }
        PQclear(start)
        let sent =
            data.isEmpty
            ? 1
            : data.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    PQputCopyData(handle, $0, Int32(buffer.count))
                }
            }
        let ended = PQputCopyEnd(handle, sent == 1 ? nil : "sending COPY data failed")
        var copied = 0
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            do {
                try check(result, sql: sql, doing: "copying rows on \(location)")
                copied += Int(String(cString: PQcmdTuples(result))) ?? 0
            } catch {
                failure = failure ?? error
            }
            PQclear(result)
        }
        if let failure { throw failure }
        guard sent == 1, ended == 1 else {
            throw PostgresError(
                message: PostgresConnection.trimmed(PQerrorMessage(handle)),
                context: "sending COPY data to \(location)",
                sql: sql)
        }
        return copied
    }

    /// The name of the prepared statement for `sql`, preparing it on first use.
    private func prepared(_ sql: String, _ parameters: [PostgresParameter], _ handle: OpaquePointer) throws -> String {
        if let name = statements[sql] { return name }
        if statements.count >= PostgresConnection.statementCacheLimit, !isInTransaction {
            try execute("DEALLOCATE ALL")
            statements = [:]
        }
        let name = "s\(nextStatement)"
        nextStatement += 1
        let types = parameters.map(\.type)
        let result = PQprepare(handle, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        try check(result, sql: sql, doing: "preparing a statement on \(location)")
        statements[sql] = name
        return name
    }

    private func requireHandle() throws -> OpaquePointer {
        guard let handle else {
            throw OfflineSyncError(.notOpen, "the connection to \(location) is closed; open the store first")
        }
        return handle
    }

    /// Throws unless `result` reports success.
    private func check(_ result: OpaquePointer?, sql: String, doing context: String) throws {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return }
        func field(_ code: Character) -> String? {
            guard let result, let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: value)
        }
        var message = field("M") ?? handle.map { PostgresConnection.trimmed(PQerrorMessage($0)) } ?? "no connection"
        if let detail = field("D") { message += " (\(detail))" }
        if let hint = field("H") { message += "; hint: \(hint)" }
        throw PostgresError(sqlState: field("C"), message: message, context: context, sql: sql)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq error" }
        var text = String(cString: message)
        while text.last?.isNewline == true || text.last == " " { text.removeLast() }
        return text
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    package import Darwin
#endif
