import OfflineSync
import OfflineSyncLMDB
import OfflineSyncSQLCipher
import OfflineSyncSQLite
import OfflineSyncStores
import Testing

@Suite("Store configuration strings")
struct StoreConfigurationTests {
    /// A registry of its own with the built-in backends, so schemes other suites register in the
    /// shared one do not show up here.
    static let registry: StoreRegistry = {
        let registry = StoreRegistry()
        BuiltInStores.register(in: registry)
        return registry
    }()

    func parse(_ text: String) throws -> StoreConfiguration {
        try StoreConfiguration(parsing: text, registry: Self.registry)
    }

    @Test func memoryTakesNoPathAndNoOptions() throws {
        let configuration = try parse("memory:")
        #expect(configuration.scheme == "memory")
        #expect(configuration.path == nil)
        #expect(configuration.options.isEmpty)
        #expect(configuration.description == "memory:")
    }

    @Test func sqliteParsesPathAndDurability() throws {
        let configuration = try parse("sqlite:./data/app.sqlite?sync=full")
        #expect(configuration.path == "./data/app.sqlite")
        #expect(try SQLStoreOptions(configuration: configuration).durability == .full)
        #expect(try SQLStoreOptions(configuration: parse("sqlite:/tmp/a.sqlite")).durability == .normal)
    }

    @Test func lmdbParsesSizesAndSyncMode() throws {
        let configuration = try parse("lmdb:/tmp/env?map-size=1GiB&max-map-size=16GiB&sync=meta")
        let options = try LMDBStore.Options(configuration: configuration)
        #expect(configuration.path == "/tmp/env")
        #expect(options.initialMapSize == 1 << 30)
        #expect(options.maximumMapSize == 16 << 30)
        #expect(options.durability == .noMetaSync)
    }

    @Test func sqlcipherNamesWhereTheKeyIs() throws {
        let fromEnvironment = try parse("sqlcipher:/tmp/a.db?key-env=STORE_KEY")
        #expect(try SQLCipherStore.keySource(of: fromEnvironment) == .environment("STORE_KEY"))
        let fromFile = try parse("sqlcipher:/tmp/a.db?key-file=/etc/app.key&sync=full")
        #expect(try SQLCipherStore.keySource(of: fromFile) == .file("/etc/app.key"))
        #expect(try SQLStoreOptions(configuration: fromFile).durability == .full)
    }

    @Test func schemeIsCaseInsensitiveAndDoubleSlashIsAccepted() throws {
        let configuration = try parse("SQLite:///var/db/app.sqlite")
        #expect(configuration.scheme == "sqlite")
        #expect(configuration.path == "/var/db/app.sqlite")
    }

    @Test func percentEscapesAreDecodedAndDescriptionReescapesThem() throws {
        let configuration = try parse("sqlite:/tmp/what%3F.sqlite")
        #expect(configuration.path == "/tmp/what?.sqlite")
        #expect(configuration.description == "sqlite:/tmp/what%3F.sqlite")
        #expect(try parse(configuration.description) == configuration)
    }

    @Test func unknownSchemeListsTheKnownOnes() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("oracle:/tmp/x") }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("unknown store scheme 'oracle'") == true)
        #expect(error?.message.contains("memory:, sqlite:, sqlcipher:, lmdb:") == true)
    }

    @Test func missingSchemeIsExplained() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("./store.sqlite") }
        #expect(error?.message.contains("has no scheme") == true)
    }

    @Test func unknownOptionIsNamedWithTheValidOnes() {
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("lmdb:/tmp/x?mapsize=1GiB")
        }
        #expect(error?.message.contains("no option 'mapsize'") == true)
        #expect(error?.message.contains("map-size, max-map-size, sync") == true)
    }

    @Test func optionOutsideItsValuesListsThem() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("sqlite:/tmp/x?sync=off") }
        #expect(error?.message.contains("must be one of full, normal") == true)
    }

    @Test(arguments: ["key", "passphrase", "password"])
    func inlineKeyIsRefusedWithoutRepeatingIt(option: String) {
        let secret = "hunter2-very-secret"
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("sqlcipher:/tmp/x.db?\(option)=\(secret)")
        }
        #expect(error?.message.contains("'\(option)='") == true)
        #expect(error?.message.contains("key-env") == true)
        #expect(error?.message.contains(secret) == false)
    }

    @Test func anOptionWithoutAValueIsRefusedWithoutRepeatingIt() {
        let secret = "hunter2-very-secret"
        let error = #expect(throws: OfflineSyncError.self) { try parse("sqlcipher:/tmp/x.db?sync=full&\(secret)") }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("option 2 of the store") == true, "\(String(describing: error))")
        #expect(error?.message.contains("NAME=VALUE") == true)
        #expect(error?.message.contains(secret) == false)
    }

    @Test func aStoreWithoutSchemeIsNamedWithoutItsOptions() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("./x.db?key=hunter2-very-secret") }
        #expect(error?.message.contains("'./x.db?…' has no scheme") == true, "\(String(describing: error))")
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test func keyEnvHoldingSomethingOtherThanAVariableNameIsRefusedWithoutRepeatingIt() {
        let key = String(repeating: "ab", count: 32)
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("sqlcipher:/tmp/x.db?key-env=\(key)x-")
        }
        #expect(error?.message.contains(key) == false)
    }

    @Test func sqlcipherWithoutKeySourceSaysHowToGiveOne() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("sqlcipher:/tmp/x.db") }
        #expect(error?.message.contains("key-env=VAR") == true)
        #expect(error?.message.contains("key-file=PATH") == true)
    }

    @Test func sqlcipherWithBothKeySourcesIsRefused() {
        #expect(throws: OfflineSyncError.self) {
            try parse("sqlcipher:/tmp/x.db?key-env=A&key-file=/k")
        }
    }

    @Test(arguments: ["1XB", "GiB", "0", "-5MiB", "99999999999TiB", "1.5GiB"])
    func badSizesAreRefused(size: String) {
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("lmdb:/tmp/x?map-size=\(size)")
        }
        #expect(error?.message.contains("'map-size'") == true)
    }

    @Test func maximumMapSizeBelowInitialIsRefused() {
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("lmdb:/tmp/x?map-size=2GiB&max-map-size=1GiB")
        }
        #expect(error?.message.contains("max-map-size (1 GiB) is smaller than map-size (2 GiB)") == true)
    }

    @Test func sizesAcceptBinaryAndDecimalUnits() throws {
        #expect(try ByteSize.parse("4096") == 4096)
        #expect(try ByteSize.parse("64mib") == 64 << 20)
        #expect(try ByteSize.parse("10MB") == 10_000_000)
        #expect(try ByteSize.parse("2 GiB") == 2 << 30)
    }

    @Test func pathIsRequiredForFileBackends() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("sqlite:") }
        #expect(error?.message.contains("needs a path") == true)
    }

    @Test func memoryRefusesAPath() {
        let error = #expect(throws: OfflineSyncError.self) { try parse("memory:/tmp/x") }
        #expect(error?.message.contains("takes no path") == true)
    }

    @Test func repeatedOptionIsRefused() {
        let error = #expect(throws: OfflineSyncError.self) {
            try parse("sqlite:/tmp/x?sync=full&sync=normal")
        }
        #expect(error?.message.contains("given twice") == true)
    }

    @Test func relocatedKeepsSchemeAndOptions() throws {
        let configuration = try parse("lmdb:/tmp/a?map-size=1GiB")
        #expect(configuration.relocated(to: "/tmp/b").description == "lmdb:/tmp/b?map-size=1GiB")
    }
}
