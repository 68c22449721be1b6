import OfflineSyncPostgres
import OfflineSyncServer

/// The change relay of `serve` processes over one PostgreSQL schema: each committed write is
/// sent with `NOTIFY` on the schema's channel, and what the other processes send is received with
/// `LISTEN` (`PostgresNotificationChannel`).
struct PostgresChangeRelay: ChangeRelay {
    let channel: PostgresNotificationChannel

    init(settings: PostgresConnectionSettings) {
        channel = PostgresNotificationChannel(settings: settings)
    }

    func send(_ change: TableChange) {
        channel.send(change.relayPayload)
    }

    func receive(_ deliver: @escaping @Sendable (TableChange) -> Void, gap: @escaping @Sendable () -> Void)
        async throws
    {
        try await channel.receive(reconnected: gap) { payload in
            if let change = TableChange(relayPayload: payload) { deliver(change) }
        }
    }
}
