import OfflineSync
import OfflineSyncPostgres
import Testing

/// Reading `postgres://` store URLs.
@Suite struct PostgresConnectionSettingsTests {
    private func settings(_ text: String) throws -> PostgresConnectionSettings {
        let registry = StoreRegistry()
        registry.register(.postgres) { try PostgresStore(configuration: $0) }
        return try PostgresConnectionSettings(registry.configuration(parsing: text))
    }

    @Test func aURLNamesUserHostPortDatabaseAndSchema() throws {
        let parsed = try settings("postgres://app@db.example:6543/appdb?schema=tenant_1")
        #expect(parsed.user == "app")
        #expect(parsed.host == "db.example")
        #expect(parsed.port == 6543)
        #expect(parsed.database == "appdb")
        #expect(parsed.schema == "tenant_1")
        #expect(parsed.description == "postgres://app@db.example:6543/appdb?schema=tenant_1")
    }

    @Test func leftOutPartsFallBackToLibpqDefaultsAndTheSchemaToPublic() throws {
        let parsed = try settings("postgres:///appdb")
        #expect(parsed.user == nil && parsed.host == nil && parsed.port == nil)
        #expect(parsed.database == "appdb")
        #expect(parsed.schema == "public")
    }

    @Test func aSocketDirectoryIsAHost() throws {
        let parsed = try settings("postgres://app@%2Fvar%2Frun%2Fpostgresql/appdb")
        #expect(parsed.host == "/var/run/postgresql")
        #expect(parsed.database == "appdb")
    }

    @Test func anIPv6AddressIsWrittenInBrackets() throws {
        let parsed = try settings("postgres://app@[::1]:5433/appdb")
        #expect(parsed.host == "::1")
        #expect(parsed.port == 5433)
    }

    @Test func aPasswordInTheURLIsRefusedWithoutRepeatingIt() {
        #expect {
            try settings("postgres://app:hunter2secret@localhost/appdb")
        } throws: { error in
            let message = "\(error)"
            return message.contains("password") && !message.contains("hunter2secret")
        }
    }

    @Test func aPasswordOptionIsRefused() {
        #expect(throws: OfflineSyncError.self) { try settings("postgres://app@localhost/appdb?password=hunter2") }
    }

    @Test func aBadPortSchemaOrSSLModeIsNamed() {
        #expect { try settings("postgres://app@localhost:99999/appdb") } throws: { "\($0)".contains("port") }
        #expect { try settings("postgres://app@localhost/appdb?schema=pg_catalog") } throws: { "\($0)".contains("pg_") }
        #expect { try settings("postgres://app@localhost/appdb?schema=a.b") } throws: { "\($0)".contains("schema") }
        #expect { try settings("postgres://app@localhost/appdb?sslmode=maybe") } throws: { "\($0)".contains("sslmode") }
    }

    @Test func aMissingPasswordVariableIsNamedWhenTheStoreOpens() throws {
        let store = PostgresStore(
            settings: PostgresConnectionSettings(
                host: "127.0.0.1", database: "appdb", passwordEnvironmentVariable: "OFFLINE_SYNC_TEST_UNSET_PASSWORD"))
        #expect {
            try store.open(schema: StoreSchema([]))
        } throws: { "\($0)".contains("OFFLINE_SYNC_TEST_UNSET_PASSWORD") }
    }
}
